// Row id sequences and per-row version sequences of one fragment.
//
// Both are stored in DataFragment as serialized protobuf messages from rowids.proto:
// a RowIdSequence is a list of U64Segments holding the stable row id of every physical
// row in row order; a RowDatasetVersionSequence is a list of runs, each a U64Segment
// "span" over row offsets paired with the dataset version shared by those rows (used for
// created_at / last_updated_at).
//
// Segment choice follows the reference writer exactly, so that sequences we build encode
// to the same bytes:
//   unsorted values                    -> Array
//   sorted, no gaps                    -> Range
//   sorted with gaps                   -> the smallest of RangeWithHoles (24 + 4*holes),
//                                         RangeWithBitmap (24 + ceil(slots/8)) and
//                                         SortedArray (24 + 2*count), ties in that order.
// Arrays use the narrowest EncodedU64Array: u16 or u32 offsets from base = min when
// max - min fits, plain u64 otherwise. Decoded segments keep their on-disk width and
// base, so decode + encode reproduces the input bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lancelet::format {

// A u64 array with its storage width: value[i] = base + offset[i] for the u16/u32
// widths; base is 0 and unused for u64.
struct EncodedU64Array {
  enum class Width : uint8_t { kU16, kU32, kU64 };
  Width width = Width::kU64;
  uint64_t base = 0;
  std::vector<uint64_t> values;  // decoded values

  // Narrowest width for these values, base = min (the reference's choice).
  static EncodedU64Array Narrowest(std::vector<uint64_t> values);
  bool operator==(const EncodedU64Array&) const = default;
};

class U64Segment {
 public:
  enum class Kind : uint8_t { kRange, kRangeWithHoles, kRangeWithBitmap, kSortedArray, kArray };

  U64Segment() = default;  // the empty range [0, 0)
  static U64Segment Range(uint64_t start, uint64_t end);
  // Picks the encoding the reference would pick for these values (see file comment).
  static U64Segment FromValues(std::vector<uint64_t> values);
  // Explicit constructions, used when decoding and in tests. Throw Invalid on
  // inconsistent arguments (holes outside the range, wrong bitmap length, ...).
  static U64Segment RangeWithHoles(uint64_t start, uint64_t end, EncodedU64Array holes);
  static U64Segment RangeWithBitmap(uint64_t start, uint64_t end, std::string bitmap);
  static U64Segment SortedArray(EncodedU64Array values);
  static U64Segment Array(EncodedU64Array values);

  Kind kind() const { return kind_; }
  // For the three range kinds: the covered range [start, end).
  uint64_t range_start() const { return start_; }
  uint64_t range_end() const { return end_; }
  // RangeWithHoles: the missing values (absolute, ascending). Arrays: the values.
  const EncodedU64Array& array() const { return array_; }
  // RangeWithBitmap: bit i (LSB-first within each byte) set = start + i is present.
  const std::string& bitmap() const { return bitmap_; }

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th value; throws Invalid when i >= size().
  uint64_t Get(uint64_t i) const;
  void AppendTo(std::vector<uint64_t>& out) const;
  std::vector<uint64_t> ToVector() const;
  // Values [offset, offset + len), re-encoded as the reference does.
  U64Segment Slice(uint64_t offset, uint64_t len) const;
  // Removes the values at the given positions (strictly ascending, < size()) and
  // re-encodes like the reference: an Array stays an Array; other kinds re-pick.
  void Mask(std::span<const uint32_t> positions);

  bool operator==(const U64Segment&) const = default;

 private:
  bool BitSet(uint64_t i) const;

  Kind kind_ = Kind::kRange;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  EncodedU64Array array_;
  std::string bitmap_;
  uint64_t size_ = 0;
};

class RowIdSequence {
 public:
  RowIdSequence() = default;
  explicit RowIdSequence(std::vector<U64Segment> segments);
  // One Range segment [start, end) (kept even when empty, as the reference does).
  static RowIdSequence FromRange(uint64_t start, uint64_t end);
  // One segment holding `ids` in order, encoded as the reference would.
  static RowIdSequence FromValues(std::vector<uint64_t> ids);

  // Parses a serialized RowIdSequence; throws Corrupt naming `context` (e.g. "fragment 3
  // row ids") when the bytes are malformed.
  static RowIdSequence Decode(std::string_view bytes, std::string_view context);
  std::string Encode() const;

  const std::vector<U64Segment>& segments() const { return segments_; }
  // Total ids; UINT64_MAX when the segments' sizes overflow (only a corrupt file).
  uint64_t size() const;
  bool empty() const { return size() == 0; }
  // The row id at position i; throws Invalid when i >= size().
  uint64_t Get(uint64_t i) const;
  std::vector<uint64_t> ToVector() const;
  // Row ids at positions [offset, offset + len): every touched segment is re-encoded
  // from its values (as the reference's rechunking does) and adjacent ranges merge.
  // Throws Invalid if the slice exceeds size().
  RowIdSequence Slice(uint64_t offset, uint64_t len) const;
  // Appends `other`, merging a trailing Range with a leading Range when they touch.
  void Extend(RowIdSequence other);
  // Removes the rows at the given positions (deleted offsets; strictly ascending and
  // < size(), else Invalid). Emptied segments are dropped.
  void Mask(std::span<const uint32_t> positions);

  bool operator==(const RowIdSequence&) const = default;

 private:
  std::vector<U64Segment> segments_;
};

// created_at / last_updated_at versions of a fragment's rows.
class VersionSequence {
 public:
  struct Run {
    U64Segment span;  // row offsets covered; only its size() matters for lookups
    uint64_t version = 0;
    bool operator==(const Run&) const = default;
  };

  VersionSequence() = default;
  explicit VersionSequence(std::vector<Run> runs) : runs_(std::move(runs)) {}
  // One run [0, row_count) at `version`; no runs when row_count is 0.
  static VersionSequence Uniform(uint64_t row_count, uint64_t version);
  // Run-length encodes one version per row; each run's span is the Range of its offsets.
  static VersionSequence FromVersions(std::span<const uint64_t> versions);

  // Parses a serialized RowDatasetVersionSequence; throws Corrupt naming `context`.
  static VersionSequence Decode(std::string_view bytes, std::string_view context);
  std::string Encode() const;

  const std::vector<Run>& runs() const { return runs_; }
  uint64_t size() const;
  // The version of the row at position i; throws Invalid when i >= size().
  uint64_t VersionAt(uint64_t i) const;
  std::vector<uint64_t> ToVector() const;
  // Rows [offset, offset + len); each touched run's span is re-encoded (as the
  // reference's rechunking does). Throws Invalid if the slice exceeds size().
  VersionSequence Slice(uint64_t offset, uint64_t len) const;
  // Appends the runs of `other` unchanged (runs are never merged, like the reference).
  void Extend(VersionSequence other);
  // Removes the rows at the given positions, like RowIdSequence::Mask.
  void Mask(std::span<const uint32_t> positions);

  bool operator==(const VersionSequence&) const = default;

 private:
  std::vector<Run> runs_;
};

}  // namespace lancelet::format
