#include "format/roaring_bitmap.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>

#include <roaring/roaring.h>

#include <new>
#include <utility>

#include "format/gallop.h"
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

uint64_t RoaringBitmap::ContainerPart::Count() const {
  uint64_t count = 0;
  switch (kind) {
    case Kind::kArray: {
      const uint16_t* from = std::lower_bound(data, data + size, lo);
      count = uint64_t(std::lower_bound(from, data + size, hi) - from);
      break;
    }
    case Kind::kRuns:
      for (int32_t j = FirstRunEndingAfter(lo); j < size && data[2 * j] < hi; ++j) count += RunTo(j) - RunFrom(j);
      break;
    case Kind::kBitset:
      for (uint32_t w = lo / 64; w <= (hi - 1) / 64; ++w) count += uint64_t(std::popcount(MaskedWord(w)));
      break;
  }
  return count;
}

// Container by container over the range alone: CRoaring's range cardinality ranks both
// ends from the start of a bitset container, a pass over up to 1024 words per call.
uint64_t RoaringBitmap::CountInRange(uint64_t start, uint64_t end) const {
  uint64_t count = 0;
  ForEachPartIn(start, end, [&](const ContainerPart& part) { count += part.Count(); });
  return count;
}

void RoaringBitmap::AppendMembersIn(uint64_t start, uint64_t end, std::vector<uint32_t>& out) const {
  ForEachInRange(start, end, [&](uint32_t v) { out.push_back(v); });
}

void RoaringBitmap::VisitPartsIn(uint64_t start, uint64_t end, void (*callback)(void*, const ContainerPart&),
                                 void* state) const {
  end = std::min<uint64_t>(end, uint64_t{1} << 32);
  if (start >= end) return;
  const roaring_array_t& ra = bitmap_->high_low_container;
  const uint16_t first_key = uint16_t(start >> 16);
  for (int32_t i = int32_t(std::lower_bound(ra.keys, ra.keys + ra.size, first_key) - ra.keys); i < ra.size; ++i) {
    const uint64_t base = uint64_t(ra.keys[i]) << 16;
    if (base >= end) break;
    ContainerPart part{};
    part.base = uint32_t(base);
    part.lo = start > base ? uint32_t(start - base) : 0;
    part.hi = uint32_t(std::min<uint64_t>(end - base, 65536));
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    if (type == ARRAY_CONTAINER_TYPE_CODE) {
      const auto* a = static_cast<const array_container_t*>(c);
      part.kind = ContainerPart::Kind::kArray;
      part.data = a->array;
      part.size = a->cardinality;
    } else if (type == RUN_CONTAINER_TYPE_CODE) {
      const auto* r = static_cast<const run_container_t*>(c);
      static_assert(sizeof(rle16_t) == 2 * sizeof(uint16_t) && offsetof(rle16_t, length) == sizeof(uint16_t));
      part.kind = ContainerPart::Kind::kRuns;
      part.data = reinterpret_cast<const uint16_t*>(r->runs);
      part.size = r->n_runs;
    } else {
      part.kind = ContainerPart::Kind::kBitset;
      part.words = static_cast<const bitset_container_t*>(c)->array;
    }
    callback(state, part);
  }
}

bool RoaringBitmap::IsEmpty() const { return roaring_bitmap_is_empty(bitmap_); }

// roaring_bitmap_rank counts members <= x; we want members < x.
uint64_t RoaringBitmap::PortableSizeInBytes() const { return roaring_bitmap_portable_size_in_bytes(bitmap_); }

namespace {
std::atomic<uint64_t> rank_calls{0};
}  // namespace

uint64_t RoaringBitmap::RankCalls() { return rank_calls.load(std::memory_order_relaxed); }

