// How a planned scan runs (table/scan_planner.h plans it): a fragment-by-fragment walk
// over live rows, or, for scored candidates, a walk in score order. Scan, count, delete
// and update share it, so every one of them sees rows exactly the same way.
#pragma once

#include <deque>
#include <future>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "table/fragment_reader.h"
#include "table/scan_planner.h"

namespace lancelet::table {

// Physical offsets of rows of one fragment, ascending: the range [first, first + count),
// or a list. A scan of a fragment without deletions is ranges only, so it never spends
// memory or time on one offset per row.
struct RowSet {
  bool is_range = true;
  uint64_t first = 0, count = 0;  // when is_range
  std::vector<uint64_t> offsets;  // when !is_range

  static RowSet Range(uint64_t first, uint64_t count) { return {true, first, count, {}}; }
  static RowSet List(std::vector<uint64_t> offsets) { return {false, 0, 0, std::move(offsets)}; }
  size_t size() const { return is_range ? size_t(count) : offsets.size(); }
  std::vector<uint64_t> ToVector() const;
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (is_range) {
      for (uint64_t o = first; o < first + count; ++o) fn(o);
    } else {
      for (uint64_t o : offsets) fn(o);
    }
  }
};

// A batch of live rows from one fragment, with the physical offsets they came from
// (ascending, but in score order the rows' order).
struct FragmentBatch {
  const lance::table::DataFragment* fragment = nullptr;
  RowSet rows;
  RecordBatchPtr batch;  // columns: the plan's batch schema
};

