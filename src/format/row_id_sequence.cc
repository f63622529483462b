#include "format/row_id_sequence.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "lancelet/error.h"
#include "rowids.pb.h"

namespace lancelet::format {

namespace {

using Width = EncodedU64Array::Width;
namespace pb = lance::table;

const char* WidthName(Width width) {
  switch (width) {
    case Width::kU16: return "u16";
    case Width::kU32: return "u32";
    case Width::kU64: return "u64";
  }
  return "?";
}

uint64_t WidthMaxOffset(Width width) {
  switch (width) {
    case Width::kU16: return std::numeric_limits<uint16_t>::max();
    case Width::kU32: return std::numeric_limits<uint32_t>::max();
    case Width::kU64: return std::numeric_limits<uint64_t>::max();
  }
  return 0;
}

// Every value must be base + an offset that fits the width.
void CheckArray(const EncodedU64Array& array, std::string_view what) {
  if (array.width == Width::kU64) {
    if (array.base != 0) ThrowInvalid("{}: a u64 EncodedU64Array has no base (got {})", what, array.base);
    return;
  }
  uint64_t limit = WidthMaxOffset(array.width);
  for (uint64_t v : array.values) {
    if (v < array.base || v - array.base > limit) {
      ThrowInvalid("{}: value {} is not base {} + a {} offset", what, v, array.base,
                   WidthName(array.width));
    }
  }
}

bool IsStrictlyAscending(const std::vector<uint64_t>& values) {
  return std::adjacent_find(values.begin(), values.end(),
                            [](uint64_t a, uint64_t b) { return a >= b; }) == values.end();
}

// Throws Invalid unless positions are strictly ascending and < size.
void CheckPositions(std::span<const uint32_t> positions, uint64_t size, std::string_view what) {
  for (size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] >= size) {
      ThrowInvalid("{}: masked position {} is beyond the {} rows", what, positions[i], size);
    }
    if (i > 0 && positions[i] <= positions[i - 1]) {
      ThrowInvalid("{}: masked positions must be strictly ascending ({} after {})", what,
                   positions[i], positions[i - 1]);
    }
  }
}

void CheckSlice(uint64_t offset, uint64_t len, uint64_t size, std::string_view what) {
  if (offset > size || len > size - offset) {
    ThrowInvalid("{}: slice [{}, {}+{}) is beyond the {} rows", what, offset, offset, len, size);
  }
}

// --- protobuf conversion ---

void ArrayToProto(const EncodedU64Array& array, pb::EncodedU64Array* out) {
  auto pack = [&](auto narrow, std::string* bytes) {
    using T = decltype(narrow);
    bytes->resize(array.values.size() * sizeof(T));
    char* p = bytes->data();
    for (uint64_t v : array.values) {
      T offset = static_cast<T>(v - array.base);
      for (size_t b = 0; b < sizeof(T); ++b) *p++ = static_cast<char>((offset >> (8 * b)) & 0xff);
    }
  };
  switch (array.width) {
    case Width::kU16: {
      auto* a = out->mutable_u16_array();
      a->set_base(array.base);
      pack(uint16_t{}, a->mutable_offsets());
      break;
    }
    case Width::kU32: {
      auto* a = out->mutable_u32_array();
      a->set_base(array.base);
      pack(uint32_t{}, a->mutable_offsets());
      break;
    }
    case Width::kU64:
      pack(uint64_t{}, out->mutable_u64_array()->mutable_values());
      break;
  }
}

void SegmentToProto(const U64Segment& segment, pb::U64Segment* out) {
  switch (segment.kind()) {
    case U64Segment::Kind::kRange: {
      auto* r = out->mutable_range();
      r->set_start(segment.range_start());
      r->set_end(segment.range_end());
      break;
    }
    case U64Segment::Kind::kRangeWithHoles: {
      auto* r = out->mutable_range_with_holes();
      r->set_start(segment.range_start());
      r->set_end(segment.range_end());
      ArrayToProto(segment.array(), r->mutable_holes());
      break;
    }
    case U64Segment::Kind::kRangeWithBitmap: {
      auto* r = out->mutable_range_with_bitmap();
      r->set_start(segment.range_start());
      r->set_end(segment.range_end());
      r->set_bitmap(segment.bitmap());
      break;
    }
    case U64Segment::Kind::kSortedArray:
      ArrayToProto(segment.array(), out->mutable_sorted_array());
      break;
    case U64Segment::Kind::kArray:
      ArrayToProto(segment.array(), out->mutable_array());
      break;
  }
}

