// Nearest-neighbour search through a vector (IVF_FLAT / IVF_PQ) index, as the reference
// answers it: the nprobes partitions nearest the query are scored (stored vectors, or PQ
// codes through a distance table); their rows that are deleted, fail the prefilter, or
// whose vectors overlays changed after the index was built are dropped; the k (or
// k * refine_factor, then re-ranked with the rows' own vectors) nearest are merged with
// the exact scores of the rows no segment covers and of the stale rows whose current
// vectors lie in the probed partitions (each routed to the partition nearest it, as a
// build now would; all stale rows when there are too many to keep their vectors).
#include <algorithm>
#include <cmath>
#include <set>
#include <span>

#include <fmt/format.h>

#include "lancelet/error.h"
#include "table/dataset_state.h"
#include "table/feature_flags.h"
#include "table/index_plan.h"
#include "table/index_section.h"
#include "table/index_staleness.h"
#include "table/knn.h"

namespace lancelet::table {
namespace {

// The reference 12.0.0 probes 20 partitions when a query names none (its explain plan
// shows minimum_nprobes=20).
constexpr int64_t kDefaultNprobes = 20;

using RowMap = std::map<uint64_t, std::vector<uint64_t>>;  // fragment id -> ascending offsets

struct Segment {
  const lance::table::IndexMetadata* meta = nullptr;
  std::shared_ptr<const index::IvfIndex> index;
  std::optional<format::RoaringBitmap> fragments;  // nullopt: every fragment
  bool Covers(uint64_t fragment) const { return !fragments || fragments->Contains(uint32_t(fragment)); }
};

const char* TypeNameOf(const index::IvfIndex& index) {
  return index.kind() == index::IvfKind::kPq ? "IVF_PQ" : "IVF_FLAT";
}

// The segments of the first-listed vector index on the top-level field `column`. None,
// with `unreadable` saying why, when that index is of a kind lancelet does not search (a
// reference's IVF_HNSW_SQ, IVF_SQ, IVF_RQ, ...): the column is then searched exactly.
std::vector<Segment> SegmentsOn(const DatasetState& state, const std::string& column, std::string& unreadable) {
  auto path = state.schema.StructPathNamed(column);
  if (!path || path->ids.size() != 1) return {};
  std::vector<Segment> out;
  std::string name;
  for (const auto& meta : state.indices.indices()) {
    if (!index::IsVectorIndexTypeUrl(meta.index_details().type_url()) || meta.fields_size() != 1 ||
        meta.fields(0) != path->ids[0])
      continue;
    if (name.empty()) name = meta.name();
    if (meta.name() != name) continue;
    std::shared_ptr<const index::IvfIndex> opened;
    try {
      opened = state.OpenVectorIndex(meta);
    } catch (const Error& e) {
      // Only another kind is passed over; an IVF_FLAT / IVF_PQ lancelet cannot read (4-bit
      // codes, hamming) stays an error that tells the user to search exactly.
      if (e.kind() != ErrorKind::kNotSupported ||
          index::IsReadableVectorIndexType(index::VectorIndexTypeOf(*state.store, state.IndexDirectory(meta))))
        throw;
      unreadable = fmt::format("index '{}' is not one lancelet searches: {}", meta.name(), e.what());
      return {};
    }
    out.push_back(Segment{&meta, std::move(opened), IndexFragments(meta)});
  }
  return out;
}

// Per segment, the rows of the fragments it covers that overlays changed after it was
// built; a row under the first segment covering it only, so that none is scored twice.
std::vector<RowMap> StaleRowsPerSegment(const DatasetState& state, const std::vector<Segment>& segments) {
  std::vector<RowMap> out(segments.size());
  for (const auto& fragment : state.manifest.fragments()) {
    if (fragment.overlays_size() == 0) continue;
    std::set<uint64_t> taken;
    for (size_t s = 0; s < segments.size(); ++s) {
      if (!segments[s].Covers(fragment.id())) continue;
      const format::RoaringBitmap rows =
          IndexStaleness::Of(state.schema, *segments[s].meta).RowsOf(*state.OverlaysOf(fragment));
      rows.ForEach([&](uint32_t offset) {
        if (taken.insert(offset).second) out[s][fragment.id()].push_back(offset);
      });
    }
  }
  return out;
}

// Maps an index's ids to row addresses: the ids themselves, or under stable row ids the
// live row holding each (nullopt for a row id no live row has).
class IdMapper {
 public:
  explicit IdMapper(const DatasetState& state)
      : located_((state.manifest.reader_feature_flags() & kFlagStableRowIds) ? RowIdAddresses(state) : nullptr) {}
  std::optional<uint64_t> Address(uint64_t id) const {
    if (!located_) return id;
    auto it = std::lower_bound(located_->begin(), located_->end(), std::make_pair(id, uint64_t(0)));
    if (it == located_->end() || it->first != id) return std::nullopt;
    return it->second;
  }

