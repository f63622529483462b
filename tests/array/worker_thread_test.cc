// RunOnThreads (array/worker_thread.h): every index runs once, index 0 on the caller, and
// the lowest index's error comes back after every thread has ended.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "array/worker_thread.h"

namespace lancelet {
namespace {

TEST(RunOnThreads, RunsEveryIndexOnceTheFirstOnTheCaller) {
  std::vector<std::atomic<int>> runs(6);
  std::thread::id first;
  RunOnThreads(6, [&](size_t i) {
    ++runs[i];
    if (i == 0) first = std::this_thread::get_id();
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(first, std::this_thread::get_id());
  RunOnThreads(0, [](size_t) { FAIL() << "no index to run"; });
}

TEST(RunOnThreads, TheLowestIndexsErrorIsRethrownAfterAllEnd) {
  std::atomic<int> ended{0};
  try {
    RunOnThreads(4, [&](size_t i) {
      ++ended;
      if (i >= 2) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 2");
  }
  EXPECT_EQ(ended.load(), 4);
}

}  // namespace
}  // namespace lancelet