uint64_t RoaringBitmap::Rank(uint32_t value) const {
  rank_calls.fetch_add(1, std::memory_order_relaxed);
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
  // Container by container: a run container hands over its runs as they are, so a
  // bitmap of long runs costs its runs, not its members.
  std::vector<Run> runs;
  auto add = [&](uint64_t start, uint64_t end) {
    if (!runs.empty() && runs.back().end == start) runs.back().end = end;
    else runs.push_back({uint32_t(start), end});
  };
  const roaring_array_t& ra = bitmap_->high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    const uint64_t base = uint64_t(ra.keys[i]) << 16;
    uint8_t type = ra.typecodes[i];
    const void* c = container_unwrap_shared(ra.containers[i], &type);
    if (type == RUN_CONTAINER_TYPE_CODE) {
      const auto* r = static_cast<const run_container_t*>(c);
      for (int32_t j = 0; j < r->n_runs; ++j)
        add(base + r->runs[j].value, base + r->runs[j].value + r->runs[j].length + 1);
    } else if (type == ARRAY_CONTAINER_TYPE_CODE) {
      const auto* a = static_cast<const array_container_t*>(c);
      for (int32_t j = 0; j < a->cardinality; ++j) add(base + a->array[j], base + a->array[j] + 1);
    } else {
      const auto* b = static_cast<const bitset_container_t*>(c);
      for (int w = 0; w < BITSET_CONTAINER_SIZE_IN_WORDS; ++w)
        for (uint64_t word = b->array[w]; word != 0; word &= word - 1) {
          const uint64_t v = base + uint64_t(w) * 64 + uint64_t(__builtin_ctzll(word));
          add(v, v + 1);
        }
    }
  }
  return runs;
}

std::vector<RoaringBitmap::Member> RoaringBitmap::MembersAmong(std::span<const uint64_t> ascending) const {
  std::vector<Member> found;
  const roaring_array_t& ra = bitmap_->high_low_container;
  int32_t ci = -1;         // the container holding the current value's key, once found
  uint64_t base_rank = 0;  // members in the containers before ci
  // Where the search in container ci stands: an array index, or a run or bitset word
  // index with the container's members before it.
  size_t at = 0;
  uint64_t before_at = 0;
  auto cardinality = [&](int32_t i) { return uint64_t(container_get_cardinality(ra.containers[i], ra.typecodes[i])); };
  // Both sides leap: the values to the next member (many values between two members of
  // a sparse layer cost one gallop), the members to the next value.
  auto skip_to = [&](size_t q, uint64_t value) { return Gallop(ascending, q, value); };
  int32_t next = 0;  // the first container not yet passed
  size_t q = 0;
  while (q < ascending.size()) {
    const uint64_t value = ascending[q];
    if (value > UINT32_MAX) break;
    const uint16_t key = uint16_t(value >> 16);
    const uint64_t high = uint64_t(key) << 16;
    if (ci < 0 || ra.keys[ci] != key) {
      if (ci >= 0) base_rank += cardinality(ci), next = ci + 1;
      ci = -1;
      while (next < ra.size && ra.keys[next] < key) base_rank += cardinality(next++);
      if (next == ra.size) break;
      if (ra.keys[next] != key) {
        q = skip_to(q, uint64_t(ra.keys[next]) << 16);
        continue;
      }
      ci = next;
      at = 0;
      before_at = 0;
    }
    // The values in this container's key, walked without leaving its kind.
    const size_t key_end = skip_to(q, high + 0x10000);
    uint8_t type = ra.typecodes[ci];
    const void* c = container_unwrap_shared(ra.containers[ci], &type);
    if (type == ARRAY_CONTAINER_TYPE_CODE) {
      const auto* a = static_cast<const array_container_t*>(c);
      const std::span<const uint16_t> members(a->array, size_t(a->cardinality));
      while (q < key_end) {
        const uint16_t v = uint16_t(ascending[q]);
        at = Gallop(members, at, v);
        if (at == members.size()) q = key_end;
        else if (members[at] == v) found.push_back({q++, base_rank + at});
        else q = skip_to(q, high | members[at]);  // a member of this key: not past key_end
      }
    } else if (type == RUN_CONTAINER_TYPE_CODE) {
      const auto* r = static_cast<const run_container_t*>(c);
      while (q < key_end) {
        const uint16_t v = uint16_t(ascending[q]);
        while (at < size_t(r->n_runs) && uint32_t(r->runs[at].value) + r->runs[at].length < v)
          before_at += uint64_t(r->runs[at].length) + 1, ++at;
        if (at == size_t(r->n_runs)) q = key_end;
        else if (r->runs[at].value <= v) found.push_back({q++, base_rank + before_at + (v - r->runs[at].value)});
        else q = skip_to(q, high | r->runs[at].value);
      }
    } else {
      const uint64_t* words = static_cast<const bitset_container_t*>(c)->array;
      for (; q < key_end; ++q) {
        const uint16_t v = uint16_t(ascending[q]);
        for (; at < size_t(v / 64); ++at) before_at += uint64_t(std::popcount(words[at]));
        const uint64_t bits = words[v / 64], bit = uint64_t{1} << (v % 64);
        if (bits & bit) found.push_back({q, base_rank + before_at + uint64_t(std::popcount(bits & (bit - 1)))});
      }
    }
  }
  return found;
}

