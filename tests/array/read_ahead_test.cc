// ReadAhead: the source's batches, end and error arrive in order whichever thread read
// them; the thread starts only once the caller is slow; a reader dropped early stops.
// ParallelMap (array/parallel_map.h): mapped batches in the source's order whatever
// thread mapped them, errors at their batch's turn, empty results skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "array/parallel_map.h"
#include "array/shared_source.h"
#include "array/worker_thread.h"
#include "lancelet/builder.h"
#include "lancelet/record_batch.h"

namespace lancelet {
namespace {

// Before any test runs: read-ahead is on whatever the machine's cores.
const bool kTwoThreads = (setenv("LANCELET_THREADS", "2", 1), true);

// Batches of one row holding 0, 1, 2, ...; throws at `fail_at` if set, ends at `count`
// (never when negative). Records which threads called Next.
class CountingSource final : public RecordBatchReader {
 public:
  // `calls` counts the calls to Next, and outlives the source.
  CountingSource(int64_t count, int64_t fail_at = -1, std::atomic<int64_t>* calls = nullptr)
      : calls_(calls ? calls : &own_calls_), count_(count), fail_at_(fail_at) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    {
      std::lock_guard lock(mutex_);
      threads_.insert(std::this_thread::get_id());
    }
    const int64_t i = (*calls_)++;
    if (i == fail_at_) throw std::runtime_error("batch " + std::to_string(i) + " is corrupt");
    if (count_ >= 0 && i >= count_) return nullptr;
    FixedWidthBuilder<int64_t> b(DataType::Int64());
    b.Append(i);
    return RecordBatch::Make(schema_, {b.Finish()});
  }
  std::set<std::thread::id> threads() {
    std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  std::atomic<int64_t> own_calls_{0};
  std::atomic<int64_t>* calls_;
  SchemaPtr schema_ = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("i", DataType::Int64())});
  int64_t count_, fail_at_;
  std::mutex mutex_;
  std::set<std::thread::id> threads_;
};

int64_t Value(const RecordBatch& b) { return b.column(0)->values<int64_t>()[0]; }

void WorkOnABatch() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

TEST(ReadAhead, ASlowCallerGetsEveryBatchInOrderReadOnAnotherThread) {
  ASSERT_TRUE(kTwoThreads);
  auto owned = std::make_unique<CountingSource>(20);
  CountingSource& source = *owned;
  auto reader = ReadAhead(std::move(owned));
  ASSERT_NE(reader.get(), &source);
  EXPECT_EQ(reader->schema()->field(0)->name, "i");
  for (int64_t i = 0; i < 20; ++i) {
    auto batch = reader->Next();
    ASSERT_TRUE(batch) << i;
    EXPECT_EQ(Value(*batch), i);
    WorkOnABatch();
  }
  EXPECT_EQ(reader->Next(), nullptr);
  EXPECT_EQ(reader->Next(), nullptr);
  const auto threads = source.threads();
  EXPECT_EQ(threads.size(), 2u);  // the first batches inline, the rest on the reader's thread
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));
}

TEST(ReadAhead, TheSourcesErrorArrivesAfterTheBatchesBeforeIt) {
  auto reader = ReadAhead(std::make_unique<CountingSource>(-1, 5));
  for (int64_t i = 0; i < 5; ++i) {
    auto batch = reader->Next();
    ASSERT_TRUE(batch) << i;
    EXPECT_EQ(Value(*batch), i);
    WorkOnABatch();
  }
  try {
    reader->Next();
    FAIL() << "the source's error was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "batch 5 is corrupt");
  }
}

TEST(ReadAhead, ADroppedReaderStopsReadingAheadOfItsCaller) {
  std::atomic<int64_t> calls{0};
  auto reader = ReadAhead(std::make_unique<CountingSource>(-1, -1, &calls), 2);  // endless
  for (int64_t i = 0; i < 4; ++i) {
    ASSERT_EQ(Value(*reader->Next()), i);
    WorkOnABatch();
  }
  // Four taken, at most two waiting, and perhaps one more being read when it stopped.
  reader.reset();
  EXPECT_LE(calls.load(), 4 + 2 + 1);
  EXPECT_GE(calls.load(), 4);
}

