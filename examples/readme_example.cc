#include <iostream>

#include "lancelet/dataset.h"
#include "lancelet/error.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    auto ds = lancelet::Dataset::Open(argv[1]);  // kNotFound when there is no dataset
    std::cout << "version " << ds->version() << ", " << ds->CountRows() << " rows\n";
    auto reader = ds->NewScan().Columns({"id"}).Filter("id > 2").Limit(10).Open();
    while (auto batch = reader->Next()) std::cout << batch->num_rows() << " rows in a batch\n";
    auto ds2 = ds->Delete("id = 3");  // a new version; ds still reads the old one
    std::cout << "now version " << ds2->version() << "\n";
  } catch (const lancelet::Error& e) {  // every failure: a kind and a one-line message
    std::cerr << lancelet::ErrorKindName(e.kind()) << ": " << e.what() << "\n";
    return 1;
  }
}
