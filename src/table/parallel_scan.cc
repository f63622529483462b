// A dataset-order scan read by several threads (morsel-driven, as DuckDB's): the walk is
// cut into morsels, runs of up to kMorselBatches consecutive batches of one fragment.
// Threads claim morsels in order, each reading, resolving overlays and filtering its
// morsel with a FragmentReader of its own, and the caller receives the batches in
// dataset order. The caller reads morsels too while the next one it needs is not done,
// so a thread that starts late costs nothing. Past the morsel the caller is at, morsels
// of about kWindowBytes at most are claimed: memory stays bounded however far the
// threads could run.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

#include "array/worker_thread.h"
#include "lancelet/record_batch.h"
#include "table/scan_plan.h"

namespace lancelet::table {

class ScanPlan::Cursor::Parallel {
 public:
  // Null unless the plan is worth reading in parallel: a dataset-order scan of whole
  // fragments (no limit) on a store whose requests are cheap, with two threads or more
  // and two morsels or more.
  // Shared: no threads of its own; its callers claim and read the morsels (NextPiece).
  static std::unique_ptr<Parallel> For(const ScanPlan& plan, bool shared) {
    const PlannedScan& p = *plan.planned_;
    const int threads = ReadAheadThreads();
    if (threads < 2 || !p.read_ahead || p.state->store->costly_requests()) return nullptr;
    uint64_t rows = 0;
    for (const ScanTask& task : p.tasks) rows += SpanRows(task);
    if (rows <= (VerifyParallelism() ? 1 : uint64_t(p.batch_size))) return nullptr;
    auto parallel = std::unique_ptr<Parallel>(new Parallel(plan));
    if (parallel->morsels_.size() < 2) return nullptr;
    if (shared) parallel->idle_readers_.push_back(std::move(parallel->caller_reader_));
    else parallel->Start(threads - 1);
    return parallel;
  }

