#include "array/parallel_map.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "array/shared_source.h"
#include "array/worker_thread.h"

namespace lancelet {

namespace {

class InlineTasksReader final : public RecordBatchReader {
 public:
  InlineTasksReader(std::function<BatchTask()> next_task, SchemaPtr schema)
      : next_task_(std::move(next_task)), schema_(std::move(schema)) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    while (BatchTask task = next_task_())
      if (RecordBatchPtr out = task(); out && out->num_rows() > 0) return out;
    return nullptr;
  }

 private:
  std::function<BatchTask()> next_task_;
  SchemaPtr schema_;
};

// Shared (SharedSource), it starts no threads: each thread that asks for a piece takes the
// next task, in turn, and runs it itself.
class ParallelTasksReader final : public RecordBatchReader, public ShareableReader, private SharedSource {
 public:
  ParallelTasksReader(std::function<BatchTask()> next_task, SchemaPtr schema, int threads)
      : next_task_(std::move(next_task)), schema_(std::move(schema)), window_(2 * size_t(threads)),
        helpers_(threads - 1) {}

  ~ParallelTasksReader() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  SchemaPtr schema() const override { return schema_; }

  SharedSource* Shared() override {
    std::lock_guard lock(mutex_);
    if (started_) return nullptr;
    started_ = true;  // no helpers: the threads that take pieces run the tasks
    return this;
  }

  RecordBatchPtr Next() override {
    std::unique_lock lock(mutex_);
    if (!started_) {  // the helpers start with the first batch the caller asks for
      started_ = true;
      for (int h = 0; h < helpers_; ++h)
        threads_.push_back(StartWorkerThread([this] {
          std::unique_lock worker_lock(mutex_);
          while (!stopping_ && !source_ended_)
            if (!ClaimAndRun(worker_lock)) changed_.wait(worker_lock);
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
      if (!ClaimAndRun(lock)) changed_.wait(lock);
    }
  }

 private:
  bool NextPiece(SharedPiece& piece) override {
    piece.positions.clear();
    piece.batches.clear();
    BatchTask task;
    {
      std::lock_guard source_lock(source_mutex_);
      if (source_done_) return false;
      piece.first_position = source_turn_++;
      try {
        task = next_task_();
      } catch (...) {
        source_done_ = true;
        throw;
      }
      if (!task) {
        source_done_ = true;
        return false;
      }
    }
    if (RecordBatchPtr out = task(); out && out->num_rows() > 0) {
      piece.positions.push_back(piece.first_position);
      piece.batches.push_back(std::move(out));
    }
    return true;
  }

  struct Slot {
    bool done = false, end = false;
    RecordBatchPtr batch;
    std::exception_ptr error;
  };

  // Claims the next task, takes it from the source in claim order (source_turn_, under
  // source_mutex_ only, so that the caller can take finished batches meanwhile) and runs
  // it; false when nothing may be claimed now. Called and returns with `lock` held.
  bool ClaimAndRun(std::unique_lock<std::mutex>& lock) {
    if (stopping_ || source_ended_ || done_.size() >= window_) return false;
    done_.emplace_back();
    const size_t index = next_index_++;
    lock.unlock();
    Slot result;
    BatchTask task;
    {
      std::unique_lock source_lock(source_mutex_);
      source_turn_changed_.wait(source_lock, [&] { return source_turn_ == index; });
      try {
        if (!source_done_) task = next_task_();
      } catch (...) {
        result.error = std::current_exception();
      }
      if (!task) source_done_ = true;
      ++source_turn_;
    }
    source_turn_changed_.notify_all();
    const bool source_end = !task;
    if (task) {
      try {
        result.batch = task();
      } catch (...) {
        result.error = std::current_exception();
      }
      task = nullptr;  // what it holds goes now, not when the next task is claimed
    } else {
      result.end = !result.error;
    }
    result.done = true;
    lock.lock();
    if (source_end) source_ended_ = true;
    done_[index - (next_index_ - done_.size())] = std::move(result);
    changed_.notify_all();
    return true;
  }

  std::function<BatchTask()> next_task_;
  SchemaPtr schema_;
  const size_t window_;
  const int helpers_;
  std::vector<std::thread> threads_;

  std::mutex source_mutex_;  // tasks are taken one at a time, in claim order
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

// ParallelMap: once read, ParallelTasks over the source's batches; shared, the source's
// own pieces when it has them (each thread decodes what it maps), else those tasks'.
class ParallelMapReader final : public RecordBatchReader, public ShareableReader {
 public:
  using Map = std::function<RecordBatchPtr(const RecordBatchPtr&)>;
  ParallelMapReader(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema, Map map, int threads)
      : source_(std::move(source)), schema_(std::move(schema)), map_(std::make_shared<Map>(std::move(map))),
        threads_(threads) {}

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override { return Tasks().Next(); }

  SharedSource* Shared() override {
    if (tasks_) return nullptr;
    if (SharedSource* pieces = SharedSourceOf(*source_)) {
      mapped_.emplace(*pieces, [map = map_](const RecordBatchPtr& batch) { return (*map)(batch); });
      return &*mapped_;
    }
    return SharedSourceOf(Tasks());
  }

 private:
  RecordBatchReader& Tasks() {
    if (!tasks_) {
      auto next_task = [source = source_.get(), map = map_]() -> BatchTask {
        RecordBatchPtr batch = source->Next();
        if (!batch) return {};
        return [batch = std::move(batch), map] { return (*map)(batch); };
      };
      tasks_ = ParallelTasks(std::move(next_task), schema_, threads_);
    }
    return *tasks_;
  }

  std::unique_ptr<RecordBatchReader> source_;  // before tasks_, which reads it
  SchemaPtr schema_;
  std::shared_ptr<Map> map_;
  int threads_;
  std::unique_ptr<RecordBatchReader> tasks_;
  std::optional<MappedPieces> mapped_;
};

}  // namespace

std::unique_ptr<RecordBatchReader> ParallelTasks(std::function<BatchTask()> next_task, SchemaPtr schema, int threads) {
  if (threads < 2) return std::make_unique<InlineTasksReader>(std::move(next_task), std::move(schema));
  return std::make_unique<ParallelTasksReader>(std::move(next_task), std::move(schema), threads);
}

std::unique_ptr<RecordBatchReader> ParallelMap(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema,
                                               std::function<RecordBatchPtr(const RecordBatchPtr&)> map,
                                               int threads) {
  return std::make_unique<ParallelMapReader>(std::move(source), std::move(schema), std::move(map), threads);
}

}  // namespace lancelet
