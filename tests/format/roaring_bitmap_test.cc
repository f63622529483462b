#include "format/roaring_bitmap.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::format {
namespace {

using lancelet::testing::ThrownKind;

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

TEST(RoaringBitmapTest, KnownVectorOneThree) {
  RoaringBitmap bitmap = RoaringBitmap::FromValues(std::vector<uint32_t>{1, 3});
  EXPECT_EQ(Hex(bitmap.SerializePortable()), "3a30000001000000000001001000000001000300");
  EXPECT_EQ(Hex(bitmap.SerializePortable(RoaringBitmap::RunContainers::kNone)),
            "3a30000001000000000001001000000001000300");
  RoaringBitmap back =
      RoaringBitmap::DeserializePortable(Unhex("3a30000001000000000001001000000001000300"), "t");
  EXPECT_EQ(back.ToVector(), (std::vector<uint32_t>{1, 3}));
}

TEST(RoaringBitmapTest, RunOptimizedSerializationUsesRunContainer) {
  RoaringBitmap bitmap = RoaringBitmap::FromRange(0, 7000);
  // cookie 12347 with one container, run flags 0x01, key 0 / cardinality-1 6999,
  // one run: start 0, length-1 6999.
  EXPECT_EQ(Hex(bitmap.SerializePortable()), "3b30000001" "0000571b" "0100" "0000571b");
  EXPECT_EQ(RoaringBitmap::DeserializePortable(bitmap.SerializePortable(), "t"), bitmap);
}

TEST(RoaringBitmapTest, SerializationWithoutRunsMatchesReferenceDeletionBitmap) {
  // The reference writes deleted offsets 0..6999 as one 8 KiB bitmap container.
  std::string bytes =
      RoaringBitmap::FromRange(0, 7000).SerializePortable(RoaringBitmap::RunContainers::kNone);
  ASSERT_EQ(bytes.size(), 8208u);
  EXPECT_EQ(Hex(bytes.substr(0, 16)), "3a30000001000000" "0000571b10000000");
  EXPECT_EQ(bytes.substr(16, 875), std::string(875, '\xff'));
  EXPECT_EQ(bytes.substr(16 + 875), std::string(8192 - 875, '\0'));
}

TEST(RoaringBitmapTest, MembershipCardinalityAndRank) {
  RoaringBitmap bitmap;
  EXPECT_TRUE(bitmap.IsEmpty());
  bitmap.AddRange(5, 10);
  bitmap.Add(20);
  bitmap.Add(70000);
  EXPECT_EQ(bitmap.Cardinality(), 7u);
  EXPECT_TRUE(bitmap.Contains(5));
  EXPECT_TRUE(bitmap.Contains(9));
  EXPECT_FALSE(bitmap.Contains(10));
  EXPECT_TRUE(bitmap.Contains(70000));
  EXPECT_EQ(bitmap.Rank(0), 0u);
  EXPECT_EQ(bitmap.Rank(5), 0u);
  EXPECT_EQ(bitmap.Rank(7), 2u);
  EXPECT_EQ(bitmap.Rank(20), 5u);
  EXPECT_EQ(bitmap.Rank(21), 6u);
  EXPECT_EQ(bitmap.Rank(70000), 6u);
  EXPECT_EQ(bitmap.Rank(0xffffffffu), 7u);
  EXPECT_EQ(bitmap.Min(), 5u);
  EXPECT_EQ(bitmap.Max(), 70000u);
  bitmap.Remove(20);
  EXPECT_EQ(bitmap.ToVector(), (std::vector<uint32_t>{5, 6, 7, 8, 9, 70000}));
  EXPECT_EQ(ThrownKind([] { RoaringBitmap().Min(); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { RoaringBitmap().AddRange(3, 2); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { RoaringBitmap().AddRange(0, (uint64_t{1} << 32) + 1); }),
            ErrorKind::kInvalidArgument);
}

TEST(RoaringBitmapTest, RunsCoalesceAcrossContainers) {
  RoaringBitmap bitmap = RoaringBitmap::FromValues(std::vector<uint32_t>{1, 2, 3, 7, 9, 10});
  bitmap.AddRange(65530, 65540);  // crosses the container boundary at 65536
  bitmap.Add(0xffffffffu);
  std::vector<RoaringBitmap::Run> expected = {
      {1, 4}, {7, 8}, {9, 11}, {65530, 65540}, {0xffffffffu, uint64_t{1} << 32}};
  EXPECT_EQ(bitmap.Runs(), expected);
  EXPECT_TRUE(RoaringBitmap().Runs().empty());
  // Many values: ForEach sees them all in order, across the 1024-value chunks.
  RoaringBitmap big = RoaringBitmap::FromRange(100, 5000);
  uint64_t count = 0;
  uint32_t expected_next = 100;
  big.ForEach([&](uint32_t v) {
    EXPECT_EQ(v, expected_next++);
    ++count;
  });
  EXPECT_EQ(count, 4900u);
  EXPECT_EQ(big.Runs(), (std::vector<RoaringBitmap::Run>{{100, 5000}}));
}

// Runs come out the same from every container kind: array, bitset (every third value of
// a container plus a block) and run (after run optimization), and across containers.
TEST(RoaringBitmapTest, RunsAndTheirCountFromEveryContainerKind) {
  std::vector<uint32_t> values;
  std::vector<RoaringBitmap::Run> expected;
  for (uint32_t v = 65536; v < 65536 + 30000; v += 3) values.push_back(v), expected.push_back({v, uint64_t{v} + 1});
  for (uint32_t v = 2 * 65536 - 10; v < 2 * 65536 + 10; ++v) values.push_back(v);
  expected.push_back({2 * 65536 - 10, 2 * 65536 + 10});
  RoaringBitmap bitmap = RoaringBitmap::FromValues(values);
  EXPECT_EQ(bitmap.Runs(), expected);
  // The bitset container counts its runs; the last run spills 10 members into an array
  // container, which counts each member.
  EXPECT_EQ(bitmap.RunCountUpperBound(), expected.size() + 10);
  RoaringBitmap optimized = RoaringBitmap::DeserializePortable(RoaringBitmap::FromRange(5, 70000).SerializePortable(), "t");
  EXPECT_EQ(optimized.Runs(), (std::vector<RoaringBitmap::Run>{{5, 70000}}));
  EXPECT_EQ(optimized.RunCountUpperBound(), 2u);
}

// bitmap.MembersAmong(queries), checked against a membership test and a rank of each
// query on its own (the (index, rank) pairs must be equal, in order).
std::vector<RoaringBitmap::Member> CheckedMembersAmong(const RoaringBitmap& bitmap,
                                                       const std::vector<uint64_t>& queries) {
  std::vector<std::pair<size_t, uint64_t>> expected, got;
  for (size_t i = 0; i < queries.size(); ++i)
    if (queries[i] <= UINT32_MAX && bitmap.Contains(uint32_t(queries[i])))
      expected.push_back({i, bitmap.Rank(uint32_t(queries[i]))});
  auto found = bitmap.MembersAmong(queries);
  for (const auto& m : found) got.push_back({m.index, m.rank});
  EXPECT_EQ(got, expected);
  return found;
}

// Members among ascending values, with their ranks, from every container kind in one
// pass: an array container (keys 0), a bitset (key 1, every third value), a run
// container (keys 3 and 4, after run optimization), key 2 absent, and values past 2^32.
TEST(RoaringBitmapTest, MembersAmongAscendingValuesFromEveryContainerKind) {
  std::vector<uint32_t> values = {5, 70, 65000};
  for (uint32_t v = 65536; v < 2 * 65536; v += 3) values.push_back(v);
  RoaringBitmap built = RoaringBitmap::FromValues(values);
  built.AddRange(3 * 65536 + 100, 4 * 65536 + 50);
  const RoaringBitmap bitmap = RoaringBitmap::DeserializePortable(built.SerializePortable(), "t");
  ASSERT_EQ(bitmap.Runs().back(), (RoaringBitmap::Run{3 * 65536 + 100, 4 * 65536 + 50}));
  std::vector<uint64_t> queries = {0,          5,          5,          6,          65000,     65536,
                                   65537,      65539,      2 * 65536 - 1, 2 * 65536 + 7, 3 * 65536 + 99,
                                   3 * 65536 + 100, 4 * 65536 + 49, 4 * 65536 + 50, uint64_t{1} << 32, uint64_t{1} << 40};
  const auto found = CheckedMembersAmong(bitmap, queries);
  ASSERT_EQ(found.size(), 8u);
  // The known answers: 5 twice (rank 1), 65000 (2), 65536 (3), 65539 (4), 2*65536-2
  // (the last of the bitset: 3 + 21845), the run's first and last members.
  std::vector<size_t> indices;
  for (const auto& m : found) indices.push_back(m.index);
  EXPECT_EQ(indices, (std::vector<size_t>{1, 2, 4, 5, 7, 8, 11, 12}));
  EXPECT_EQ(found[5].rank, 3u + 21845u);
  EXPECT_EQ(found[6].rank, 3u + 21846u);
  EXPECT_EQ(found[7].rank, 3u + 21846u + 65536u - 100u + 49u);
  EXPECT_TRUE(RoaringBitmap().MembersAmong(queries).empty());
}

// The values leap to the next member and the members to the next value: every value of
// a range against a sparse array, a run container and a bitset (a scan's late read against
// 1% and 10% layers), and a few values against many members, with repeats, answer as a
// membership and rank test of each value would.
TEST(RoaringBitmapTest, MembersAmongDenseAndSparseValuesMatchContainsAndRank) {
  RoaringBitmap built;
  for (uint32_t v = 7; v < 65536; v += 100) built.Add(v);                   // array
  built.AddRange(65536 + 300, 65536 + 900);                                // runs
  built.AddRange(65536 + 5000, 65536 + 5001);
  for (uint32_t v = 2 * 65536 + 3; v < 3 * 65536; v += 10) built.Add(v);  // bitset
  for (uint32_t v = 5 * 65536; v < 5 * 65536 + 40; v += 2) built.Add(v);  // array past a gap
  const RoaringBitmap bitmap = RoaringBitmap::DeserializePortable(built.SerializePortable(), "t");
  auto check = [&](const std::vector<uint64_t>& queries) { CheckedMembersAmong(bitmap, queries); };
  std::vector<uint64_t> every;
  for (uint64_t v = 0; v < 6 * 65536; ++v) every.push_back(v);
  check(every);
  std::vector<uint64_t> sevenths;  // a filter's survivors, with repeats
  for (uint64_t v = 0; v < 6 * 65536; v += 7) sevenths.insert(sevenths.end(), {v, v});
  check(sevenths);
  check({7, 65536 + 899, 65536 + 900, 65536 + 5000, 2 * 65536 + 3, 2 * 65536 + 65533, 5 * 65536 + 38, 6 * 65536});
}

// Members and their count in ranges that start and end inside and across array, bitset
// and run containers (one run, and several with gaps), at word edges, and past 2^32: the
// same as CRoaring's own listing of every member, filtered.
TEST(RoaringBitmapTest, MembersInRangesFromEveryContainerKind) {
  std::vector<uint32_t> values = {5, 70, 65000};
  for (uint32_t v = 65536; v < 2 * 65536; v += 3) values.push_back(v);
  RoaringBitmap built = RoaringBitmap::FromValues(values);
  built.AddRange(3 * 65536 + 100, 4 * 65536 + 50);
  const uint64_t runs = 5 * 65536;
  for (uint64_t from : {10, 100, 1000, 5000}) built.AddRange(runs + from, runs + from + 2 * from);
  built.Add(0xffffffffu);
  const RoaringBitmap bitmap = RoaringBitmap::DeserializePortable(built.SerializePortable(), "t");
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 6},         {6, 65536},          {0, 1 << 20},         {65536 + 64, 65536 + 128}, {65536 + 1, 65536 + 63},
      {131071, 131072}, {3 * 65536 + 99, 3 * 65536 + 101}, {4 * 65536 + 10, 5 * 65536}, {0xfffffff0u, uint64_t{1} << 33},
      {7, 7},         {2 * 65536, 3 * 65536}, {runs + 15, runs + 150}, {runs + 30, runs + 100},
      {runs + 31, runs + 99}, {runs + 250, runs + 15001}, {runs, runs + 65536}};
  const std::vector<uint32_t> all = bitmap.ToVector();
  for (const auto& [start, end] : ranges) {
    std::vector<uint32_t> expected = {42};
    for (uint32_t v : all)
      if (v >= start && v < end) expected.push_back(v);
    std::vector<uint32_t> got = {42};  // appended to, not replaced
    bitmap.AppendMembersIn(start, end, got);
    EXPECT_EQ(got, expected) << "[" << start << ", " << end << ")";
    std::vector<uint32_t> visited = {42};
    bitmap.ForEachInRange(start, end, [&](uint32_t v) { visited.push_back(v); });
    EXPECT_EQ(visited, expected) << "[" << start << ", " << end << ")";
    EXPECT_EQ(bitmap.CountInRange(start, end), expected.size() - 1) << "[" << start << ", " << end << ")";
  }
  EXPECT_EQ(bitmap.CountInRange(runs + 31, runs + 99), 0u);  // between two runs
  std::vector<uint32_t> few;
  bitmap.AppendMembersIn(65536 + 60, 65536 + 70, few);
  EXPECT_EQ(few, (std::vector<uint32_t>{65536 + 60, 65536 + 63, 65536 + 66, 65536 + 69}));
}

TEST(RoaringBitmapTest, SetOperations) {
  RoaringBitmap a = RoaringBitmap::FromValues(std::vector<uint32_t>{1, 2, 3, 100000});
  RoaringBitmap b = RoaringBitmap::FromValues(std::vector<uint32_t>{2, 3, 4});
  EXPECT_EQ(a.Union(b).ToVector(), (std::vector<uint32_t>{1, 2, 3, 4, 100000}));
  EXPECT_EQ(a.And(b).ToVector(), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(a.AndNot(b).ToVector(), (std::vector<uint32_t>{1, 100000}));
  RoaringBitmap c = a;
  c |= b;
  EXPECT_EQ(c.Cardinality(), 5u);
  c &= b;
  EXPECT_EQ(c.ToVector(), (std::vector<uint32_t>{2, 3, 4}));
  c -= RoaringBitmap::FromValues(std::vector<uint32_t>{3});
  EXPECT_EQ(c.ToVector(), (std::vector<uint32_t>{2, 4}));
  // Self-aliasing operands.
  c |= c;
  EXPECT_EQ(c.ToVector(), (std::vector<uint32_t>{2, 4}));
  c &= c;
  EXPECT_EQ(c.ToVector(), (std::vector<uint32_t>{2, 4}));
  c -= c;
  EXPECT_TRUE(c.IsEmpty());
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a == RoaringBitmap::FromValues(std::vector<uint32_t>{100000, 3, 2, 1}));
}

TEST(RoaringBitmapTest, CopyAndMoveKeepIndependentBitmaps) {
  RoaringBitmap a = RoaringBitmap::FromValues(std::vector<uint32_t>{1});
  RoaringBitmap copy = a;
  copy.Add(2);
  EXPECT_EQ(a.Cardinality(), 1u);
  RoaringBitmap moved = std::move(copy);
  EXPECT_EQ(moved.Cardinality(), 2u);
  EXPECT_TRUE(copy.IsEmpty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  copy.Add(9);
  EXPECT_EQ(copy.ToVector(), (std::vector<uint32_t>{9}));
  a = moved;
  EXPECT_EQ(a.Cardinality(), 2u);
}

TEST(RoaringBitmapTest, DeserializeRejectsMalformedBytesNamingContext) {
  auto message = [](const std::string& bytes) {
    try {
      RoaringBitmap::DeserializePortable(bytes, "_deletions/1-2-3.bin");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted " << Hex(bytes);
    return std::string();
  };
  std::string good = Unhex("3a30000001000000000001001000000001000300");
  EXPECT_NE(message("").find("_deletions/1-2-3.bin"), std::string::npos);
  EXPECT_NE(message(good.substr(0, good.size() - 1)).find("_deletions/1-2-3.bin"),
            std::string::npos);
  EXPECT_NE(message(good + "x").find("occupies 20 bytes but the data has 21"), std::string::npos);
  EXPECT_NE(message(Unhex("ffff0000")).find("_deletions/1-2-3.bin"), std::string::npos);
  // Array container whose values are out of order (3, 1).
  EXPECT_NE(message(Unhex("3a30000001000000000001001000000003000100")).find("unsorted"),
            std::string::npos);
  // Array container with a duplicate (3, 3).
  EXPECT_NE(message(Unhex("3a30000001000000000001001000000003000300")).find("unsorted"),
            std::string::npos);
  // Run container whose runs overlap: [1, 3] then [2, 2].
  EXPECT_NE(message(Unhex("3b300000010000030002000100020002000000")).find("overlapping"), std::string::npos);
  // Run container with a run past the container's last value (0xfff0 + 32).
  EXPECT_NE(message(Unhex("3b30000001000020000100f0ff2000")).find("overlapping"), std::string::npos);
  // Bitset container declaring 4097 members over 8192 zero bytes.
  EXPECT_NE(message(Unhex("3a300000010000000000001010000000") + std::string(8192, '\0')).find("cardinality"),
            std::string::npos);
  // Two array containers whose keys descend (1, then 0).
  EXPECT_NE(message(Unhex("3a300000020000000100000000000000180000001a00000005000600")).find("unsorted"),
            std::string::npos);
}

}  // namespace
}  // namespace lancelet::format
