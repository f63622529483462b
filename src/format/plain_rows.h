// Fixed-width rows read straight into the buffer their array keeps.
//
// Ints, floats, dates, timestamps, fixed_size_binary, and fixed_size_lists of those are
// stored (2.0 Flat pages; 2.1+ pages without levels) as each row's bytes back to back when
// nothing in them is null. A scan of such a field can read the bytes of all its pages in
// the requested range into one buffer and wrap it as the array: no page-sized temporary
// strings, no per-page arrays, no concatenation. The general decoders stay the reference
// for what such pages mean; this is only a faster route to the same array.
#pragma once

#include <cstdint>

#include "lancelet/array.h"

namespace lancelet::format {

// Bytes per row when `type` is stored as plain fixed-width bytes (see above); 0 for every
// other type (bool is bit-packed; nested fixed_size_lists are left to the general path).
uint64_t PlainRowBytes(const DataType& type);

// The array of `length` rows of `type`, none of them null, whose bytes are `values`
// (PlainRowBytes(type) per row). Its shape is the one the general decoders build:
// buffers {null, values}, or for a fixed_size_list buffers {null} and one child of
// length * dimension items holding `values`.
ArrayPtr MakePlainArray(const TypePtr& type, int64_t length, BufferPtr values);

}  // namespace lancelet::format