EncodedU64Array ArrayFromProto(const pb::EncodedU64Array& proto, const std::string& where) {
  EncodedU64Array array;
  auto unpack = [&](const std::string& bytes, size_t width_bytes, uint64_t base) {
    if (bytes.size() % width_bytes != 0) {
      ThrowCorrupt("{}: {}-byte array data has length {}, not a multiple of {}", where,
                   width_bytes, bytes.size(), width_bytes);
    }
    array.values.resize(bytes.size() / width_bytes);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (uint64_t& v : array.values) {
      uint64_t offset = 0;
      for (size_t b = 0; b < width_bytes; ++b) offset |= uint64_t{*p++} << (8 * b);
      if (offset > std::numeric_limits<uint64_t>::max() - base) {
        ThrowCorrupt("{}: base {} + offset {} overflows u64", where, base, offset);
      }
      v = base + offset;
    }
  };
  switch (proto.array_case()) {
    case pb::EncodedU64Array::kU16Array:
      array.width = Width::kU16;
      array.base = proto.u16_array().base();
      unpack(proto.u16_array().offsets(), 2, array.base);
      break;
    case pb::EncodedU64Array::kU32Array:
      array.width = Width::kU32;
      array.base = proto.u32_array().base();
      unpack(proto.u32_array().offsets(), 4, array.base);
      break;
    case pb::EncodedU64Array::kU64Array:
      array.width = Width::kU64;
      unpack(proto.u64_array().values(), 8, 0);
      break;
    case pb::EncodedU64Array::ARRAY_NOT_SET:
      ThrowCorrupt("{}: EncodedU64Array has no array type set", where);
  }
  return array;
}

U64Segment SegmentFromProto(const pb::U64Segment& proto, const std::string& where) {
  // The explicit constructors report inconsistencies as Invalid; on decode they are Corrupt.
  try {
    switch (proto.segment_case()) {
      case pb::U64Segment::kRange: {
        const auto& r = proto.range();
        if (r.start() > r.end()) {
          ThrowCorrupt("{}: range start {} is after end {}", where, r.start(), r.end());
        }
        return U64Segment::Range(r.start(), r.end());
      }
      case pb::U64Segment::kRangeWithHoles: {
        const auto& r = proto.range_with_holes();
        if (!r.has_holes()) ThrowCorrupt("{}: RangeWithHoles has no holes array", where);
        return U64Segment::RangeWithHoles(r.start(), r.end(), ArrayFromProto(r.holes(), where));
      }
      case pb::U64Segment::kRangeWithBitmap: {
        const auto& r = proto.range_with_bitmap();
        return U64Segment::RangeWithBitmap(r.start(), r.end(), r.bitmap());
      }
      case pb::U64Segment::kSortedArray:
        return U64Segment::SortedArray(ArrayFromProto(proto.sorted_array(), where));
      case pb::U64Segment::kArray:
        return U64Segment::Array(ArrayFromProto(proto.array(), where));
      case pb::U64Segment::SEGMENT_NOT_SET:
        break;
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidArgument) throw;
    ThrowCorrupt("{}", e.what());
  }
  ThrowCorrupt("{}: U64Segment has no segment type set", where);
}

// Number of values from the start of a RangeWithBitmap, i.e. its set bits below `bits`.
uint64_t CountBits(const std::string& bitmap, uint64_t bits) {
  uint64_t count = 0;
  uint64_t full_bytes = bits / 8;
  for (uint64_t i = 0; i < full_bytes; ++i) {
    count += std::popcount(static_cast<unsigned char>(bitmap[i]));
  }
  if (bits % 8 != 0) {
    auto mask = static_cast<unsigned char>((1u << (bits % 8)) - 1);
    count += std::popcount(static_cast<unsigned char>(bitmap[full_bytes] & mask));
  }
  return count;
}

}  // namespace

// --- EncodedU64Array ---

EncodedU64Array EncodedU64Array::Narrowest(std::vector<uint64_t> values) {
  EncodedU64Array array;
  if (values.empty()) return array;
  auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  uint64_t min = *min_it;
  uint64_t spread = *max_it - min;
  if (spread <= WidthMaxOffset(Width::kU16)) {
    array.width = Width::kU16;
    array.base = min;
  } else if (spread <= WidthMaxOffset(Width::kU32)) {
    array.width = Width::kU32;
    array.base = min;
  }
  array.values = std::move(values);
  return array;
}

