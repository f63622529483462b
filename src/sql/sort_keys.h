// Normalized sort keys: each row's ORDER BY keys written as one byte string, such that
// memcmp of two rows' strings orders them exactly as RowOrder (sort.h) does and rows with
// equal keys have equal strings. Sorting then compares bytes, mostly a cached 8-byte
// prefix, instead of calling a typed comparator per key (DuckDB's approach).
//
// Per key, in ORDER BY order:
// - a marker byte when any row of the key is NULL: 0x01 for a value; for NULL, 0x00 under
//   NULLS FIRST and 0x02 otherwise (the direction does not move NULLs), then no payload;
// - integers, dates and timestamps big-endian with the sign bit flipped; bool as 0 or 1;
// - floats as their bits, negatives inverted and positives with the sign bit set, after
//   -0.0 becomes 0.0 and every NaN one NaN above +inf (Cmp3's rules);
// - strings and binaries byte by byte with 0x00 written 0x00 0xFF, ended by 0x00 0x00, so
//   that no key's string is a prefix of another's;
// - DESC inverts the payload's bytes (a prefix-free code reverses order when inverted).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "lancelet/array.h"
#include "sql/ast.h"

namespace lancelet::sql {

// Whether every key type has a normalized form (numbers but float16, dates, timestamps,
// bool, strings and binaries; not decimals, lists, structs, intervals, times).
bool HasNormalizedKeys(const std::vector<ArrayPtr>& keys);

// The rows of `keys` (each `rows` long) in ORDER BY `items` order, equal rows in input
// order; with `first`, only the first that many. Requires HasNormalizedKeys(keys).
std::vector<int64_t> NormalizedSortOrder(const std::vector<ArrayPtr>& keys, const std::vector<OrderItem>& items,
                                         int64_t rows, std::optional<int64_t> first);

}  // namespace lancelet::sql
