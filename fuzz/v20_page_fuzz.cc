// Fuzz target: file 2.0 pages (ArrayEncoding: Flat, Nullable, Binary, Dictionary, List, FixedSizeList,
// SimpleStruct, PackedStruct, Bitpacked, Fsst, buffer compression) of one field, in the
// field-harness input format of fuzz_support.h.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzV20Page(const uint8_t* data, size_t size) { return RunFieldHarness(data, size, /*v20=*/true, LayoutFilter::kAny); }
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return lancelet::fuzz::FuzzV20Page(data, size); }
#endif