// --- U64Segment ---

U64Segment U64Segment::Range(uint64_t start, uint64_t end) {
  if (start > end) ThrowInvalid("U64Segment range start {} is after end {}", start, end);
  U64Segment s;
  s.kind_ = Kind::kRange;
  s.start_ = start;
  s.end_ = end;
  s.size_ = end - start;
  return s;
}

U64Segment U64Segment::RangeWithHoles(uint64_t start, uint64_t end, EncodedU64Array holes) {
  if (start > end) ThrowInvalid("RangeWithHoles start {} is after end {}", start, end);
  CheckArray(holes, "RangeWithHoles holes");
  if (!IsStrictlyAscending(holes.values)) {
    ThrowInvalid("RangeWithHoles holes are not strictly ascending");
  }
  if (!holes.values.empty() && (holes.values.front() < start || holes.values.back() >= end)) {
    ThrowInvalid("RangeWithHoles holes [{}..{}] are not within [{}, {})", holes.values.front(),
                 holes.values.back(), start, end);
  }
  U64Segment s;
  s.kind_ = Kind::kRangeWithHoles;
  s.start_ = start;
  s.end_ = end;
  s.size_ = end - start - holes.values.size();
  s.array_ = std::move(holes);
  return s;
}

U64Segment U64Segment::RangeWithBitmap(uint64_t start, uint64_t end, std::string bitmap) {
  if (start > end) ThrowInvalid("RangeWithBitmap start {} is after end {}", start, end);
  uint64_t slots = end - start;
  uint64_t expected_bytes = slots / 8 + (slots % 8 != 0);
  if (bitmap.size() != expected_bytes) {
    ThrowInvalid("RangeWithBitmap over {} values needs {} bitmap bytes, got {}", slots,
                 expected_bytes, bitmap.size());
  }
  if (slots % 8 != 0 &&
      (static_cast<unsigned char>(bitmap.back()) >> (slots % 8)) != 0) {
    ThrowInvalid("RangeWithBitmap has bits set past its {} values", slots);
  }
  U64Segment s;
  s.kind_ = Kind::kRangeWithBitmap;
  s.start_ = start;
  s.end_ = end;
  s.size_ = CountBits(bitmap, slots);
  s.bitmap_ = std::move(bitmap);
  return s;
}

U64Segment U64Segment::SortedArray(EncodedU64Array values) {
  CheckArray(values, "SortedArray");
  U64Segment s;
  s.kind_ = Kind::kSortedArray;
  s.size_ = values.values.size();
  s.array_ = std::move(values);
  return s;
}

U64Segment U64Segment::Array(EncodedU64Array values) {
  CheckArray(values, "Array");
  U64Segment s;
  s.kind_ = Kind::kArray;
  s.size_ = values.values.size();
  s.array_ = std::move(values);
  return s;
}

