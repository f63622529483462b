// RoaringBitmap: an owning C++ handle on a CRoaring 32-bit bitmap, plus the Roaring
// "portable" serialization that Lance uses for deletion files (.bin) and index coverage.
//
// The portable format is the cross-language one (cookie 12346 without run containers,
// 12347 with them); the Rust `roaring` crate used by the reference reads and writes it.
#pragma once

#include <algorithm>
#include <bit>
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
  // rank call per value. In an array or run container both sides gallop (the values to
  // the next member, the members to the next value), so a dense read against a sparse
  // layer costs about a step per member, and a sparse read against a dense layer a
  // logarithm per value; a bitset container costs a step per value plus its words up to
  // the last one queried.
  std::vector<Member> MembersAmong(std::span<const uint64_t> ascending) const;
  // One container's members within a range, in the container's own form: low values
  // (the member minus `base`) in [lo, hi) of a sorted array, of a bitset, or of runs.
  // Lets a template walk members with its per-member work inlined, while CRoaring's
  // types stay out of this header.
  struct ContainerPart {
    enum class Kind : uint8_t { kArray, kBitset, kRuns };
    Kind kind;
    uint32_t base;
    uint32_t lo, hi;       // hi <= 65536
    const uint16_t* data;  // kArray: the sorted low values; kRuns: (start, length - 1) pairs
    const uint64_t* words;  // kBitset: the container's 1024 words
    int32_t size;           // kArray: values; kRuns: runs

    // Calls fn(member, i) for the part's i-th member, ascending; returns how many there
    // were. `fn` is taken by value so that its state stays in registers: through a
    // reference it would be reloaded after every store that may alias it.
    template <typename Fn>
    size_t ForEach(Fn fn) const;
    // How many members the part holds: binary searches, run overlaps or popcounts, never
    // a pass over the members.
    uint64_t Count() const;
    // kBitset: word w with the bits outside [lo, hi) cleared.
    uint64_t MaskedWord(uint32_t w) const {
      uint64_t word = words[w];
      if (w == lo / 64) word &= ~uint64_t{0} << (lo % 64);
      if (w == (hi - 1) / 64 && hi % 64 != 0) word &= (uint64_t{1} << (hi % 64)) - 1;
      return word;
    }
    // kRuns: run j clipped to [lo, hi), as [RunFrom, RunTo) (empty when To <= From).
    uint32_t RunFrom(int32_t j) const { return std::max<uint32_t>(lo, data[2 * j]); }
    uint32_t RunTo(int32_t j) const { return std::min<uint32_t>(hi, data[2 * j] + data[2 * j + 1] + 1u); }
    // kRuns: the first run whose last value is at or past `low` (size when none is).
    int32_t FirstRunEndingAfter(uint32_t low) const {
      int32_t first = 0, n = size;
      while (n > 0) {
        const int32_t half = n / 2;
        if (uint32_t(data[2 * (first + half)]) + data[2 * (first + half) + 1] < low) first += half + 1, n -= half + 1;
        else n = half;
      }
      return first;
    }
  };
  // Calls fn(part) for each container meeting [start, end), ascending.
  template <typename Fn>
  void ForEachPartIn(uint64_t start, uint64_t end, Fn&& fn) const {
    VisitPartsIn(
        start, end,
        [](void* state, const ContainerPart& part) { (*static_cast<std::remove_reference_t<Fn>*>(state))(part); },
        &fn);
  }
  // Calls fn(value) for every member in [start, end), ascending, a container at a time:
  // cost follows the containers met and the members visited, with no per-member call
  // through a pointer and nothing listed.
  template <typename Fn>
  void ForEachInRange(uint64_t start, uint64_t end, Fn&& fn) const {
    ForEachPartIn(start, end, [&fn](const ContainerPart& part) { part.ForEach([&fn](uint32_t v, size_t) { fn(v); }); });
  }
  // Calls fn(value) for every member in ascending order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    ForEachInRange(0, uint64_t{1} << 32, fn);
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
  // Calls callback(state, part) for each container meeting [start, end), ascending.
  void VisitPartsIn(uint64_t start, uint64_t end, void (*callback)(void*, const ContainerPart&), void* state) const;

  roaring_bitmap_s* bitmap_;
};

template <typename Fn>
size_t RoaringBitmap::ContainerPart::ForEach(Fn fn) const {
  // The fields are copied first: fn's stores could alias them, which would reload them
  // on every member.
  size_t i = 0;
  const uint32_t at = base, high = hi;
  switch (kind) {
    case Kind::kArray: {
      const uint16_t* const last = data + size;
      for (const uint16_t* v = std::lower_bound(data, last, uint16_t(lo)); v != last && *v < high; ++v) fn(at + *v, i++);
      break;
    }
    case Kind::kRuns:
      for (int32_t j = FirstRunEndingAfter(lo), n = size; j < n && data[2 * j] < high; ++j)
        for (uint32_t v = RunFrom(j), to = RunTo(j); v < to; ++v) fn(at + v, i++);
      break;
    case Kind::kBitset:
      for (uint32_t w = lo / 64; w <= (hi - 1) / 64; ++w) {
        const uint32_t at = base + w * 64;
        for (uint64_t word = MaskedWord(w); word != 0; word &= word - 1) fn(at + uint32_t(std::countr_zero(word)), i++);
      }
      break;
  }
  return i;
}

}  // namespace lancelet::format