 private:
  std::shared_ptr<const DatasetState::RowIdAddresses> located_;
};

// The current vectors of `rows`, read through a scan (deleted rows and NULL vectors left
// out), grouped by the partition of `ivf` each is nearest, as a query would be routed.
DatasetState::StaleVectors::Partitioned PartitionStale(const Dataset& dataset, const std::string& column,
                                                       const index::IvfIndex& ivf, const RowMap& rows) {
  const size_t dim = ivf.dim();
  std::vector<uint32_t> partition_of;
  std::vector<uint64_t> addresses;
  std::vector<float> vectors;
  ScanSpec spec;
  spec.columns = std::vector<std::string>{column, "_rowaddr"};
  spec.rows = std::make_shared<RowMap>(rows);
  auto reader = dataset.Scan(spec);
  while (RecordBatchPtr batch = reader->Next()) {
    const ArrayData& list = *batch->column(0);
    const ArrayData& items = *list.child(0);
    const float* values = items.values<float>();
    const uint64_t* address = batch->column(1)->values<uint64_t>();
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      if (!VectorPresent(list, items, r, dim)) continue;
      const std::span<const float> v(values + size_t(r) * dim, dim);
      std::optional<index::IvfQuery> routed;
      try {
        routed = ivf.Prepare(v);
      } catch (const Error&) {  // a zero vector under cosine: no distance to any query
        continue;
      }
      partition_of.push_back(ivf.NearestPartitions(*routed, 1).front());
      addresses.push_back(address[r]);
      vectors.insert(vectors.end(), v.begin(), v.end());
    }
  }
  DatasetState::StaleVectors::Partitioned out;  // a counting sort by partition
  out.starts.assign(ivf.num_partitions() + 1, 0);
  for (uint32_t p : partition_of) ++out.starts[p + 1];
  for (size_t p = 0; p < ivf.num_partitions(); ++p) out.starts[p + 1] += out.starts[p];
  out.addresses.resize(addresses.size());
  out.vectors.resize(vectors.size());
  std::vector<uint64_t> next(out.starts.begin(), out.starts.end() - 1);
  for (size_t i = 0; i < addresses.size(); ++i) {
    const uint64_t at = next[partition_of[i]]++;
    out.addresses[at] = addresses[i];
    std::copy_n(vectors.begin() + ptrdiff_t(i * dim), dim, out.vectors.begin() + ptrdiff_t(at * dim));
  }
  return out;
}

// IVF_PQ: `ivf`'s rows less those `bits` (fragment id -> stale offsets) marks, into
// out.kept_*, partition by partition, codes transposed within each as the index's are.
void KeepFresh(const DatasetState& state, const index::IvfIndex& ivf,
               const std::map<uint64_t, std::vector<uint64_t>>& bits, DatasetState::StaleVectors::Partitioned& out) {
  const IdMapper mapper(state);
  const size_t width = ivf.code_bytes();
  out.kept_starts.assign(1, 0);
  std::vector<uint32_t> kept;  // rows kept of the partition at hand
  for (size_t p = 0; p < ivf.num_partitions(); ++p) {
    const uint64_t offset = ivf.partition_offset(p), n = ivf.partition_length(p);
    kept.clear();
    for (uint64_t r = 0; r < n; ++r) {
      const auto address = mapper.Address(ivf.row_ids()[offset + r]);
      bool stale = false;
      if (address) {
        const auto it = bits.find(*address >> 32);
        const uint64_t o = *address & 0xffffffffu;
        stale = it != bits.end() && o / 64 < it->second.size() && (it->second[o / 64] >> (o % 64) & 1);
      }
      if (!stale) kept.push_back(uint32_t(r));
    }
    const size_t base = out.kept_codes.size();
    out.kept_codes.resize(base + kept.size() * width);
    const uint8_t* codes = ivf.pq_codes() + offset * width;
    for (size_t j = 0; j < width; ++j)
      for (size_t i = 0; i < kept.size(); ++i) out.kept_codes[base + j * kept.size() + i] = codes[j * n + kept[i]];
    for (uint32_t r : kept) out.kept_ids.push_back(ivf.row_ids()[offset + r]);
    out.kept_starts.push_back(out.kept_ids.size());
  }
}

// The index's stale rows, and unless there are too many to hold, their current vectors
// by partition: made once per dataset version, not per query (each query would
// otherwise decode every stale row's vector and score them all).
std::shared_ptr<const DatasetState::StaleVectors> StaleVectorsOf(const Dataset& dataset, const std::string& column,
                                                                 const std::vector<Segment>& segments) {
  const DatasetState& state = StateOf(dataset);
  using Stale = std::shared_ptr<const DatasetState::StaleVectors>;
  return state.CachedStaleVectors(segments.front().meta->name() + "\n" + column, [&]() -> Stale {
    auto out = std::make_shared<DatasetState::StaleVectors>();
    const std::vector<RowMap> per_segment = StaleRowsPerSegment(state, segments);
    uint64_t count = 0;
    for (const auto& rows : per_segment)
      for (const auto& [fragment, offsets] : rows) {
        auto& all = out->rows[fragment];
        all.insert(all.end(), offsets.begin(), offsets.end());
        count += offsets.size();
      }
    for (auto& [fragment, offsets] : out->rows) {
      std::sort(offsets.begin(), offsets.end());
      auto& words = out->bits[fragment];
      words.assign(offsets.back() / 64 + 1, 0);
      for (uint64_t o : offsets) words[o / 64] |= uint64_t(1) << (o % 64);
      out->bytes += words.size() * sizeof(uint64_t);
    }
    const uint64_t row_bytes = segments.front().index->dim() * sizeof(float) + 2 * sizeof(uint64_t);
    out->bytes += count * (sizeof(uint64_t) + sizeof(uint64_t));
    if (count == 0 || count * row_bytes > DatasetState::kStaleVectorsCacheBytes) return out;
    for (size_t s = 0; s < segments.size(); ++s) {
      out->segments.push_back(PartitionStale(dataset, column, *segments[s].index, per_segment[s]));
      auto& added = out->segments.back();
      const index::IvfIndex& ivf = *segments[s].index;
      // The copy only while the whole entry stays within the cache's budget (an index of
      // 1M rows of 16-byte codes needs 24 MB), else probes score the index's partitions.
      const uint64_t copy = ivf.num_rows() * (ivf.code_bytes() + sizeof(uint64_t));
      const uint64_t budget = DatasetState::kStaleVectorsCacheBytes;
      if (ivf.kind() == index::IvfKind::kPq && out->bytes + count * row_bytes + copy <= budget)
        KeepFresh(state, ivf, out->bits, added);
      out->bytes += added.vectors.size() * sizeof(float) + added.addresses.size() * sizeof(uint64_t) +
                    added.kept_ids.size() * sizeof(uint64_t) + added.kept_codes.size();
    }
    return out;
  });
}


// The stale rows of the probed partitions (StaleVectors::segments), each partition's
// scored exactly in one pass over its vectors. With `direct` (nothing can drop a row
// later: no prefilter, no deletions) only the k nearest are kept, since a stale row
// with k stale rows nearer cannot be among the k nearest of all; else every one is kept
// for the prefilter's scan.
class StaleProbe {
 public:
  StaleProbe(bool direct, size_t k) : direct_(direct), top_(direct ? k : 0) {}