U64Segment U64Segment::FromValues(std::vector<uint64_t> values) {
  if (values.empty()) return Range(0, 0);
  uint64_t min = values.front();
  uint64_t max = values.front();
  bool sorted = true;
  bool duplicates = false;
  for (size_t i = 1; i < values.size(); ++i) {
    uint64_t v = values[i];
    if (v < max) sorted = false;
    if (v == max) duplicates = true;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  if (!sorted) return Array(EncodedU64Array::Narrowest(std::move(values)));
  // Range kinds cannot represent repeated values or an exclusive end past u64::MAX.
  if (duplicates || max == std::numeric_limits<uint64_t>::max()) {
    return SortedArray(EncodedU64Array::Narrowest(std::move(values)));
  }
  using Wide = unsigned __int128;
  Wide slots = Wide{max} - min + 1;
  Wide count = values.size();
  Wide holes = slots - count;
  if (holes == 0) return Range(min, max + 1);

  Wide holes_size = 24 + 4 * holes;
  Wide bitmap_size = 24 + (slots + 7) / 8;
  Wide sorted_size = 24 + 2 * count;
  Wide smallest = std::min({holes_size, bitmap_size, sorted_size});
  if (smallest == holes_size) {
    std::vector<uint64_t> missing;
    missing.reserve(static_cast<size_t>(holes));
    uint64_t next = min;
    for (uint64_t v : values) {
      for (; next < v; ++next) missing.push_back(next);
      next = v + 1;
    }
    return RangeWithHoles(min, max + 1, EncodedU64Array::Narrowest(std::move(missing)));
  }
  if (smallest == bitmap_size) {
    uint64_t len = max - min + 1;
    std::string bitmap(len / 8 + (len % 8 != 0), '\0');
    for (uint64_t v : values) {
      uint64_t bit = v - min;
      bitmap[bit / 8] = static_cast<char>(bitmap[bit / 8] | (1u << (bit % 8)));
    }
    return RangeWithBitmap(min, max + 1, std::move(bitmap));
  }
  return SortedArray(EncodedU64Array::Narrowest(std::move(values)));
}

bool U64Segment::BitSet(uint64_t i) const {
  return (static_cast<unsigned char>(bitmap_[i / 8]) >> (i % 8)) & 1;
}

uint64_t U64Segment::Get(uint64_t i) const {
  if (i >= size_) ThrowInvalid("row position {} is beyond the segment's {} values", i, size_);
  switch (kind_) {
    case Kind::kRange:
      return start_ + i;
    case Kind::kRangeWithHoles: {
      // The i-th value is start + i + k where k = number of holes below it; holes[k] - k
      // is non-decreasing, so k is the first index with holes[k] - k > start + i.
      const auto& holes = array_.values;
      uint64_t target = start_ + i;
      size_t lo = 0;
      size_t hi = holes.size();
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (holes[mid] - mid > target) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      return target + lo;
    }
    case Kind::kRangeWithBitmap: {
      uint64_t remaining = i;
      for (size_t byte = 0; byte < bitmap_.size(); ++byte) {
        auto bits = static_cast<unsigned char>(bitmap_[byte]);
        uint64_t ones = std::popcount(bits);
        if (remaining < ones) {
          for (unsigned b = 0; b < 8; ++b) {
            if ((bits >> b) & 1) {
              if (remaining == 0) return start_ + byte * 8 + b;
              --remaining;
            }
          }
        }
        remaining -= ones;
      }
      break;
    }
    case Kind::kSortedArray:
    case Kind::kArray:
      return array_.values[i];
  }
  ThrowCorrupt("row id bitmap segment lost value {}", i);  // unreachable: size_ counts bits
}

void U64Segment::AppendTo(std::vector<uint64_t>& out) const {
  out.reserve(out.size() + size_);
  switch (kind_) {
    case Kind::kRange:
      for (uint64_t v = start_; v < end_; ++v) out.push_back(v);
      break;
    case Kind::kRangeWithHoles: {
      auto hole = array_.values.begin();
      for (uint64_t v = start_; v < end_; ++v) {
        if (hole != array_.values.end() && *hole == v) {
          ++hole;
        } else {
          out.push_back(v);
        }
      }
      break;
    }
    case Kind::kRangeWithBitmap:
      for (uint64_t i = 0; i < end_ - start_; ++i) {
        if (BitSet(i)) out.push_back(start_ + i);
      }
      break;
    case Kind::kSortedArray:
    case Kind::kArray:
      out.insert(out.end(), array_.values.begin(), array_.values.end());
      break;
  }
}

std::vector<uint64_t> U64Segment::ToVector() const {
  std::vector<uint64_t> out;
  AppendTo(out);
  return out;
}

U64Segment U64Segment::Slice(uint64_t offset, uint64_t len) const {
  CheckSlice(offset, len, size_, "U64Segment");
  if (len == 0) return Range(0, 0);
  // A contiguous piece always re-encodes as a Range; skip materializing it.
  if (kind_ == Kind::kRange) return Range(start_ + offset, start_ + offset + len);
  std::vector<uint64_t> all = ToVector();
  return FromValues(std::vector<uint64_t>(all.begin() + offset, all.begin() + offset + len));
}

void U64Segment::Mask(std::span<const uint32_t> positions) {
  CheckPositions(positions, size_, "U64Segment");
  if (positions.empty()) return;
  if (positions.size() == size_) {
    *this = Range(0, 0);
    return;
  }
  std::vector<uint64_t> all = ToVector();
  std::vector<uint64_t> kept;
  kept.reserve(all.size() - positions.size());
  size_t next = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (next < positions.size() && positions[next] == i) {
      ++next;
    } else {
      kept.push_back(all[i]);
    }
  }
  // The reference keeps an Array an Array even if what remains is sorted.
  *this = kind_ == Kind::kArray ? Array(EncodedU64Array::Narrowest(std::move(kept)))
                                : FromValues(std::move(kept));
}

