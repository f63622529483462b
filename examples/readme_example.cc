#include <iostream>

#include "lancelet/dataset.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto ds = lancelet::Dataset::Open(argv[1]);
  std::cout << "version " << ds->version() << ", " << ds->CountRows() << " rows\n";
  auto reader = ds->NewScan().Columns({"id"}).Filter("id > 2").Limit(10).Open();
  while (auto batch = reader->Next()) std::cout << batch->num_rows() << " rows in a batch\n";
  auto ds2 = ds->Delete("id = 3");  // a new version; ds still reads the old one
  std::cout << "now version " << ds2->version() << "\n";
}