  void Probe(const PreparedQuery& exact, const DatasetState::StaleVectors::Partitioned& stale, uint32_t p) {
    const uint64_t begin = stale.starts[p], n = stale.starts[p + 1] - begin;
    if (n == 0) return;
    distances_.resize(n);
    index::ScoreFloat(exact.metric, index::KernelsFor(), exact.as_float.data(), exact.norm2,
                      stale.vectors.data() + begin * exact.dim, n, exact.dim, distances_.data());
    // NaN (a cosine against a zero vector) fails both tests and is skipped.
    float bound = direct_ ? top_.Bound() : 0;
    for (uint64_t i = 0; i < n; ++i) {
      const float d = distances_[i];
      if (direct_ && d <= bound) {
        top_.Offer(d, stale.addresses[begin + i]);
        bound = top_.Bound();
      } else if (!direct_ && !std::isnan(d)) {
        found_.push_back({d, stale.addresses[begin + i]});
      }
    }
  }
  // The rows kept, nearest first when `direct`.
  std::vector<Candidate> Found() { return direct_ ? top_.Sorted() : std::move(found_); }

 private:
  bool direct_;
  TopK top_;
  std::vector<Candidate> found_;
  std::vector<float> distances_;
};

// Where the probed rows go: straight into `top` when nothing could drop one later (no
// prefilter, no deletions, one segment so no address twice), else kept for Surviving.
// `count` (the candidates, for explain) is kept only when `counting`: into `top`, a row
// is first tested against the top-k's bound and only the few that pass it are mapped to
// an address and checked, which is most of a probe's per-row work saved.
struct ProbeSink {
  TopK* top = nullptr;
  bool counting = true;
  std::vector<Candidate> kept;
  uint64_t count = 0;
  void Add(float distance, uint64_t address) {
    ++count;
    if (!top) kept.push_back({distance, address});
    else if (distance <= top->Bound()) top->Offer(distance, address);
  }
};

// Per fragment id, whether a segment may answer for its rows (live and covered by it)
// and its stale offsets' bitmap: a table indexed by id, as rows of one partition come
// from every fragment in turn (the reference's indexes interleave them) and a search
// per row was a third of the probe.
class FragmentVerdicts {
 public:
  FragmentVerdicts(const DatasetState& state, const Segment& segment, const DatasetState::StaleVectors& stale) {
    for (const auto& f : state.manifest.fragments()) {
      if (!segment.Covers(f.id())) continue;
      if (f.id() >= verdicts_.size()) verdicts_.resize(f.id() + 1);
      const auto it = stale.bits.find(f.id());
      verdicts_[f.id()] = {true, it == stale.bits.end() ? nullptr : &it->second};
    }
  }
  // Whether row `offset` of `fragment` may be a candidate: answerable and not stale.
  bool Candidate(uint64_t fragment, uint64_t offset) const {
    if (fragment >= verdicts_.size() || !verdicts_[fragment].ok) return false;
    const std::vector<uint64_t>* stale = verdicts_[fragment].stale;
    return !stale || offset / 64 >= stale->size() || !((*stale)[offset / 64] >> (offset % 64) & 1);
  }

