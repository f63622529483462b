// Fuzz target: file 2.1 / 2.2 pages of any layout (mini-block, full-zip, all-null,
// constant, blob) of one field, in the field-harness input format.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzV21Layout(const uint8_t* data, size_t size) { return RunFieldHarness(data, size, /*v20=*/false, LayoutFilter::kAny); }
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzV21Layout(data, size); }
#endif
