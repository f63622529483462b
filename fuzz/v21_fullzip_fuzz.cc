// Fuzz target: file 2.1 / 2.2 FullZipLayout pages (bits_def, bits_per_offset /
// bits_per_value, the u32 repetition index) of one field, in the field-harness input format.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzV21FullZip(const uint8_t* data, size_t size) { return RunFieldHarness(data, size, /*v20=*/false, LayoutFilter::kFullZip); }
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzV21FullZip(data, size); }
#endif