 private:
  struct Verdict {
    bool ok = false;
    const std::vector<uint64_t>* stale = nullptr;
  };
  std::vector<Verdict> verdicts_;  // fragment ids are dense: at most one per fragment ever written
};

// Every row of the probed partitions of every segment that may be an answer, into
// `sink`: in a live fragment the segment covers, not stale; with its index distance.
// With `stale`, the stale rows of the probed partitions (stale_vectors.segments) too.
void ProbeSegments(const DatasetState& state, const std::vector<Segment>& segments, const PreparedQuery& exact,
                   size_t nprobes, const DatasetState::StaleVectors& stale_vectors, StaleProbe* stale,
                   uint64_t& probed_rows, ProbeSink& sink) {
  const IdMapper mapper(state);
  std::vector<float> distances;
  for (size_t s = 0; s < segments.size(); ++s) {
    const index::IvfIndex& ivf = *segments[s].index;
    const FragmentVerdicts verdicts(state, segments[s], stale_vectors);
    const index::IvfQuery prepared = ivf.Prepare(exact.as_float);
    for (uint32_t p : ivf.NearestPartitions(prepared, nprobes)) {
      const uint64_t* ids = ivf.row_ids().data() + ivf.partition_offset(p);
      probed_rows += ivf.partition_length(p);
      if (stale) {
        const auto& in = stale_vectors.segments[s];
        stale->Probe(exact, in, p);
        if (!in.kept_starts.empty()) {  // IVF_PQ: the partition's rows less the stale ones
          ivf.ScoreCodes(prepared, p, in.kept_codes.data() + in.kept_starts[p] * ivf.code_bytes(),
                         in.kept_starts[p + 1] - in.kept_starts[p], distances);
          ids = in.kept_ids.data() + in.kept_starts[p];
        } else {
          ivf.ScorePartition(prepared, p, distances);
        }
      } else {
        ivf.ScorePartition(prepared, p, distances);
      }
      if (sink.top && !sink.counting) {
        // NaN fails the test, as it is skipped below; the bound only falls as rows enter.
        float bound = sink.top->Bound();
        for (size_t i = 0; i < distances.size(); ++i) {
          if (!(distances[i] <= bound)) continue;
          const auto address = mapper.Address(ids[i]);
          if (!address || !verdicts.Candidate(*address >> 32, *address & 0xffffffffu)) continue;
          sink.top->Offer(distances[i], *address);
          bound = sink.top->Bound();
        }
        continue;
      }
      for (size_t i = 0; i < distances.size(); ++i) {
        const auto address = mapper.Address(ids[i]);
        if (!address || std::isnan(distances[i])) continue;
        if (verdicts.Candidate(*address >> 32, *address & 0xffffffffu)) sink.Add(distances[i], *address);
      }
    }
  }
  if (sink.top || segments.size() == 1) return;
  auto& out = sink.kept;
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.address < b.address; });
  out.erase(std::unique(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
              return a.address == b.address;
            }), out.end());
}

