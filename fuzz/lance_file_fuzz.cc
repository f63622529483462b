// Fuzz target: the Lance file container. The input is a whole data file: footer, offset
// tables, column metadata, the FileDescriptor schema; then every field is read (when its
// row count is small enough) and a few rows are taken.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzLanceFile(const uint8_t* data, size_t size) {
  try {
    MemoryStore store;
    store.Add("fuzz.lance", std::string(reinterpret_cast<const char*>(data), size));
    auto reader = format::LanceFileReader::Open(store, "fuzz.lance");
    for (size_t f = 0; f < reader->schema().fields().size(); ++f) {
      const uint64_t rows = reader->num_rows(f);
      if (rows == 0 || rows > kMaxRowsRead) continue;
      ValidateArray(*reader->ReadField(f, 0, rows), "fuzz read");
      const uint64_t picks[] = {rows - 1, 0, rows / 2};
      ValidateArray(*reader->TakeField(f, picks), "fuzz take");
    }
  } catch (const Error&) {
  }
  return 0;
}
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lancelet::fuzz::FuzzLanceFile(data, size);
}
#endif
