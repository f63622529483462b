#include "array/parallel_map.h"
#include "array/worker_thread.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lancelet {

namespace {

class InlineMapReader final : public RecordBatchReader {
 public:
  InlineMapReader(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema,
                  std::function<RecordBatchPtr(const RecordBatchPtr&)> map)
      : source_(std::move(source)), schema_(std::move(schema)), map_(std::move(map)) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    while (RecordBatchPtr batch = source_->Next())
      if (RecordBatchPtr out = map_(batch); out && out->num_rows() > 0) return out;
    return nullptr;
  }

 private:
  std::unique_ptr<RecordBatchReader> source_;
  SchemaPtr schema_;
  std::function<RecordBatchPtr(const RecordBatchPtr&)> map_;
};

class ParallelMapReader final : public RecordBatchReader {
 public:
  ParallelMapReader(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema,
                    std::function<RecordBatchPtr(const RecordBatchPtr&)> map, int threads)
      : source_(std::move(source)), schema_(std::move(schema)), map_(std::move(map)),
        window_(2 * size_t(threads)), helpers_(threads - 1) {}

  ~ParallelMapReader() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    std::unique_lock lock(mutex_);
    if (!started_) {  // the helpers start with the first batch the caller asks for
      started_ = true;
      for (int h = 0; h < helpers_; ++h)
        threads_.push_back(StartWorkerThread([this] {
          std::unique_lock worker_lock(mutex_);
          while (!stopping_ && !source_ended_)
            if (!PullAndMap(worker_lock)) changed_.wait(worker_lock);
        }));
    }
    for (;;) {
      if (!done_.empty() && done_.front().done) {
        Slot slot = std::move(done_.front());
        done_.pop_front();
        changed_.notify_all();  // the window moved on
        if (slot.error) {
          stopping_ = true;
          std::rethrow_exception(slot.error);
        }
        if (slot.end) return nullptr;
        if (slot.batch && slot.batch->num_rows() > 0) return slot.batch;
        continue;
      }
      if (done_.empty() && source_ended_) return nullptr;
      if (!PullAndMap(lock)) changed_.wait(lock);
    }
  }

 private:
  struct Slot {
    bool done = false, end = false;
    RecordBatchPtr batch;
    std::exception_ptr error;
  };

  // Claims the next batch, pulls it from the source in claim order (source_turn_, under
  // source_mutex_ only, so that the caller can take finished batches meanwhile) and maps
  // it; false when nothing may be claimed now. Called and returns with `lock` held.
  bool PullAndMap(std::unique_lock<std::mutex>& lock) {
    if (stopping_ || source_ended_ || done_.size() >= window_) return false;
    done_.emplace_back();
    const size_t index = next_index_++;
    lock.unlock();
    Slot result;
    RecordBatchPtr batch;
    {
      std::unique_lock source_lock(source_mutex_);
      source_turn_changed_.wait(source_lock, [&] { return source_turn_ == index; });
      try {
        if (!source_done_) batch = source_->Next();
      } catch (...) {
        result.error = std::current_exception();
      }
      if (!batch) source_done_ = true;
      ++source_turn_;
    }
    source_turn_changed_.notify_all();
    if (batch) {
      try {
        result.batch = map_(batch);
      } catch (...) {
        result.error = std::current_exception();
      }
    } else {
      result.end = !result.error;
    }
    result.done = true;
    lock.lock();
    if (!batch) source_ended_ = true;
    done_[index - (next_index_ - done_.size())] = std::move(result);
    changed_.notify_all();
    return true;
  }

  std::unique_ptr<RecordBatchReader> source_;
  SchemaPtr schema_;
  std::function<RecordBatchPtr(const RecordBatchPtr&)> map_;
  const size_t window_;
  const int helpers_;
  std::vector<std::thread> threads_;

  std::mutex source_mutex_;  // the source reads one batch at a time, in claim order
  std::condition_variable source_turn_changed_;
  size_t source_turn_ = 0;   // guarded by source_mutex_, as is source_done_
  bool source_done_ = false;

  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  std::deque<Slot> done_;  // the batches pulled and not yet returned, in order
  size_t next_index_ = 0;  // batches pulled so far (the last of done_ is next_index_ - 1)
  bool started_ = false, source_ended_ = false, stopping_ = false;
};

}  // namespace

std::unique_ptr<RecordBatchReader> ParallelMap(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema,
                                               std::function<RecordBatchPtr(const RecordBatchPtr&)> map,
                                               int threads) {
  if (threads < 2) return std::make_unique<InlineMapReader>(std::move(source), std::move(schema), std::move(map));
  return std::make_unique<ParallelMapReader>(std::move(source), std::move(schema), std::move(map), threads);
}

}  // namespace lancelet