std::shared_ptr<RowMap> RowsOf(const std::vector<Candidate>& candidates) {
  auto rows = std::make_shared<RowMap>();
  for (const auto& c : candidates) (*rows)[c.address >> 32].push_back(c.address & 0xffffffffu);
  for (auto& [fragment, offsets] : *rows) std::sort(offsets.begin(), offsets.end());
  return rows;
}

// The candidates that are live and pass the prefilter (read through a scan of their
// addresses, which applies deletions and answers the filter on current values).
std::vector<Candidate> Surviving(const Dataset& dataset, std::vector<Candidate> candidates, ExprPtr prefilter) {
  const auto& state = StateOf(dataset);
  std::set<uint64_t> deleting;
  for (const auto& f : state.manifest.fragments())
    if (f.has_deletion_file()) deleting.insert(f.id());
  const bool any_deleted = std::any_of(candidates.begin(), candidates.end(),
                                       [&](const Candidate& c) { return deleting.count(c.address >> 32) > 0; });
  if (!prefilter && !any_deleted) return candidates;
  ScanSpec spec;
  spec.columns = std::vector<std::string>{"_rowaddr"};
  spec.filter = std::move(prefilter);
  spec.rows = RowsOf(candidates);
  std::vector<uint64_t> kept;
  auto reader = dataset.Scan(spec);
  while (RecordBatchPtr batch = reader->Next()) {
    const uint64_t* addresses = batch->column(0)->values<uint64_t>();
    kept.insert(kept.end(), addresses, addresses + batch->num_rows());
  }
  std::sort(kept.begin(), kept.end());
  std::erase_if(candidates,
                [&](const Candidate& c) { return !std::binary_search(kept.begin(), kept.end(), c.address); });
  return candidates;
}

// The metric the index scores with, as exact search names it.
index::Metric CheckedMetric(const DatasetState& state, const std::vector<Segment>& segments,
                            const PreparedQuery& q) {
  const index::IvfIndex& first = *segments.front().index;
  for (const auto& segment : segments) {
    const std::string dir = state.IndexDirectory(*segment.meta);
    if (segment.index->metric() != first.metric())
      ThrowCorrupt("{}: the segments of vector index '{}' use different metrics", dir, segment.meta->name());
    if (segment.index->dim() != q.dim)
      ThrowCorrupt("{}: vector index '{}' holds {}-dimensional vectors but column '{}' holds {}", dir,
                   segment.meta->name(), segment.index->dim(), q.column, q.dim);
  }
  return first.metric();
}

}  // namespace

