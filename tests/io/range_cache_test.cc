// The range cache serves a read from the cached ranges that hold all of it (one, or a few
// that meet), keeps the most recently used ranges within its byte capacity, finds a
// covering range among overlapping ones, and tells a fetch which bytes it still needs.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "io/range_cache.h"

namespace lancelet::io {
namespace {

std::string Get(RangeCache& cache, const std::string& path, uint64_t offset, uint64_t length) {
  std::string out(length, '?');
  return cache.Lookup(path, offset, length, out.data()) ? out : "<miss>";
}

TEST(RangeCache, ServesReadsInsideOneRangeOfTheSameObject) {
  RangeCache cache(1000);
  cache.Insert("a", 100, "0123456789");
  EXPECT_EQ(Get(cache, "a", 100, 10), "0123456789");
  EXPECT_EQ(Get(cache, "a", 103, 4), "3456");
  EXPECT_EQ(Get(cache, "a", 109, 1), "9");
  EXPECT_EQ(Get(cache, "a", 105, 6), "<miss>");  // runs past the range
  EXPECT_EQ(Get(cache, "a", 99, 2), "<miss>");   // starts before it
  EXPECT_EQ(Get(cache, "b", 103, 4), "<miss>");  // another object
}

TEST(RangeCache, ServesAReadFromRangesThatMeet) {
  RangeCache cache(1000);
  cache.Insert("a", 0, "abcde");
  cache.Insert("a", 5, "fgh");
  cache.Insert("a", 8, "ijklm");
  EXPECT_EQ(Get(cache, "a", 3, 8), "defghijk");
  EXPECT_EQ(Get(cache, "a", 0, 13), "abcdefghijklm");
  EXPECT_EQ(Get(cache, "a", 6, 8), "<miss>");  // one byte past the last range
  cache.Insert("a", 20, "xyz");
  EXPECT_EQ(Get(cache, "a", 10, 12), "<miss>");  // a hole at [13, 20)
}

TEST(RangeCache, TellsWhichBytesOfARangeAFetchStillNeeds) {
  RangeCache cache(1000);
  using Span = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(cache.Uncovered("a", 10, 50), Span(10, 50));  // nothing cached
  cache.Insert("a", 40, std::string(30, 't'));          // a file's tail, say
  EXPECT_EQ(cache.Uncovered("a", 10, 50), Span(10, 40));
  EXPECT_EQ(cache.Uncovered("a", 45, 60), Span(60, 60));  // all cached
  cache.Insert("a", 0, std::string(15, 'h'));
  EXPECT_EQ(cache.Uncovered("a", 10, 50), Span(15, 40));
  EXPECT_EQ(cache.Uncovered("a", 20, 30), Span(20, 30));  // the middle is not trimmed
  EXPECT_EQ(cache.Uncovered("b", 10, 50), Span(10, 50));  // another object
}

TEST(RangeCache, FindsACoveringRangeBehindOverlappingOnes) {
  RangeCache cache(1000);
  cache.Insert("a", 0, std::string(100, 'x'));  // a large prefetched range
  cache.Insert("a", 40, "small");                // a block inside it, starting later
  EXPECT_EQ(Get(cache, "a", 60, 20), std::string(20, 'x'));
  EXPECT_EQ(Get(cache, "a", 41, 3), "mal");
}

TEST(RangeCache, DropsTheLeastRecentlyUsedPastItsCapacity) {
  RangeCache cache(25);
  cache.Insert("a", 0, "aaaaaaaaaa");
  cache.Insert("b", 0, "bbbbbbbbbb");
  EXPECT_EQ(Get(cache, "a", 0, 1), "a");  // a is now the most recent
  cache.Insert("c", 0, "cccccccccc");     // 30 bytes: b goes
  EXPECT_EQ(cache.bytes(), 20u);
  EXPECT_EQ(Get(cache, "b", 0, 1), "<miss>");
  EXPECT_EQ(Get(cache, "a", 0, 1), "a");
  EXPECT_EQ(Get(cache, "c", 0, 1), "c");
  cache.Insert("d", 0, std::string(26, 'd'));  // larger than the whole cache: not kept
  EXPECT_EQ(Get(cache, "d", 0, 1), "<miss>");
  EXPECT_EQ(cache.bytes(), 20u);
  cache.Insert("a", 0, "AAAAA");  // the same start again replaces the range
  EXPECT_EQ(Get(cache, "a", 0, 5), "AAAAA");
  EXPECT_EQ(cache.bytes(), 15u);
}

TEST(RangeCache, ForgetsTheObjectsNamedByAPrefix) {
  RangeCache cache(1000);
  cache.Insert("s3://b/x\n10", 0, "0123456789");
  cache.Insert("s3://b/x\n10", 20, "abc");
  cache.Insert("s3://b/xy\n5", 0, "hello");
  cache.Forget("s3://b/x\n");
  EXPECT_EQ(Get(cache, "s3://b/x\n10", 0, 3), "<miss>");
  EXPECT_EQ(Get(cache, "s3://b/x\n10", 20, 3), "<miss>");
  EXPECT_EQ(Get(cache, "s3://b/xy\n5", 0, 5), "hello");
  EXPECT_EQ(cache.bytes(), 5u);
}

// A read of a range another thread is fetching waits for that fetch and copies from it;
// one outside it claims its own. A claim dropped without bytes (a failed fetch) wakes the
// waiter, who then owes a fetch of its own.
TEST(RangeCache, AReadWaitsForTheFetchInFlightThatHoldsIt) {
  RangeCache cache(1000);
  std::unique_ptr<RangeCache::Fetch> first, outside;
  char out[4] = {};
  ASSERT_FALSE(cache.LookupOrClaim("a", 10, 2, out, 10, 20, &first));
  ASSERT_TRUE(first);
  ASSERT_FALSE(cache.LookupOrClaim("a", 18, 4, out, 18, 28, &outside));  // past the fetch in flight
  ASSERT_TRUE(outside);
  std::unique_ptr<RangeCache::Fetch> none;
  std::string waited;
  std::thread reader([&] {
    char got[3] = {};
    if (cache.LookupOrClaim("a", 14, 3, got, 14, 24, &none)) waited.assign(got, 3);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(waited.empty());  // still waiting
  first->Done("0123456789");
  reader.join();
  EXPECT_EQ(waited, "456");
  EXPECT_FALSE(none);
  EXPECT_EQ(Get(cache, "a", 10, 10), "0123456789");

  std::unique_ptr<RangeCache::Fetch> failed, retry;
  ASSERT_FALSE(cache.LookupOrClaim("b", 0, 2, out, 0, 10, &failed));
  std::thread after_failure([&] { EXPECT_FALSE(cache.LookupOrClaim("b", 4, 2, out, 4, 14, &retry)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  failed.reset();  // the fetch failed: nothing kept
  after_failure.join();
  EXPECT_FALSE(retry);  // it fetches without a claim
  EXPECT_EQ(Get(cache, "b", 0, 2), "<miss>");
  std::unique_ptr<RangeCache::Fetch> again;
  EXPECT_FALSE(cache.LookupOrClaim("b", 0, 2, out, 0, 10, &again));
  EXPECT_TRUE(again);  // nothing in flight any more
}

}  // namespace
}  // namespace lancelet::io