TEST(ReadAhead, AnEmptySourceEndsAtOnce) {
  auto reader = ReadAhead(std::make_unique<CountingSource>(0));
  EXPECT_EQ(reader->Next(), nullptr);
  EXPECT_EQ(reader->Next(), nullptr);
}

// A map that takes longer for some batches than others, so that later batches finish
// first: i -> 10 * i, nothing for multiples of 7, an error at `fail_at`.
std::function<RecordBatchPtr(const RecordBatchPtr&)> TimesTen(std::set<std::thread::id>* threads, std::mutex* mutex,
                                                              int64_t fail_at = -1) {
  return [=](const RecordBatchPtr& batch) -> RecordBatchPtr {
    {
      std::lock_guard lock(*mutex);
      threads->insert(std::this_thread::get_id());
    }
    const int64_t i = Value(*batch);
    std::this_thread::sleep_for(std::chrono::microseconds(i % 3 == 0 ? 3000 : 200));
    if (i == fail_at) throw std::runtime_error("map failed at " + std::to_string(i));
    if (i % 7 == 0) return batch->Slice(0, 0);
    FixedWidthBuilder<int64_t> b(DataType::Int64());
    b.Append(10 * i);
    return RecordBatch::Make(batch->schema(), {b.Finish()});
  };
}

TEST(ParallelMap, BatchesComeBackInOrderMappedOnSeveralThreads) {
  std::set<std::thread::id> threads;
  std::mutex mutex;
  auto owned = std::make_unique<CountingSource>(40);
  SchemaPtr schema = owned->schema();
  auto reader = ParallelMap(std::move(owned), schema, TimesTen(&threads, &mutex), 4);
  for (int64_t i = 0; i < 40; ++i) {
    if (i % 7 == 0) continue;
    auto batch = reader->Next();
    ASSERT_TRUE(batch) << i;
    EXPECT_EQ(Value(*batch), 10 * i);
  }
  EXPECT_EQ(reader->Next(), nullptr);
  EXPECT_EQ(reader->Next(), nullptr);
  std::lock_guard lock(mutex);
  EXPECT_GE(threads.size(), 2u);
}

TEST(ParallelMap, ErrorsArriveAtTheirBatchsTurn) {
  std::set<std::thread::id> threads;
  std::mutex mutex;
  for (const auto& [source_fails, map_fails, message] :
       {std::tuple{int64_t{9}, int64_t{-1}, "batch 9 is corrupt"}, std::tuple{int64_t{-1}, int64_t{9}, "map failed at 9"}}) {
    auto owned = std::make_unique<CountingSource>(-1, source_fails);
    SchemaPtr schema = owned->schema();
    auto reader = ParallelMap(std::move(owned), schema, TimesTen(&threads, &mutex, map_fails), 4);
    for (int64_t i = 1; i < 9; ++i) {
      if (i % 7 == 0) continue;
      auto batch = reader->Next();
      ASSERT_TRUE(batch) << i;
      EXPECT_EQ(Value(*batch), 10 * i);
    }
    try {
      reader->Next();
      FAIL() << "the error was lost: " << message;
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), message);
    }
  }
}

