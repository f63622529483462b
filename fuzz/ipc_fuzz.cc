// Fuzz target: the Arrow IPC reader (stream and file formats, compressed bodies). Every
// batch it returns must satisfy the array invariants.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"
#include "lancelet/ipc.h"

namespace lancelet::fuzz {
inline int FuzzIpc(const uint8_t* data, size_t size) {
  try {
    auto reader = ReadIpc(std::string(reinterpret_cast<const char*>(data), size), "fuzz.arrow");
    for (auto batch = reader->Next(); batch; batch = reader->Next())
      for (const auto& column : batch->columns()) ValidateArray(*column, "fuzz ipc");
  } catch (const Error&) {
  }
  return 0;
}
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzIpc(data, size); }
#endif
