// RoaringBitmap: an owning C++ handle on a CRoaring 32-bit bitmap, plus the Roaring
// "portable" serialization that Lance uses for deletion files (.bin) and index coverage.
//
// The portable format is the cross-language one (cookie 12346 without run containers,
// 12347 with them); the Rust `roaring` crate used by the reference reads and writes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

struct roaring_bitmap_s;

namespace lancelet::format {

class RoaringBitmap {
 public:
  // A maximal run of consecutive members: [start, end).
  struct Run {
    uint32_t start;
    uint64_t end;
    bool operator==(const Run&) const = default;
  };

  // Whether serialization may store runs of members as run containers.
  enum class RunContainers {
    kOptimize,  // convert containers to runs where that is smaller
    kNone,      // array and bitmap containers only, as the reference deletion writer does
  };

  RoaringBitmap();
  ~RoaringBitmap();
  RoaringBitmap(const RoaringBitmap& other);
  RoaringBitmap& operator=(const RoaringBitmap& other);
  RoaringBitmap(RoaringBitmap&& other) noexcept;
  RoaringBitmap& operator=(RoaringBitmap&& other) noexcept;

  static RoaringBitmap FromValues(std::span<const uint32_t> values);
  // Every value in [start, end); `end` may be 2^32.
  static RoaringBitmap FromRange(uint64_t start, uint64_t end);

  void Add(uint32_t value);
  void AddMany(std::span<const uint32_t> values);
  // Adds every value in [start, end); throws Invalid if end > 2^32 or start > end.
  void AddRange(uint64_t start, uint64_t end);
  void Remove(uint32_t value);

  bool Contains(uint32_t value) const;
  uint64_t Cardinality() const;
  bool IsEmpty() const;
  // Bytes of the portable serialization as it stands (without run optimization).
  uint64_t PortableSizeInBytes() const;
  // Appends the members in [start, end) to `out`, ascending, container by container
  // (array values copied, bitset words walked bit by bit, runs expanded).
  void AppendMembersIn(uint64_t start, uint64_t end, std::vector<uint32_t>& out) const;
  // Members in [start, end); costs the containers the range meets (a run container its
  // runs, a bitset the words in range), never a pass over the members.
  uint64_t CountInRange(uint64_t start, uint64_t end) const;
  // Number of members strictly less than `value` (the 0-based position of a member).
  // Costs up to a container's worth of work: never call it once per cell of a read.
  uint64_t Rank(uint32_t value) const;
  // Rank calls so far in this process (tests hold the read path to zero).
  static uint64_t RankCalls();
  // Members whose ranks are [first_rank, first_rank + count), ascending, into `out`;
  // throws Invalid if the bitmap has fewer members.
  void MembersByRank(uint64_t first_rank, size_t count, uint32_t* out) const;
  // Smallest / largest member; throws Invalid on an empty bitmap.
  uint32_t Min() const;
  uint32_t Max() const;

  std::vector<uint32_t> ToVector() const;
  // Maximal runs of members, ascending; costs the runs of run containers and the members
  // of the others.
  std::vector<Run> Runs() const;
  // At least the number of maximal runs, read off the containers without a pass over
  // their members: a run container counts its runs, a bitset container its runs (a word
  // scan), an array container its members.
  uint64_t RunCountUpperBound() const;
  // A member among a query's values: values[index] is the member of rank `rank`.
  struct Member {
    size_t index;
    uint64_t rank;
  };
  // The members among `ascending` (non-decreasing; values past 2^32 are never members),
  // in order, with their ranks. One pass over the containers with a running rank, never a
  // rank call per value: costs O(containers + values), plus, in a bitset container, the
  // words up to its last queried value.
  std::vector<Member> MembersAmong(std::span<const uint64_t> ascending) const;
  // Calls fn(value) for every member in ascending order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    VisitChunks([&](const uint32_t* values, size_t count) {
      for (size_t i = 0; i < count; ++i) fn(values[i]);
    });
  }
  // Calls fn(value) for every member in [start, end), ascending; cost follows the members
  // visited, not the bitmap's size.
  template <typename Fn>
  void ForEachInRange(uint64_t start, uint64_t end, Fn&& fn) const {
    VisitRangeImpl(
        start, end,
        [](void* state, const uint32_t* values, size_t count) {
          auto& f = *static_cast<std::remove_reference_t<Fn>*>(state);
          for (size_t i = 0; i < count; ++i) f(values[i]);
        },
        &fn);
  }
  // Calls fn(Run) for every maximal run of members in ascending order.
  template <typename Fn>
  void ForEachRun(Fn&& fn) const {
    bool open = false;
    Run run{0, 0};
    ForEach([&](uint32_t value) {
      if (open && value == run.end) {
        ++run.end;
        return;
      }
      if (open) fn(run);
      run = Run{value, uint64_t{value} + 1};
      open = true;
    });
    if (open) fn(run);
  }

  RoaringBitmap Union(const RoaringBitmap& other) const;
  RoaringBitmap And(const RoaringBitmap& other) const;
  RoaringBitmap AndNot(const RoaringBitmap& other) const;
  RoaringBitmap& operator|=(const RoaringBitmap& other);
  RoaringBitmap& operator&=(const RoaringBitmap& other);
  RoaringBitmap& operator-=(const RoaringBitmap& other);
  bool operator==(const RoaringBitmap& other) const;
  // Whether the two bitmaps share a member.
  bool Intersects(const RoaringBitmap& other) const;

  // Portable serialization. kOptimize (the default) run-optimizes a copy first.
  std::string SerializePortable(RunContainers runs = RunContainers::kOptimize) const;
  // Parses exactly `bytes` (trailing bytes are an error). Throws Corrupt naming `context`
  // when the bytes are not a well-formed portable bitmap.
  static RoaringBitmap DeserializePortable(std::string_view bytes, std::string_view context);

 private:
  explicit RoaringBitmap(roaring_bitmap_s* owned);
  // Calls fn(values, count) with the members in ascending order, in chunks.
  template <typename Fn>
  void VisitChunks(Fn&& fn) const;
  void VisitChunksImpl(void (*callback)(void*, const uint32_t*, size_t), void* state) const;
  void VisitRangeImpl(uint64_t start, uint64_t end, void (*callback)(void*, const uint32_t*, size_t),
                      void* state) const;

  roaring_bitmap_s* bitmap_;
};

template <typename Fn>
void RoaringBitmap::VisitChunks(Fn&& fn) const {
  VisitChunksImpl(
      [](void* state, const uint32_t* values, size_t count) {
        (*static_cast<std::remove_reference_t<Fn>*>(state))(values, count);
      },
      &fn);
}

}  // namespace lancelet::format
