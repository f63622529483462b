#include "format/roaring_bitmap.h"

#include <algorithm>

#include <roaring/roaring.h>

#include <new>
#include <utility>

#include "lancelet/error.h"

namespace lancelet::format {

namespace {

roaring_bitmap_t* CheckedCreate(roaring_bitmap_t* bitmap) {
  if (bitmap == nullptr) throw std::bad_alloc();
  return bitmap;
}

}  // namespace

RoaringBitmap::RoaringBitmap() : bitmap_(CheckedCreate(roaring_bitmap_create())) {}

RoaringBitmap::RoaringBitmap(roaring_bitmap_s* owned) : bitmap_(CheckedCreate(owned)) {}

RoaringBitmap::~RoaringBitmap() {
  if (bitmap_ != nullptr) roaring_bitmap_free(bitmap_);
}

RoaringBitmap::RoaringBitmap(const RoaringBitmap& other)
    : bitmap_(CheckedCreate(roaring_bitmap_copy(other.bitmap_))) {}

RoaringBitmap& RoaringBitmap::operator=(const RoaringBitmap& other) {
  if (this != &other) {
    RoaringBitmap copy(other);
    std::swap(bitmap_, copy.bitmap_);
  }
  return *this;
}

// A moved-from bitmap gets a fresh empty bitmap, so every object always owns one.
RoaringBitmap::RoaringBitmap(RoaringBitmap&& other) noexcept : bitmap_(other.bitmap_) {
  other.bitmap_ = roaring_bitmap_create();
}

RoaringBitmap& RoaringBitmap::operator=(RoaringBitmap&& other) noexcept {
  std::swap(bitmap_, other.bitmap_);
  return *this;
}

RoaringBitmap RoaringBitmap::FromValues(std::span<const uint32_t> values) {
  RoaringBitmap bitmap;
  bitmap.AddMany(values);
  return bitmap;
}

RoaringBitmap RoaringBitmap::FromRange(uint64_t start, uint64_t end) {
  RoaringBitmap bitmap;
  bitmap.AddRange(start, end);
  return bitmap;
}

void RoaringBitmap::Add(uint32_t value) { roaring_bitmap_add(bitmap_, value); }

void RoaringBitmap::AddMany(std::span<const uint32_t> values) {
  if (!values.empty()) roaring_bitmap_add_many(bitmap_, values.size(), values.data());
}

void RoaringBitmap::AddRange(uint64_t start, uint64_t end) {
  if (start > end || end > (uint64_t{1} << 32)) {
    ThrowInvalid("roaring bitmap range [{}, {}) is not within [0, 2^32)", start, end);
  }
  if (start < end) roaring_bitmap_add_range(bitmap_, start, end);
}

void RoaringBitmap::Remove(uint32_t value) { roaring_bitmap_remove(bitmap_, value); }

bool RoaringBitmap::Contains(uint32_t value) const {
  return roaring_bitmap_contains(bitmap_, value);
}

uint64_t RoaringBitmap::Cardinality() const { return roaring_bitmap_get_cardinality(bitmap_); }

bool RoaringBitmap::IsEmpty() const { return roaring_bitmap_is_empty(bitmap_); }

// roaring_bitmap_rank counts members <= x; we want members < x.
uint64_t RoaringBitmap::PortableSizeInBytes() const { return roaring_bitmap_portable_size_in_bytes(bitmap_); }

uint64_t RoaringBitmap::Rank(uint32_t value) const {
  return value == 0 ? 0 : roaring_bitmap_rank(bitmap_, value - 1);
}

void RoaringBitmap::MembersByRank(uint64_t first_rank, size_t count, uint32_t* out) const {
  if (count == 0) return;
  if (first_rank + count > Cardinality() ||
      !roaring_bitmap_range_uint32_array(bitmap_, size_t(first_rank), count, out))
    ThrowInvalid("members of rank [{}, {}) requested from a bitmap of {} members", first_rank, first_rank + count,
                 Cardinality());
}

uint32_t RoaringBitmap::Min() const {
  if (IsEmpty()) ThrowInvalid("Min() of an empty roaring bitmap");
  return roaring_bitmap_minimum(bitmap_);
}

uint32_t RoaringBitmap::Max() const {
  if (IsEmpty()) ThrowInvalid("Max() of an empty roaring bitmap");
  return roaring_bitmap_maximum(bitmap_);
}

std::vector<uint32_t> RoaringBitmap::ToVector() const {
  std::vector<uint32_t> values(Cardinality());
  if (!values.empty()) roaring_bitmap_to_uint32_array(bitmap_, values.data());
  return values;
}

std::vector<RoaringBitmap::Run> RoaringBitmap::Runs() const {
  std::vector<Run> runs;
  ForEachRun([&](const Run& run) { runs.push_back(run); });
  return runs;
}

void RoaringBitmap::VisitChunksImpl(void (*callback)(void*, const uint32_t*, size_t),
                                    void* state) const {
  constexpr uint32_t kChunk = 1024;
  uint32_t buffer[kChunk];
  roaring_uint32_iterator_t it;
  roaring_init_iterator(bitmap_, &it);
  while (it.has_value) {
    uint32_t count = roaring_read_uint32_iterator(&it, buffer, kChunk);
    if (count == 0) break;
    callback(state, buffer, count);
  }
}

void RoaringBitmap::VisitRangeImpl(uint64_t start, uint64_t end,
                                   void (*callback)(void*, const uint32_t*, size_t), void* state) const {
  if (start >= end || start > UINT32_MAX) return;
  constexpr uint32_t kChunk = 1024;
  uint32_t buffer[kChunk];
  roaring_uint32_iterator_t it;
  roaring_init_iterator(bitmap_, &it);
  if (!roaring_move_uint32_iterator_equalorlarger(&it, uint32_t(start))) return;
  while (it.has_value) {
    uint32_t count = roaring_read_uint32_iterator(&it, buffer, kChunk);
    if (count == 0) break;
    // Members arrive ascending: cut the chunk at the first one past the range.
    uint32_t keep = count;
    if (buffer[count - 1] >= end) keep = uint32_t(std::lower_bound(buffer, buffer + count, end) - buffer);
    if (keep) callback(state, buffer, keep);
    if (keep < count) break;
  }
}

RoaringBitmap RoaringBitmap::Union(const RoaringBitmap& other) const {
  return RoaringBitmap(roaring_bitmap_or(bitmap_, other.bitmap_));
}

RoaringBitmap RoaringBitmap::And(const RoaringBitmap& other) const {
  return RoaringBitmap(roaring_bitmap_and(bitmap_, other.bitmap_));
}

bool RoaringBitmap::Intersects(const RoaringBitmap& other) const {
  return roaring_bitmap_intersect(bitmap_, other.bitmap_);
}

RoaringBitmap RoaringBitmap::AndNot(const RoaringBitmap& other) const {
  return RoaringBitmap(roaring_bitmap_andnot(bitmap_, other.bitmap_));
}

// The in-place CRoaring operations require distinct operands.
RoaringBitmap& RoaringBitmap::operator|=(const RoaringBitmap& other) {
  if (this != &other) roaring_bitmap_or_inplace(bitmap_, other.bitmap_);
  return *this;
}

RoaringBitmap& RoaringBitmap::operator&=(const RoaringBitmap& other) {
  if (this != &other) roaring_bitmap_and_inplace(bitmap_, other.bitmap_);
  return *this;
}

RoaringBitmap& RoaringBitmap::operator-=(const RoaringBitmap& other) {
  if (this == &other) {
    roaring_bitmap_clear(bitmap_);
  } else {
    roaring_bitmap_andnot_inplace(bitmap_, other.bitmap_);
  }
  return *this;
}

bool RoaringBitmap::operator==(const RoaringBitmap& other) const {
  return roaring_bitmap_equals(bitmap_, other.bitmap_);
}

std::string RoaringBitmap::SerializePortable(RunContainers runs) const {
  RoaringBitmap copy(*this);
  if (runs == RunContainers::kOptimize) {
    roaring_bitmap_run_optimize(copy.bitmap_);
  } else {
    roaring_bitmap_remove_run_compression(copy.bitmap_);
  }
  std::string bytes(roaring_bitmap_portable_size_in_bytes(copy.bitmap_), '\0');
  size_t written = roaring_bitmap_portable_serialize(copy.bitmap_, bytes.data());
  bytes.resize(written);
  return bytes;
}

RoaringBitmap RoaringBitmap::DeserializePortable(std::string_view bytes,
                                                 std::string_view context) {
  // The size probe checks the header and that every container fits in `bytes`.
  size_t expected = roaring_bitmap_portable_deserialize_size(bytes.data(), bytes.size());
  if (expected == 0) {
    ThrowCorrupt("{}: {} bytes are not a portable roaring bitmap (bad cookie or truncated)",
                 context, bytes.size());
  }
  if (expected != bytes.size()) {
    ThrowCorrupt("{}: portable roaring bitmap occupies {} bytes but the data has {}", context,
                 expected, bytes.size());
  }
  roaring_bitmap_t* raw = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (raw == nullptr) {
    ThrowCorrupt("{}: portable roaring bitmap of {} bytes failed to deserialize", context,
                 bytes.size());
  }
  RoaringBitmap bitmap(raw);
  // The deserializer trusts container contents. Members must come out strictly
  // ascending (sorted, duplicate-free arrays and disjoint runs) and their count must match
  // the cardinalities the headers declare.
  uint64_t seen = 0;
  int64_t previous = -1;
  bool ordered = true;
  bitmap.ForEach([&](uint32_t value) {
    if (static_cast<int64_t>(value) <= previous) ordered = false;
    previous = value;
    ++seen;
  });
  if (!ordered) {
    ThrowCorrupt("{}: portable roaring bitmap has unsorted or overlapping container contents",
                 context);
  }
  if (seen != bitmap.Cardinality()) {
    ThrowCorrupt("{}: portable roaring bitmap declares {} members but holds {}", context,
                 bitmap.Cardinality(), seen);
  }
  return bitmap;
}

}  // namespace lancelet::format