// --- shared helpers for the two sequence types ---

namespace {

// Splits global ascending positions into per-part local positions and applies `mask`
// to each part that has any. `sizes[i]` is the size of part i before masking.
template <typename MaskPart>
void MaskParts(const std::vector<uint64_t>& sizes, std::span<const uint32_t> positions,
               MaskPart&& mask) {
  size_t next = 0;
  uint64_t offset = 0;
  std::vector<uint32_t> local;
  for (size_t part = 0; part < sizes.size(); ++part) {
    uint64_t cutoff = offset + sizes[part];
    local.clear();
    while (next < positions.size() && positions[next] < cutoff) {
      local.push_back(static_cast<uint32_t>(positions[next] - offset));
      ++next;
    }
    if (!local.empty()) mask(part, std::span<const uint32_t>(local));
    offset = cutoff;
  }
}

}  // namespace

// --- RowIdSequence ---

RowIdSequence::RowIdSequence(std::vector<U64Segment> segments) : segments_(std::move(segments)) {}

RowIdSequence RowIdSequence::FromRange(uint64_t start, uint64_t end) {
  return RowIdSequence({U64Segment::Range(start, end)});
}

RowIdSequence RowIdSequence::FromValues(std::vector<uint64_t> ids) {
  return RowIdSequence({U64Segment::FromValues(std::move(ids))});
}

RowIdSequence RowIdSequence::Decode(std::string_view bytes, std::string_view context) {
  pb::RowIdSequence proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    ThrowCorrupt("{}: {} bytes are not a RowIdSequence protobuf", context, bytes.size());
  }
  std::vector<U64Segment> segments;
  segments.reserve(proto.segments_size());
  for (int i = 0; i < proto.segments_size(); ++i) {
    segments.push_back(
        SegmentFromProto(proto.segments(i), fmt::format("{}: row id segment {}", context, i)));
  }
  return RowIdSequence(std::move(segments));
}

std::string RowIdSequence::Encode() const {
  pb::RowIdSequence proto;
  for (const U64Segment& segment : segments_) SegmentToProto(segment, proto.add_segments());
  return proto.SerializeAsString();
}

uint64_t RowIdSequence::size() const {
  // Saturates: decoded segments may claim sizes whose sum wraps, which must not compare
  // equal to a fragment's row count.
  uint64_t total = 0;
  for (const U64Segment& segment : segments_)
    if (__builtin_add_overflow(total, segment.size(), &total)) return UINT64_MAX;
  return total;
}

uint64_t RowIdSequence::Get(uint64_t i) const {
  uint64_t offset = 0;
  for (const U64Segment& segment : segments_) {
    if (i - offset < segment.size()) return segment.Get(i - offset);
    offset += segment.size();
  }
  ThrowInvalid("row position {} is beyond the row id sequence's {} rows", i, offset);
}

std::vector<uint64_t> RowIdSequence::ToVector() const {
  std::vector<uint64_t> out;
  out.reserve(size());
  for (const U64Segment& segment : segments_) segment.AppendTo(out);
  return out;
}

RowIdSequence RowIdSequence::Slice(uint64_t offset, uint64_t len) const {
  CheckSlice(offset, len, size(), "RowIdSequence");
  RowIdSequence out;
  for (const U64Segment& segment : segments_) {
    if (len == 0) break;
    if (offset >= segment.size()) {
      offset -= segment.size();
      continue;
    }
    uint64_t take = std::min(len, segment.size() - offset);
    out.Extend(RowIdSequence({segment.Slice(offset, take)}));
    len -= take;
    offset = 0;
  }
  return out;
}

void RowIdSequence::Extend(RowIdSequence other) {
  auto next = other.segments_.begin();
  if (!segments_.empty() && next != other.segments_.end()) {
    U64Segment& last = segments_.back();
    if (last.kind() == U64Segment::Kind::kRange && next->kind() == U64Segment::Kind::kRange &&
        last.range_end() == next->range_start()) {
      last = U64Segment::Range(last.range_start(), next->range_end());
      ++next;
    }
  }
  segments_.insert(segments_.end(), std::make_move_iterator(next),
                   std::make_move_iterator(other.segments_.end()));
}

