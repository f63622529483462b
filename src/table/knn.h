// The pieces exact and indexed (IVF) nearest-neighbour search share: a query checked
// against its column, a bounded top-k of candidates by row address, and exact scoring of
// rows read through ordinary scans (so prefilters, deletions and overlays apply).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "index/distance.h"
#include "lancelet/dataset.h"
#include "lancelet/vector_search.h"

namespace lancelet::table {

struct Candidate {
  float distance;
  uint64_t address;  // fragment << 32 | offset
  bool operator<(const Candidate& other) const {
    return distance != other.distance ? distance < other.distance : address < other.address;
  }
};

// The k smallest candidates offered (by distance, then address): a max-heap of at most k.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k); }
  void Offer(float distance, uint64_t address) {
    const Candidate c{distance, address};
    if (heap_.size() < k_) {
      heap_.push_back(c);
      std::push_heap(heap_.begin(), heap_.end());
    } else if (k_ > 0 && c < heap_.front()) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.back() = c;
      std::push_heap(heap_.begin(), heap_.end());
    }
  }
  // No candidate farther than this can enter (infinity until k are held): a cheap test
  // before Offer for callers offering many.
  float Bound() const { return heap_.size() < k_ ? std::numeric_limits<float>::infinity() : heap_.front().distance; }
  void Merge(const TopK& other) {
    for (const auto& c : other.heap_) Offer(c.distance, c.address);
  }
  std::vector<Candidate> Sorted() const {
    std::vector<Candidate> out = heap_;
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  size_t k_;
  std::vector<Candidate> heap_;
};

// A query checked against its column, in the form the kernels take.
struct PreparedQuery {
  std::string column;
  // The metric asked for; nullopt: the default (the index's when one is used, else l2 on
  // float columns and hamming on uint8 ones). `metric` is the one exact search uses.
  std::optional<DistanceType> asked;
  index::Metric metric = index::Metric::kL2;
  TypeId element = TypeId::kFloat32;
  size_t dim = 0;
  std::vector<float> as_float;
  std::vector<double> as_double;
  std::vector<uint8_t> as_bytes;
  double norm2 = 0;  // squared norm, for cosine
};

// What one search did, for Dataset::ExplainSearch: counted by the search as it runs.
struct SearchTrace {
  std::string exact_reason;  // why every row was scored; empty when an index answered
  std::string index_name;
  const char* index_type = "";  // IVF_FLAT, IVF_PQ
  const char* metric = "";
  size_t segments = 0;
  size_t partitions = 0;  // per segment, the most
  size_t nprobes = 0;
  uint64_t probed_rows = 0;  // rows of the probed partitions
  // Of those, live, covered, not stale and passing the prefilter: counted only when
  // count_candidates (explain) is set beforehand, as counting makes every row be checked.
  uint64_t candidates = 0;
  bool count_candidates = false;
  uint64_t refined = 0;      // re-ranked with the rows' own vectors
  uint64_t stale_rows = 0;   // overlaid after the index was built: scored exactly when probed
  size_t flat_fragments = 0;  // not covered by any segment: searched exactly
};

// The index layer's metric of a public DistanceType.
index::Metric MetricOf(DistanceType type);

// Whether row r of a fixed_size_list column (its `items` child, `dim` wide) holds a
// vector: the list slot valid and, when the items hold NULLs, every item of it valid.
bool VectorPresent(const ArrayData& list, const ArrayData& items, int64_t r, size_t dim);

// `q` with its metric replaced (the query values stay; the norm is kept for cosine).
PreparedQuery WithMetric(PreparedQuery q, index::Metric metric);

// The k nearest live rows the prefilter keeps, nearest first, scored exactly: every
// row of `fragments` (nullopt: every fragment), on up to ReadAheadThreads() threads.
std::vector<Candidate> ExactTopK(const Dataset& dataset, const PreparedQuery& q, ExprPtr prefilter, size_t k,
                                 const std::optional<std::set<uint64_t>>& fragments = std::nullopt);
// The rows `rows` names (fragment id -> ascending offsets) that are live and pass the
// prefilter, scored exactly and offered to `top`.
void ScoreRowsExactly(const Dataset& dataset, const PreparedQuery& q, ExprPtr prefilter,
                      std::shared_ptr<const std::map<uint64_t, std::vector<uint64_t>>> rows, TopK& top);

// The k nearest rows found through the vector index on q.column when there is one the
// query can use (nullopt otherwise: search exactly): table/ivf_search.cc.
// `trace`, when given, is filled in.
std::optional<std::vector<Candidate>> IndexedTopK(const Dataset& dataset, const PreparedQuery& q,
                                                  const VectorQuery& query, ExprPtr prefilter,
                                                  SearchTrace* trace = nullptr);

}  // namespace lancelet::table
