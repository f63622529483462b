// Nearest-neighbour search through a vector (IVF_FLAT / IVF_PQ) index, as the reference
// answers it: the nprobes partitions nearest the query are scored (stored vectors, or PQ
// codes through a distance table); their rows that are deleted, fail the prefilter, or
// whose vectors overlays changed after the index was built are dropped; the k (or
// k * refine_factor, then re-ranked with the rows' own vectors) nearest are merged with
// the exact scores of the rows no segment covers and of the stale rows.
#include <algorithm>
#include <cmath>
#include <set>

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

// Per covered fragment, the rows overlays changed after the segment was built.
RowMap StaleRows(const DatasetState& state, const std::vector<Segment>& segments) {
  std::map<uint64_t, format::RoaringBitmap> stale;
  for (const auto& fragment : state.manifest.fragments()) {
    if (fragment.overlays_size() == 0) continue;
    for (const auto& segment : segments) {
      if (!segment.Covers(fragment.id())) continue;
      format::RoaringBitmap rows = IndexStaleness::Of(state.schema, *segment.meta).RowsOf(*state.OverlaysOf(fragment));
      if (!rows.IsEmpty()) stale[fragment.id()] |= rows;
    }
  }
  RowMap out;
  for (const auto& [fragment, rows] : stale) {
    auto& offsets = out[fragment];
    rows.ForEach([&](uint32_t offset) { offsets.push_back(offset); });
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

// Every row of the probed partitions of every segment that may be an answer: in a live
// fragment the segment covers, not stale; with its index distance, each address once.
std::vector<Candidate> ProbeSegments(const DatasetState& state, const std::vector<Segment>& segments,
                                     const std::vector<float>& query, size_t nprobes, const RowMap& stale,
                                     uint64_t& probed_rows) {
  std::set<uint64_t> live;
  for (const auto& f : state.manifest.fragments()) live.insert(f.id());
  const IdMapper mapper(state);
  std::vector<Candidate> out;
  std::vector<float> distances;
  for (const auto& segment : segments) {
    const index::IvfIndex& ivf = *segment.index;
    const index::IvfQuery prepared = ivf.Prepare(query);
    for (uint32_t p : ivf.NearestPartitions(prepared, nprobes)) {
      ivf.ScorePartition(prepared, p, distances);
      probed_rows += distances.size();
      const uint64_t* ids = ivf.row_ids().data() + ivf.partition_offset(p);
      for (size_t i = 0; i < distances.size(); ++i) {
        const auto address = mapper.Address(ids[i]);
        if (!address || std::isnan(distances[i])) continue;
        const uint64_t fragment = *address >> 32, offset = *address & 0xffffffffu;
        if (!live.count(fragment) || !segment.Covers(fragment)) continue;
        if (auto it = stale.find(fragment);
            it != stale.end() && std::binary_search(it->second.begin(), it->second.end(), offset))
          continue;
        out.push_back({distances[i], *address});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.address < b.address; });
  out.erase(std::unique(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
              return a.address == b.address;
            }), out.end());
  return out;
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

  const RowMap stale = StaleRows(state, segments);
  std::vector<Candidate> candidates = Surviving(
      dataset, ProbeSegments(state, segments, q.as_float, size_t(nprobes), stale, t.probed_rows), prefilter);
  TopK from_index(query.refine_factor ? k * size_t(*query.refine_factor) : k);
  for (const auto& c : candidates) from_index.Offer(c.distance, c.address);

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
  t.candidates = candidates.size();
  for (const auto& [fragment, offsets] : stale) t.stale_rows += offsets.size();
  t.flat_fragments = uncovered.size();
  if (!uncovered.empty())
    for (const auto& c : ExactTopK(dataset, exact, prefilter, k, uncovered)) top.Offer(c.distance, c.address);
  ScoreRowsExactly(dataset, exact, prefilter, std::make_shared<RowMap>(stale), top);
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