  ~Parallel() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  bool Next(FragmentBatch& out) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!handing_out_.empty()) {
        out = std::move(handing_out_.front());
        handing_out_.pop_front();
        return true;
      }
      if (next_out_ == morsels_.size()) return false;
      if (done_.empty() || !done_.front().done) {
        if (!ClaimAndRead(lock, caller_reader_)) changed_.wait(lock);
        continue;
      }
      Result result = std::move(done_.front());
      done_.pop_front();
      ++next_out_;
      changed_.notify_all();  // the window moved on
      if (result.error) {
        stopping_ = true;
        std::rethrow_exception(result.error);
      }
      handing_out_.assign(std::make_move_iterator(result.batches.begin()),
                          std::make_move_iterator(result.batches.end()));
    }
  }

  // Claims the next morsel and reads it on the calling thread, with a reader no other
  // thread uses meanwhile (one that read the same fragment last, when one is idle).
  bool NextPiece(uint64_t& first_position, std::vector<std::pair<uint64_t, FragmentBatch>>& batches) {
    batches.clear();
    size_t index;
    TaskReader reader;
    {
      std::lock_guard lock(mutex_);
      if (next_claim_ >= morsels_.size()) return false;
      index = next_claim_++;
      first_position = first_batch_[index];
      auto same = std::find_if(idle_readers_.begin(), idle_readers_.end(),
                               [&](const TaskReader& r) { return r.task == morsels_[index].task; });
      if (same == idle_readers_.end() && !idle_readers_.empty()) same = idle_readers_.begin();
      if (same != idle_readers_.end()) {
        reader = std::move(*same);
        idle_readers_.erase(same);
      }
    }
    auto give_back = [&] {
      std::lock_guard lock(mutex_);
      idle_readers_.push_back(std::move(reader));
    };
    try {
      ReadMorsel(index, reader, [&](uint64_t position, FragmentBatch& out) { batches.emplace_back(position, std::move(out)); });
    } catch (...) {
      give_back();
      throw;
    }
    give_back();
    return true;
  }

 private:
  struct Morsel {
    size_t task;
    uint64_t start, end;  // rows of the task's walk (ScanPlan::SpanRows)
  };
  struct Result {
    bool done = false;
    std::vector<FragmentBatch> batches;
    std::exception_ptr error;
  };
  // A thread's reader of the task it last read: consecutive morsels of one fragment
  // share it (its chunks and deletions), a new fragment opens another.
  struct TaskReader {
    size_t task = SIZE_MAX;
    std::unique_ptr<FragmentReader> reader;
  };

  // LANCELET_VERIFY_PARALLELISM=1 (for tests, as DuckDB's verify_parallelism): any scan
  // of two rows or more is read in parallel, in morsels of 3 rows and batches of 2, so
  // that tests on small tables cross morsel and batch boundaries everywhere.
  static bool VerifyParallelism() {
    static const bool verify = [] {
      const char* text = std::getenv("LANCELET_VERIFY_PARALLELISM");
      return text && *text && std::string_view(text) != "0";
    }();
    return verify;
  }

  static constexpr uint64_t kMorselBatches = 16;
  // A morsel holds about this many stored bytes at most (one batch at least).
  static constexpr uint64_t kMorselBytes = 1 << 20;
  // The morsels claimed past the one the caller is at hold about this much at most.
  static constexpr uint64_t kWindowBytes = 4 << 20;

  explicit Parallel(const ScanPlan& plan) : plan_(plan) {
    const PlannedScan& p = *plan.planned_;
    batch_rows_ = VerifyParallelism() ? 2 : uint64_t(p.batch_size);
    const uint64_t batch = batch_rows_;
    uint64_t batches = 0;  // in the morsels so far
    for (size_t t = 0; t < p.tasks.size(); ++t) {
      const uint64_t rows = SpanRows(p.tasks[t]);
      if (rows == 0) continue;
      if (morsels_.empty() && VerifyParallelism()) {
        Reader(caller_reader_, t);
      } else if (morsels_.empty()) {  // the first fragment's stored row size sets the morsel size
        Reader(caller_reader_, t);
        const uint64_t row_bytes =
            std::max({uint64_t(1), caller_reader_.reader->StoredRowBytes(p.read_fields), DecodedRowBytes(*p.read_schema)});
        batches_per_morsel_ = std::clamp<uint64_t>(kMorselBytes / (row_bytes * batch), 1, kMorselBatches);
        morsel_bytes_ = batches_per_morsel_ * batch * row_bytes;
      }
      const uint64_t morsel_rows = VerifyParallelism() ? 3 : batches_per_morsel_ * batch;
      for (uint64_t start = 0; start < rows; start += morsel_rows) {
        morsels_.push_back({t, start, std::min(rows, start + morsel_rows)});
        first_batch_.push_back(batches);
        batches += (morsels_.back().end - start + batch - 1) / batch;
      }
    }
  }

  // Threads beyond the window could never read at once: a scan of wide rows gets fewer.
  void Start(int workers) {
    window_ = std::clamp<size_t>(size_t(kWindowBytes / std::max<uint64_t>(morsel_bytes_, 1)), 2, size_t(workers) + 2);
    workers = std::min(workers, int(window_));
    for (int w = 0; w < workers; ++w)
      threads_.push_back(StartWorkerThread([this] {
        TaskReader reader;
        std::unique_lock lock(mutex_);
        while (!stopping_ && next_claim_ < morsels_.size())
          if (!ClaimAndRead(lock, reader)) changed_.wait(lock);
      }));
  }

  // What a row of `schema` takes decoded, as far as its fixed-width columns tell (a
  // vector's values included); variable-width ones count 16 bytes.
  static uint64_t DecodedRowBytes(const Schema& schema) {
    uint64_t bytes = 0;
    for (const FieldPtr& field : schema.fields()) {
      const DataType* type = field->type.get();
      uint64_t items = 1;
      while (type->id() == TypeId::kFixedSizeList) {
        items *= uint64_t(type->fixed_size());
        type = type->child(0)->type.get();
      }
      bytes += items * (type->byte_width() > 0 ? uint64_t(type->byte_width()) : 16);
    }
    return bytes;
  }

  const FragmentReader& Reader(TaskReader& held, size_t task) const {
    if (held.task != task) {
      const PlannedScan& p = *plan_.planned_;
      held.reader.reset();
      held.reader = std::make_unique<FragmentReader>(*p.state, *p.tasks[task].fragment);
      held.reader->ReadAhead();
      held.task = task;
    }
    return *held.reader;
  }

  // emit(position, batch) for each batch of morsel `index` with rows that pass the filter.
  template <typename Emit>
  void ReadMorsel(size_t index, TaskReader& reader, Emit&& emit) const {
    const Morsel& m = morsels_[index];
    const PlannedScan& p = *plan_.planned_;
    const FragmentReader& r = Reader(reader, m.task);
    for (uint64_t start = m.start; start < m.end; start += batch_rows_) {
      FragmentBatch out;
      if (plan_.ReadSpan(r, p.tasks[m.task], start, std::min(m.end, start + batch_rows_), out))
        emit(first_batch_[index] + (start - m.start) / batch_rows_, out);
    }
  }

  // Claims the next morsel and reads it, without the lock meanwhile; false when none may
  // be claimed now (all claimed, the window is full, or the scan is stopping).
  bool ClaimAndRead(std::unique_lock<std::mutex>& lock, TaskReader& reader) {
    if (stopping_ || next_claim_ >= morsels_.size() || next_claim_ >= next_out_ + window_) return false;
    const size_t index = next_claim_++;
    done_.emplace_back();
    lock.unlock();
    Result result;
    try {
      ReadMorsel(index, reader, [&](uint64_t, FragmentBatch& out) { result.batches.push_back(std::move(out)); });
    } catch (...) {
      result.error = std::current_exception();
    }
    result.done = true;
    lock.lock();
    done_[index - next_out_] = std::move(result);
    changed_.notify_all();
    return true;
  }

  const ScanPlan& plan_;
  std::vector<Morsel> morsels_;
  std::vector<uint64_t> first_batch_;  // [morsel]: the position of its first batch
  uint64_t batches_per_morsel_ = 1;
  uint64_t morsel_bytes_ = 0;  // estimated, decoded
  uint64_t batch_rows_ = 1;
  size_t window_ = 1;
  TaskReader caller_reader_;
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  size_t next_claim_ = 0;           // morsels below were claimed
  size_t next_out_ = 0;             // morsels below were handed out
  std::deque<Result> done_;         // morsels [next_out_, next_claim_)
  std::deque<FragmentBatch> handing_out_;  // the rest of morsel next_out_ - 1
  std::vector<TaskReader> idle_readers_;   // shared: readers no thread is using
  bool stopping_ = false;
};

ScanPlan::Cursor::Cursor(const ScanPlan& plan) : plan_(plan) {}
ScanPlan::Cursor::~Cursor() = default;

bool ScanPlan::Cursor::ParallelNext(FragmentBatch& out) {
  if (!parallel_checked_) {
    parallel_checked_ = true;
    parallel_ = Parallel::For(plan_, false);
  }
  if (!parallel_) return NextInDatasetOrder(out);
  return parallel_->Next(out);
}

bool ScanPlan::Cursor::Share() {
  if (parallel_checked_) return false;
  parallel_checked_ = true;
  parallel_ = Parallel::For(plan_, true);
  return parallel_ != nullptr;
}

bool ScanPlan::Cursor::NextPiece(uint64_t& first_position, std::vector<std::pair<uint64_t, FragmentBatch>>& batches) {
  return parallel_->NextPiece(first_position, batches);
}

}  // namespace lancelet::table