uint64_t RoaringBitmap::RunCountUpperBound() const {
  uint64_t count = 0;
  const roaring_array_t& ra = bitmap_->high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    uint8_t type = ra.typecodes[i];
    void* c = const_cast<void*>(container_unwrap_shared(ra.containers[i], &type));
    if (type == RUN_CONTAINER_TYPE_CODE) count += uint64_t(static_cast<run_container_t*>(c)->n_runs);
    // An array container counts as its members: counting its runs would cost a pass over
    // it, and a writer that calls run_optimize stores runs of any length as runs anyway.
    else if (type == ARRAY_CONTAINER_TYPE_CODE) count += uint64_t(static_cast<array_container_t*>(c)->cardinality);
    else count += uint64_t(bitset_container_number_of_runs(static_cast<bitset_container_t*>(c)));
  }
  return count;
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

namespace {

// What the deserializer trusts, checked container by container in O(serialized bytes):
// keys ascend; array values ascend; runs ascend without overlapping and end inside their
// container; a bitset's declared cardinality is its population count. Members then come
// out strictly ascending and as many as Cardinality() says.
bool WellFormed(const roaring_bitmap_t& bitmap) {
  const roaring_array_t& ra = bitmap.high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    if (i > 0 && ra.keys[i] <= ra.keys[i - 1]) return false;
    switch (ra.typecodes[i]) {
      case ARRAY_CONTAINER_TYPE_CODE: {
        const auto* a = static_cast<const array_container_t*>(ra.containers[i]);
        for (int32_t j = 1; j < a->cardinality; ++j)
          if (a->array[j] <= a->array[j - 1]) return false;
        break;
      }
      case RUN_CONTAINER_TYPE_CODE: {
        const auto* r = static_cast<const run_container_t*>(ra.containers[i]);
        int64_t next = 0;  // the smallest value the next run may start at
        for (int32_t j = 0; j < r->n_runs; ++j) {
          const int64_t last = int64_t(r->runs[j].value) + r->runs[j].length;
          if (r->runs[j].value < next || last > 0xFFFF) return false;
          next = last + 1;
        }
        break;
      }
      case BITSET_CONTAINER_TYPE_CODE: {
        const auto* b = static_cast<const bitset_container_t*>(ra.containers[i]);
        int64_t population = 0;
        for (int w = 0; w < BITSET_CONTAINER_SIZE_IN_WORDS; ++w) population += std::popcount(b->array[w]);
        if (population != b->cardinality) return false;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

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
  if (!WellFormed(*raw))
    ThrowCorrupt("{}: portable roaring bitmap has unsorted or overlapping container contents, or a bitset "
                 "whose declared cardinality is not its population count",
                 context);
  return bitmap;
}

}  // namespace lancelet::format
