// Exact nearest-neighbour search: the vector column (and _rowaddr) read through the
// ordinary scan, so the prefilter, its scalar indexes, deletions and overlays behave as
// in any scan; each batch scored with the index layer's kernels into a bounded top-k per
// thread; the merged top k handed back to the scan as scored candidates, which reads
// their output columns and orders them by distance, ties by row address.
#include "lancelet/vector_search.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "array/worker_thread.h"
#include "index/distance.h"
#include "lancelet/error.h"
#include "lancelet/float16.h"
#include "table/dataset_state.h"
#include "table/knn.h"

namespace lancelet {

const char* DistanceTypeName(DistanceType type) { return index::MetricName(table::MetricOf(type)); }

DistanceType ParseDistanceType(const std::string& text) {
  const std::string lower = AsciiLower(text);
  if (lower == "l2" || lower == "euclidean") return DistanceType::kL2;
  if (lower == "cosine") return DistanceType::kCosine;
  if (lower == "dot") return DistanceType::kDot;
  if (lower == "hamming") return DistanceType::kHamming;
  ThrowInvalid("unknown distance type '{}' (expected l2, cosine, dot or hamming)", text);
}

namespace {

using table::Candidate;
using table::PreparedQuery;
using table::TopK;

bool IsVectorType(const DataType& type) {
  if (type.id() != TypeId::kFixedSizeList) return false;
  const TypeId element = type.child(0)->type->id();
  return element == TypeId::kFloat16 || element == TypeId::kFloat32 || element == TypeId::kFloat64 ||
         element == TypeId::kUInt8;
}

void CheckQueryValues(const VectorQuery& query, const PreparedQuery& prepared, const std::string& type_text) {
  if (query.vector.size() != prepared.dim)
    ThrowInvalid("the query vector has {} values but column '{}' ({}) holds {}-dimensional vectors",
                 query.vector.size(), prepared.column, type_text, prepared.dim);
  for (size_t i = 0; i < query.vector.size(); ++i) {
    const double v = query.vector[i];
    if (!std::isfinite(v)) ThrowInvalid("the query vector's value {} is {}", i, std::isnan(v) ? "NaN" : "infinite");
    if (prepared.element == TypeId::kUInt8 && (v < 0 || v > 255 || v != std::floor(v)))
      ThrowInvalid("the query vector's value {} is {}, not a byte (0 to 255) as column '{}' ({}) holds",
                   i, v, prepared.column, type_text);
  }
}

PreparedQuery Prepare(const Schema& schema, const VectorQuery& query) {
  if (query.k < 1) ThrowInvalid("k must be at least 1, not {}", query.k);
  PreparedQuery p;
  p.column = query.column.empty() ? DefaultVectorColumn(schema) : query.column;
  const int index = schema.FieldIndex(p.column);
  if (index < 0) ThrowInvalid("no column '{}' in the schema ({})", p.column, schema.ToString());
  const DataType& type = *schema.field(index)->type;
  const std::string type_text = type.ToString();
  if (!IsVectorType(type))
    ThrowInvalid("column '{}' is not a vector column: its type is {} (a vector column is a fixed_size_list of "
                 "float16, float32 or float64, or of uint8 for hamming)", p.column, type_text);
  p.element = type.child(0)->type->id();
  p.dim = size_t(type.fixed_size());
  const bool bytes = p.element == TypeId::kUInt8;
  const DistanceType distance = query.distance.value_or(bytes ? DistanceType::kHamming : DistanceType::kL2);
  if (bytes && distance != DistanceType::kHamming)
    ThrowInvalid("distance {} needs a column of float vectors; column '{}' is {} (use hamming)",
                 DistanceTypeName(distance), p.column, type_text);
  if (!bytes && distance == DistanceType::kHamming)
    ThrowInvalid("distance hamming needs a column of uint8 vectors; column '{}' is {}", p.column, type_text);
  p.asked = query.distance;
  p.metric = table::MetricOf(distance);
  CheckQueryValues(query, p, type_text);
  for (double v : query.vector) {
    p.as_double.push_back(v);
    p.as_float.push_back(float(v));
    p.as_bytes.push_back(bytes ? uint8_t(v) : 0);
  }
  if (p.element == TypeId::kFloat64) {
    p.norm2 = index::SquaredNorm(p.as_double.data(), p.dim);
  } else {
    p.norm2 = index::KernelsFor().dot(p.as_float.data(), p.as_float.data(), p.dim);
  }
  if (p.metric == index::Metric::kCosine && p.norm2 == 0)
    ThrowInvalid("the query vector is all zeros, whose cosine distance to any vector is undefined");
  return p;
}

// Distances of every row of `list` (NaN for a row to skip) into `out`.
void ScoreRows(const PreparedQuery& q, const ArrayData& list, std::vector<float>& out, std::vector<float>& scratch) {
  const ArrayData& items = *list.child(0);
  const size_t n = size_t(list.length), dim = q.dim;
  out.assign(n, 0.f);
  switch (q.element) {
    case TypeId::kFloat32:
      index::ScoreFloat(q.metric, index::KernelsFor(), q.as_float.data(), q.norm2, items.values<float>(), n, dim,
                        out.data());
      break;
    case TypeId::kFloat64:
      index::ScoreDouble(q.metric, q.as_double.data(), q.norm2, items.values<double>(), n, dim, out.data());
      break;
    case TypeId::kFloat16: {
      const uint16_t* half = items.values<uint16_t>();
      scratch.resize(n * dim);
      for (size_t i = 0; i < n * dim; ++i) scratch[i] = HalfToFloat(half[i]);
      index::ScoreFloat(q.metric, index::KernelsFor(), q.as_float.data(), q.norm2, scratch.data(), n, dim,
                        out.data());
      break;
    }
    default: {  // uint8, hamming
      const uint8_t* bytes = items.values<uint8_t>();
      for (size_t r = 0; r < n; ++r) out[r] = float(index::HammingBytes(q.as_bytes.data(), bytes + r * dim, dim));
    }
  }
  for (size_t r = 0; r < n; ++r)
    if (!table::VectorPresent(list, items, int64_t(r), dim)) out[r] = std::nanf("");
}

void ScoreReader(const PreparedQuery& q, RecordBatchReader& reader, TopK& top) {
  std::vector<float> distances, scratch;
  while (RecordBatchPtr batch = reader.Next()) {
    if (batch->num_rows() == 0) continue;
    ScoreRows(q, *batch->column(0), distances, scratch);
    const uint64_t* addresses = batch->column(1)->values<uint64_t>();
    for (size_t r = 0; r < distances.size(); ++r)
      if (!std::isnan(distances[r])) top.Offer(distances[r], addresses[r]);
  }
}

}  // namespace

namespace table {

bool VectorPresent(const ArrayData& list, const ArrayData& items, int64_t r, size_t dim) {
  if (!list.IsValid(r)) return false;
  if (items.null_count == 0) return true;
  for (size_t j = 0; j < dim; ++j)
    if (!items.IsValid(int64_t(r * dim + j))) return false;
  return true;
}

PreparedQuery WithMetric(PreparedQuery q, index::Metric metric) {
  q.metric = metric;
  return q;
}

// The fragments are dealt round-robin to up to ReadAheadThreads() threads, each scanning
// its share into its own top-k, merged at the end.
std::vector<Candidate> ExactTopK(const Dataset& dataset, const PreparedQuery& q, ExprPtr prefilter, size_t k,
                                 const std::optional<std::set<uint64_t>>& fragments) {
  std::vector<uint64_t> fragment_ids;
  for (const auto& f : table::StateOf(dataset).manifest.fragments())
    if (!fragments || fragments->count(f.id())) fragment_ids.push_back(f.id());
  const size_t threads = std::min(fragment_ids.size(), size_t(std::max(1, ReadAheadThreads())));
  auto spec_for = [&](size_t part) {
    ScanSpec spec;
    spec.columns = std::vector<std::string>{q.column, "_rowaddr"};
    spec.filter = prefilter;
    spec.fragments.emplace();
    for (size_t i = part; i < fragment_ids.size(); i += std::max<size_t>(threads, 1)) spec.fragments->insert(fragment_ids[i]);
    return spec;
  };
  TopK top(k);
  if (threads <= 1) {
    if (fragment_ids.empty()) return {};
    auto reader = ReadAhead(dataset.Scan(spec_for(0)));
    ScoreReader(q, *reader, top);
    return top.Sorted();
  }
  std::vector<TopK> tops(threads, TopK(k));
  RunOnThreads(threads, [&](size_t t) {
    auto reader = dataset.Scan(spec_for(t));
    ScoreReader(q, *reader, tops[t]);
  });
  for (const auto& t : tops) top.Merge(t);
  return top.Sorted();
}

index::Metric MetricOf(DistanceType type) {
  switch (type) {
    case DistanceType::kL2: return index::Metric::kL2;
    case DistanceType::kCosine: return index::Metric::kCosine;
    case DistanceType::kDot: return index::Metric::kDot;
    case DistanceType::kHamming: return index::Metric::kHamming;
  }
  return index::Metric::kL2;
}

void ScoreRowsExactly(const Dataset& dataset, const PreparedQuery& q, ExprPtr prefilter,
                      std::shared_ptr<const std::map<uint64_t, std::vector<uint64_t>>> rows, TopK& top) {
  if (rows->empty()) return;
  ScanSpec spec;
  spec.columns = std::vector<std::string>{q.column, "_rowaddr"};
  spec.filter = std::move(prefilter);
  spec.rows = std::move(rows);
  auto reader = dataset.Scan(spec);
  ScoreReader(q, *reader, top);
}

}  // namespace table

std::string DefaultVectorColumn(const Schema& schema) {
  std::vector<std::string> names;
  for (const auto& f : schema.fields())
    if (IsVectorType(*f->type)) names.push_back(f->name);
  if (names.size() == 1) return names[0];
  if (names.empty()) ThrowInvalid("no vector column (fixed_size_list of float16, float32, float64 or uint8) in the schema ({}); name one", schema.ToString());
  ThrowInvalid("several vector columns ({}); name the one to search", fmt::join(names, ", "));
}

namespace {

// The k nearest rows, found through the column's vector index when it can answer, else
// exactly; `trace` records which and how.
std::vector<Candidate> Nearest(const Dataset& dataset, const PreparedQuery& q, const VectorQuery& query,
                               const ExprPtr& prefilter, table::SearchTrace& trace) {
  std::optional<std::vector<Candidate>> indexed;
  if (query.exact) trace.exact_reason = "the query asks for exact search";
  else indexed = table::IndexedTopK(dataset, q, query, prefilter, &trace);
  if (indexed) return std::move(*indexed);
  trace.metric = index::MetricName(q.metric);
  return table::ExactTopK(dataset, q, prefilter, size_t(query.k));
}

ExprPtr FilterOf(const VectorQuery& query) {
  if (query.filter_expr) return query.filter_expr;
  return query.filter.empty() ? nullptr : ParseExpression(query.filter);
}

}  // namespace

std::unique_ptr<RecordBatchReader> Dataset::Search(const VectorQuery& query) const {
  const SchemaPtr table_schema = schema();
  const PreparedQuery q = Prepare(*table_schema, query);
  const ExprPtr filter = FilterOf(query);
  table::SearchTrace trace;
  const std::vector<Candidate> nearest = Nearest(*this, q, query, query.postfilter ? nullptr : filter, trace);
  auto rows = std::make_shared<std::vector<ScanSpec::ScoredRow>>();
  rows->reserve(nearest.size());
  for (const auto& c : nearest) rows->push_back({c.address >> 32, c.address & 0xffffffffu, c.distance});
  ScanSpec spec;
  if (query.columns) {
    spec.columns = *query.columns;
  } else {
    spec.columns.emplace();
    for (const auto& f : table_schema->fields())
      if (f->name != q.column) spec.columns->push_back(f->name);
  }
  spec.scored_rows = std::move(rows);
  spec.score_column = "_distance";
  spec.filter = query.postfilter ? filter : nullptr;
  spec.limit = query.k;
  spec.batch_size = query.batch_size;
  return Scan(spec);
}

std::string Dataset::ExplainSearch(const VectorQuery& query) const {
  const PreparedQuery q = Prepare(*schema(), query);
  const ExprPtr filter = FilterOf(query);
  table::SearchTrace t;
  t.count_candidates = true;
  const std::vector<Candidate> nearest = Nearest(*this, q, query, query.postfilter ? nullptr : filter, t);
  std::string out = fmt::format("VectorSearch: column {}, k {}, metric {}, version {}\n", q.column, query.k, t.metric,
                                version());
  if (filter)
    out += fmt::format("  {}: {}\n", query.postfilter ? "postfilter (on the k nearest)" : "prefilter", ToString(*filter));
  if (!t.exact_reason.empty()) {
    out += fmt::format("  exact: every live row scored ({})\n", t.exact_reason);
  } else {
    out += fmt::format("  ANN: index {} ({}), {} segment{}, nprobes {} of {} partitions\n", t.index_name, t.index_type,
                       t.segments, t.segments == 1 ? "" : "s", t.nprobes, t.partitions);
    out += fmt::format("    rows in the probed partitions: {}; candidates live, current and passing the prefilter: {}\n",
                       t.probed_rows, t.candidates);
    if (query.refine_factor)
      out += fmt::format("    refine: the {} nearest candidates re-ranked with their own vectors (factor {})\n",
                         t.refined, *query.refine_factor);
    out += fmt::format("  re-scored exactly: {} stale row{} (overlays newer than the index)\n", t.stale_rows,
                       t.stale_rows == 1 ? "" : "s");
    out += fmt::format("  searched flat: {} fragment{} the index does not cover\n", t.flat_fragments,
                       t.flat_fragments == 1 ? "" : "s");
  }
  out += fmt::format("  nearest before the {}: {} row{}\n", query.postfilter ? "postfilter" : "output", nearest.size(),
                     nearest.size() == 1 ? "" : "s");
  return out;
}

}  // namespace lancelet