TEST(ParallelMap, OneThreadMapsInline) {
  std::set<std::thread::id> threads;
  std::mutex mutex;
  auto owned = std::make_unique<CountingSource>(10);
  SchemaPtr schema = owned->schema();
  auto reader = ParallelMap(std::move(owned), schema, TimesTen(&threads, &mutex), 1);
  int64_t rows = 0;
  while (auto batch = reader->Next()) rows += batch->num_rows();
  EXPECT_EQ(rows, 8);  // 0 and 7 map to nothing
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

// (position, value) of every batch of `source`'s pieces, read on `threads` threads at
// once, by position; the first error any thread met, with its piece's first position.
struct SharedRead {
  std::vector<std::pair<uint64_t, int64_t>> batches;
  std::string error;
  uint64_t error_position = 0;
};
SharedRead ReadShared(SharedSource& source, size_t threads) {
  SharedRead read;
  std::mutex mutex;
  RunOnThreads(threads, [&](size_t) {
    SharedPiece piece;
    for (;;) {
      try {
        if (!source.NextPiece(piece)) return;
      } catch (const std::runtime_error& e) {
        std::lock_guard lock(mutex);
        read.error = e.what();
        read.error_position = piece.first_position;
        return;
      }
      std::lock_guard lock(mutex);
      for (size_t b = 0; b < piece.batches.size(); ++b) {
        EXPECT_GE(piece.positions[b], piece.first_position);
        read.batches.emplace_back(piece.positions[b], Value(*piece.batches[b]));
      }
    }
  });
  std::sort(read.batches.begin(), read.batches.end());
  return read;
}

// ParallelMap's shared pieces: the maps of TimesTen over CountingSource(count, fail_at).
class SharedParallelMap : public ::testing::Test {
 protected:
  std::unique_ptr<RecordBatchReader> Mapped(int64_t count, int64_t fail_at = -1) {
    return MappedOver(std::make_unique<CountingSource>(count, fail_at));
  }
  std::unique_ptr<RecordBatchReader> MappedOver(std::unique_ptr<RecordBatchReader> source) {
    SchemaPtr schema = source->schema();
    return ParallelMap(std::move(source), schema, TimesTen(&threads_, &mutex_), 4);
  }
  // The values read, by position, and factor * i for every i < count that maps to a value.
  static std::vector<int64_t> Values(const SharedRead& read) {
    std::vector<int64_t> values;
    for (const auto& [position, value] : read.batches) values.push_back(value);
    return values;
  }
  static std::vector<int64_t> Expected(int64_t count, int64_t factor) {
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < count; ++i)
      if (i % 7 != 0) expected.push_back(factor * i);
    return expected;
  }
  std::set<std::thread::id> threads_;
  std::mutex mutex_;
};

TEST_F(SharedParallelMap, EachThreadMapsThePiecesItTakes) {
  auto reader = Mapped(40);
  SharedSource* shared = SharedSourceOf(*reader);
  ASSERT_NE(shared, nullptr);
  const SharedRead read = ReadShared(*shared, 4);
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(Values(read), Expected(40, 10));  // by position: the source's order
  EXPECT_EQ(read.batches.back().first, 39u);
  std::lock_guard lock(mutex_);
  EXPECT_GE(threads_.size(), 2u);
}

TEST_F(SharedParallelMap, AMapOverASharedSourceMapsItsPiecesWhereTheyAreRead) {
  auto outer = MappedOver(Mapped(30));
  SharedSource* shared = SharedSourceOf(*outer);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(Values(ReadShared(*shared, 3)), Expected(30, 100));
}

TEST_F(SharedParallelMap, ASourcesErrorGoesToTheThreadThatTookItsPiece) {
  auto reader = Mapped(-1, 9);
  const SharedRead read = ReadShared(*SharedSourceOf(*reader), 1);
  EXPECT_EQ(read.error, "batch 9 is corrupt");
  EXPECT_EQ(read.error_position, 9u);
  EXPECT_EQ(Values(read), Expected(9, 10));
}

TEST_F(SharedParallelMap, AReaderAlreadyReadIsNotShared) {
  auto reader = Mapped(10);
  ASSERT_TRUE(reader->Next());
  EXPECT_EQ(SharedSourceOf(*reader), nullptr);
  // ReadAhead passes its source's pieces on, until it was read.
  auto unread = ReadAhead(Mapped(10));
  EXPECT_NE(SharedSourceOf(*unread), nullptr);
  auto ahead = ReadAhead(Mapped(10));
  ASSERT_TRUE(ahead->Next());
  EXPECT_EQ(SharedSourceOf(*ahead), nullptr);
}

}  // namespace
}  // namespace lancelet