std::optional<std::vector<Candidate>> IndexedTopK(const Dataset& dataset, const PreparedQuery& q,
                                                  const VectorQuery& query, ExprPtr prefilter, SearchTrace* trace) {
  SearchTrace unused;
  SearchTrace& t = trace ? *trace : unused;
  const DatasetState& state = StateOf(dataset);
  std::string unreadable;
  const std::vector<Segment> segments = SegmentsOn(state, q.column, unreadable);
  if (segments.empty()) {
    t.exact_reason = unreadable.empty() ? fmt::format("column '{}' has no vector index", q.column) : unreadable;
    return std::nullopt;
  }
  t.index_name = segments.front().meta->name();
  t.index_type = TypeNameOf(*segments.front().index);
  if (q.element != TypeId::kFloat32) {
    t.exact_reason = fmt::format("index '{}' holds float32 vectors and column '{}' does not", t.index_name, q.column);
    return std::nullopt;
  }
  const index::Metric metric = CheckedMetric(state, segments, q);
  t.metric = index::MetricName(metric);
  if (q.asked && q.metric != metric) {  // the index cannot rank by the metric asked for
    t.exact_reason = fmt::format("index '{}' ranks by {}, and the query asks for {}", t.index_name,
                                 index::MetricName(metric), index::MetricName(q.metric));
    return std::nullopt;
  }
  const int64_t nprobes = query.nprobes.value_or(kDefaultNprobes);
  if (nprobes < 1) ThrowInvalid("nprobes must be at least 1, not {}", nprobes);
  if (query.refine_factor && *query.refine_factor < 1)
    ThrowInvalid("refine_factor must be at least 1, not {}", *query.refine_factor);
  const PreparedQuery exact = WithMetric(q, metric);
  const size_t k = size_t(query.k);

  const auto stale = StaleVectorsOf(dataset, q.column, segments);
  const bool partitioned = !stale->segments.empty();
  TopK from_index(query.refine_factor ? k * size_t(*query.refine_factor) : k);
  ProbeSink sink;
  const bool deletions = std::any_of(state.manifest.fragments().begin(), state.manifest.fragments().end(),
                                     [](const auto& f) { return f.has_deletion_file(); });
  StaleProbe stale_probe(!prefilter && !deletions, k);
  if (!prefilter && !deletions && segments.size() == 1) sink.top = &from_index;
  sink.counting = t.count_candidates;
  ProbeSegments(state, segments, exact, size_t(nprobes), *stale, partitioned ? &stale_probe : nullptr,
                t.probed_rows, sink);
  t.candidates = sink.count;
  if (!sink.top) {
    const std::vector<Candidate> candidates = Surviving(dataset, std::move(sink.kept), prefilter);
    for (const auto& c : candidates) from_index.Offer(c.distance, c.address);
    t.candidates = candidates.size();
  }

  TopK top(k);
  if (query.refine_factor) {
    const std::vector<Candidate> refining = from_index.Sorted();
    t.refined = refining.size();
    ScoreRowsExactly(dataset, exact, nullptr, RowsOf(refining), top);
  } else {
    top.Merge(from_index);
  }
  std::set<uint64_t> uncovered;
  for (const auto& f : state.manifest.fragments())
    if (std::none_of(segments.begin(), segments.end(), [&](const Segment& s) { return s.Covers(f.id()); }))
      uncovered.insert(f.id());
  t.segments = segments.size();
  for (const auto& s : segments) t.partitions = std::max(t.partitions, s.index->num_partitions());
  t.nprobes = std::min(size_t(nprobes), t.partitions);
  for (const auto& [fragment, offsets] : stale->rows) t.stale_rows += offsets.size();
  t.flat_fragments = uncovered.size();
  if (!uncovered.empty())
    for (const auto& c : ExactTopK(dataset, exact, prefilter, k, uncovered)) top.Offer(c.distance, c.address);
  if (partitioned) {
    for (const auto& c : Surviving(dataset, stale_probe.Found(), prefilter)) top.Offer(c.distance, c.address);
  } else {  // too many to hold: every stale row, wherever its vector lies
    ScoreRowsExactly(dataset, exact, prefilter, std::make_shared<RowMap>(stale->rows), top);
  }
  return top.Sorted();
}

}  // namespace lancelet::table

namespace lancelet {

std::optional<VectorIndexUse> Dataset::VectorIndexOn(const std::string& column) const {
  const SchemaPtr table_schema = schema();
  const int field = table_schema->FieldIndex(column);
  if (field < 0) return std::nullopt;
  const DataType& type = *table_schema->field(field)->type;
  if (type.id() != TypeId::kFixedSizeList || type.child(0)->type->id() != TypeId::kFloat32) return std::nullopt;
  const table::DatasetState& state = table::StateOf(*this);
  std::string unreadable;  // such an index serves no query: the column is searched exactly
  const std::vector<table::Segment> segments = table::SegmentsOn(state, column, unreadable);
  if (segments.empty()) return std::nullopt;
  table::PreparedQuery q;
  q.column = column;
  q.dim = size_t(type.fixed_size());
  const index::Metric metric = table::CheckedMetric(state, segments, q);
  return VectorIndexUse{segments.front().meta->name(),
                        table::TypeNameOf(*segments.front().index),
                        index::MetricName(metric)};
}

}  // namespace lancelet