class ScanPlan {
 public:
  explicit ScanPlan(std::shared_ptr<const PlannedScan> planned);
  // Plans `spec` over `state` (ScanPlanner), then executes that.
  ScanPlan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec);

  const PlannedScan& planned() const { return *planned_; }
  const SchemaPtr& output_schema() const { return planned_->output_schema; }
  const std::shared_ptr<const DatasetState>& state() const { return planned_->state; }

  // Calls `fn` for each batch of live rows that pass the filter, in the plan's order,
  // with the batch columns (not yet projected). Stops when fn returns false, or at the
  // plan's limit.
  void ForEachBatch(const std::function<bool(const FragmentBatch&)>& fn) const;
  // Narrows a batch to the output columns.
  RecordBatchPtr Project(const RecordBatch& batch) const;

  bool has_filter() const { return planned_->filter != nullptr; }
  // Where indexes narrowed the filter (table/index_plan.h); empty for a flat scan.
  const std::optional<IndexedRows>& indexed() const { return planned_->indexed; }
  // The fragments the scan visits, in dataset order, each with its candidates.
  const std::vector<ScanTask>& tasks() const { return planned_->tasks; }
  // The read columns at the given physical offsets of one fragment (no filter), for a
  // take: overlay values are read only at the ranks these rows need. Not for a plan
  // with a score column (a take has no scores).
  RecordBatchPtr TakeRows(const FragmentReader& reader, std::vector<uint64_t> offsets) const {
    return ReadBatch(reader, RowSet::List(std::move(offsets)), Access::kTake);
  }

  // Pull-based walk with the same semantics as ForEachBatch (streams bound memory). In
  // score order a batch is a run of consecutive output rows of one fragment.
  class Cursor {
   public:
    explicit Cursor(const ScanPlan& plan);
    ~Cursor();
    // The next non-empty batch, or false at the end.
    bool Next(FragmentBatch& out);
    // Whether the scan is read as morsels that threads claim and read themselves
    // (NextPiece), not by Next(): when the plan is worth reading in parallel (as Next()
    // would), has no limit and Next() was not called.
    bool Share();
    // Thread-safe once Share() said so: the batches of the next morsel with their
    // positions in dataset order (SharedSource::NextPiece); false when none is left.
    bool NextPiece(uint64_t& first_position, std::vector<std::pair<uint64_t, FragmentBatch>>& batches);
    // Candidates looked at so far (score order only): where the scan stopped.
    uint64_t candidates_read() const { return rank_; }

   private:
    class Parallel;  // parallel_scan.cc
    // Dataset order: from parallel_ when the plan is worth it, else NextInDatasetOrder.
    bool ParallelNext(FragmentBatch& out);
    bool NextInDatasetOrder(FragmentBatch& out);
    bool NextInScoreOrder(FragmentBatch& out);
    // Reads the next window of ranked candidates into ready_.
    void ReadRankedWindow();
    const FragmentReader& ReaderOf(uint32_t task);
    // The reader of task_: made now, or taken from those opened ahead. Where a request
    // costs a round trip, the next kOpenAhead tasks' readers are opened together first
    // (FragmentReader::OpenAll), so their footers and deletion files cost one round.
    std::unique_ptr<FragmentReader> OpenTaskReader();
    static constexpr size_t kOpenAhead = 16;
    // A scan reading fragments to their end on such a store fetches rows a window of
    // about kWindowBytes at a time (from one to kMaxWindowBatches batches), the fields
    // side by side (FragmentReader::RowsFetch): a few large requests instead of one per
    // batch and field. While a window is read, the next one is fetched in the background
    // (ahead_). The store's cache holds both (S3: 64 MiB by default).
    void FetchAhead(uint64_t start, uint64_t end, uint64_t rows);
    static constexpr uint64_t kWindowBytes = 16 << 20;
    static constexpr uint64_t kMaxWindowBatches = 64;
    uint64_t window_rows_ = 0;  // of task_
    uint64_t ready_until_ = 0;  // rows of task_ below this were fetched
    uint64_t ahead_until_ = 0;  // ... or are being fetched by ahead_

    const ScanPlan& plan_;
    int64_t passed_ = 0;  // rows returned, against the plan's limit
    // Dataset order:
    size_t task_ = 0;
    uint64_t start_ = 0;  // next offset, or next index into the task's candidates
    std::unique_ptr<FragmentReader> reader_;
    std::map<size_t, std::unique_ptr<FragmentReader>> opened_ahead_;  // by task
    std::future<void> ahead_;  // after reader_: joined before the reader goes
    // A scan of whole fragments on a local store with more than one thread: the batches
    // come from Parallel instead (made at the first Next()).
    std::unique_ptr<Parallel> parallel_;
    bool parallel_checked_ = false;
    // Score order:
    size_t rank_ = 0;  // next index into the plan's ranked candidates
    std::deque<FragmentBatch> ready_;
    std::map<uint32_t, std::unique_ptr<FragmentReader>> readers_;  // by task
  };

 private:
  friend class Cursor;
  // How rows are being read: a scan visits whole fragments, so it may read a fragment's
  // small overlays whole (FragmentReader::ReadRows); a take reads only what it returns.
  enum class Access { kScan, kTake };
  RecordBatchPtr ReadBatch(const FragmentReader& reader, const RowSet& rows, Access access) const;
  // Reads read_schema columns i where want[i] at `rows`; the others are left null.
  void ReadColumns(const FragmentReader& reader, const RowSet& rows, const std::vector<bool>& want, Access access,
                   std::vector<ArrayPtr>& columns) const;
  // Narrows out.rows (live rows of `task`) to those that pass the filter and reads them
  // into out.batch (read_schema); false when none passes.
  bool ReadPassing(const FragmentReader& reader, const ScanTask& task, FragmentBatch& out) const;
  // The rows of a dataset-order walk of `task` at [start, end) (physical offsets, or
  // indices into its candidates), less deleted ones, that pass the filter, into out;
  // false when none is left.
  bool ReadSpan(const FragmentReader& reader, const ScanTask& task, uint64_t start, uint64_t end,
                FragmentBatch& out) const;
  // Rows a dataset-order walk of `task` covers: its candidates or its physical rows.
  static uint64_t SpanRows(const ScanTask& task);

  std::shared_ptr<const PlannedScan> planned_;
};

}  // namespace lancelet::table
