// A reader whose source runs on a thread of its own. Invariant: only the worker thread
// calls source_->Next(), and only while the consumer has fewer than depth_ batches
// waiting; the consumer sees the source's batches, its end and its error in order.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "array/shared_source.h"
#include "array/worker_thread.h"
#include "lancelet/record_batch.h"

namespace lancelet {
namespace {

class ReadAheadReader final : public RecordBatchReader, public ShareableReader {
 public:
  ReadAheadReader(std::unique_ptr<RecordBatchReader> source, size_t depth)
      : source_(std::move(source)), schema_(source_->schema()), depth_(depth) {}

  ~ReadAheadReader() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  SchemaPtr schema() const override { return schema_; }

  // Threads that read the source's pieces themselves need no thread reading ahead.
  SharedSource* Shared() override {
    if (worker_.joinable() || returned_ || ended_) return nullptr;
    return SharedSourceOf(*source_);
  }

  RecordBatchPtr Next() override {
    // The source is read inline until the caller is seen to spend kWorthAThread on
    // batches: a thread handoff costs tens of microseconds (more on a virtual machine), so
    // a caller that only sums a column would pay more than it gains. Starting late also
    // means that a reader opened but not yet read (the probe side of a join while its
    // build sides are read) decodes nothing concurrently.
    if (!worker_.joinable() && !ended_) {
      // Three slow batches in a row, so that one page fault or preemption does not decide.
      slow_batches_ = returned_ && Clock::now() - *returned_ >= kWorthAThread ? slow_batches_ + 1 : 0;
      if (slow_batches_ < 3) {
        RecordBatchPtr batch = source_->Next();
        ended_ = batch == nullptr;
        returned_ = Clock::now();
        return batch;
      }
      worker_ = StartWorkerThread([this] { Work(); });
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !ready_.empty() || ended_; });
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return nullptr;
    }
    RecordBatchPtr batch = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    changed_.notify_all();
    return batch;
  }

 private:
  void Work() {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return stopping_ || ready_.size() < depth_; });
        if (stopping_) return;
      }
      RecordBatchPtr batch;
      std::exception_ptr error;
      try {
        batch = source_->Next();
      } catch (...) {
        error = std::current_exception();
      }
      const bool end = batch == nullptr;
      {
        std::lock_guard lock(mutex_);
        if (end) {
          error_ = error;
          ended_ = true;
        } else {
          ready_.push_back(std::move(batch));
        }
      }
      changed_.notify_all();
      if (end) return;
    }
  }

  using Clock = std::chrono::steady_clock;
  static constexpr auto kWorthAThread = std::chrono::microseconds(50);

  std::unique_ptr<RecordBatchReader> source_;
  const SchemaPtr schema_;
  const size_t depth_;
  std::optional<Clock::time_point> returned_;  // when an inline Next() last returned
  int slow_batches_ = 0;                        // the caller's slow batches in a row, read inline
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<RecordBatchPtr> ready_;  // guarded by mutex_, as are the three below
  bool ended_ = false;                // the source returned its end or threw
  bool stopping_ = false;
  std::exception_ptr error_;
};

std::atomic<int> set_threads{0};  // SetReadAheadThreads's, 0 when unset

}  // namespace

int ReadAheadThreads() {
  static const int threads = [] {
    const char* text = std::getenv("LANCELET_THREADS");
    const int asked = text && *text ? std::atoi(text) : 0;
    return asked > 0 ? asked : CoresAvailable();
  }();
  const int set = set_threads.load(std::memory_order_relaxed);
  return set > 0 ? set : threads;
}

void SetReadAheadThreads(int threads) { set_threads.store(std::max(threads, 0), std::memory_order_relaxed); }

std::unique_ptr<RecordBatchReader> ReadAhead(std::unique_ptr<RecordBatchReader> source, size_t depth) {
  if (ReadAheadThreads() < 2 || depth == 0) return source;
  return std::make_unique<ReadAheadReader>(std::move(source), depth);
}

}  // namespace lancelet
