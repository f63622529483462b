// Fuzz target: file 2.1 / 2.2 MiniBlockLayout pages (chunk metadata, rep/def levels,
// dictionary, repetition index) of one field, in the field-harness input format.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzV21MiniBlock(const uint8_t* data, size_t size) { return RunFieldHarness(data, size, /*v20=*/false, LayoutFilter::kMiniBlock); }
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzV21MiniBlock(data, size); }
#endif