void RowIdSequence::Mask(std::span<const uint32_t> positions) {
  CheckPositions(positions, size(), "RowIdSequence");
  std::vector<uint64_t> sizes;
  for (const U64Segment& segment : segments_) sizes.push_back(segment.size());
  MaskParts(sizes, positions,
            [&](size_t part, std::span<const uint32_t> local) { segments_[part].Mask(local); });
  std::erase_if(segments_, [](const U64Segment& segment) { return segment.empty(); });
}

// --- VersionSequence ---

VersionSequence VersionSequence::Uniform(uint64_t row_count, uint64_t version) {
  if (row_count == 0) return VersionSequence();
  return VersionSequence({Run{U64Segment::Range(0, row_count), version}});
}

VersionSequence VersionSequence::FromVersions(std::span<const uint64_t> versions) {
  std::vector<Run> runs;
  uint64_t run_start = 0;
  for (uint64_t i = 1; i <= versions.size(); ++i) {
    if (i == versions.size() || versions[i] != versions[i - 1]) {
      runs.push_back(Run{U64Segment::Range(run_start, i), versions[i - 1]});
      run_start = i;
    }
  }
  return VersionSequence(std::move(runs));
}

VersionSequence VersionSequence::Decode(std::string_view bytes, std::string_view context) {
  pb::RowDatasetVersionSequence proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    ThrowCorrupt("{}: {} bytes are not a RowDatasetVersionSequence protobuf", context,
                 bytes.size());
  }
  std::vector<Run> runs;
  runs.reserve(proto.runs_size());
  for (int i = 0; i < proto.runs_size(); ++i) {
    const auto& run = proto.runs(i);
    std::string where = fmt::format("{}: version run {}", context, i);
    if (!run.has_span()) ThrowCorrupt("{}: run has no span", where);
    runs.push_back(Run{SegmentFromProto(run.span(), where), run.version()});
  }
  return VersionSequence(std::move(runs));
}

std::string VersionSequence::Encode() const {
  pb::RowDatasetVersionSequence proto;
  for (const Run& run : runs_) {
    auto* out = proto.add_runs();
    SegmentToProto(run.span, out->mutable_span());
    out->set_version(run.version);
  }
  return proto.SerializeAsString();
}

uint64_t VersionSequence::size() const {
  uint64_t total = 0;  // saturating, as RowIdSequence::size
  for (const Run& run : runs_)
    if (__builtin_add_overflow(total, run.span.size(), &total)) return UINT64_MAX;
  return total;
}

uint64_t VersionSequence::VersionAt(uint64_t i) const {
  uint64_t offset = 0;
  for (const Run& run : runs_) {
    if (i - offset < run.span.size()) return run.version;
    offset += run.span.size();
  }
  ThrowInvalid("row position {} is beyond the version sequence's {} rows", i, offset);
}

std::vector<uint64_t> VersionSequence::ToVector() const {
  std::vector<uint64_t> out;
  out.reserve(size());
  for (const Run& run : runs_) out.insert(out.end(), run.span.size(), run.version);
  return out;
}

VersionSequence VersionSequence::Slice(uint64_t offset, uint64_t len) const {
  CheckSlice(offset, len, size(), "VersionSequence");
  std::vector<Run> out;
  for (const Run& run : runs_) {
    if (len == 0) break;
    if (offset >= run.span.size()) {
      offset -= run.span.size();
      continue;
    }
    uint64_t take = std::min(len, run.span.size() - offset);
    out.push_back(Run{run.span.Slice(offset, take), run.version});
    len -= take;
    offset = 0;
  }
  return VersionSequence(std::move(out));
}

void VersionSequence::Extend(VersionSequence other) {
  runs_.insert(runs_.end(), std::make_move_iterator(other.runs_.begin()),
               std::make_move_iterator(other.runs_.end()));
}

void VersionSequence::Mask(std::span<const uint32_t> positions) {
  CheckPositions(positions, size(), "VersionSequence");
  std::vector<uint64_t> sizes;
  for (const Run& run : runs_) sizes.push_back(run.span.size());
  MaskParts(sizes, positions,
            [&](size_t part, std::span<const uint32_t> local) { runs_[part].span.Mask(local); });
  std::erase_if(runs_, [](const Run& run) { return run.span.empty(); });
}

}  // namespace lancelet::format
