#include "table/ivf_build.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "format/roaring_bitmap.h"
#include "index/ivf_writer.h"
#include "lancelet/error.h"
#include "lancelet/vector_search.h"
#include "table/commit.h"
#include "table/feature_flags.h"
#include "table/index_section.h"
#include "table/knn.h"
#include "table/manifest_store.h"
#include "table/scan_plan.h"
#include "table/scan_planner.h"

namespace lancelet::table {
namespace {

using StatePtr = std::shared_ptr<const DatasetState>;

struct BuildPlan {
  index::IvfKind kind = index::IvfKind::kFlat;
  index::Metric metric = index::Metric::kL2;
  size_t dim = 0, partitions = 0, sub_vectors = 0, bits = 0, sample_capacity = 0;
};

index::Metric IndexMetric(const std::string& text) {
  const index::Metric metric = MetricOf(ParseDistanceType(text));
  if (metric == index::Metric::kHamming)
    ThrowNotSupported("an IVF index with distance '{}': lancelet builds them for l2, cosine and dot", text);
  return metric;
}

// The rows of `fragments` not deleted: an upper bound of the vectors to index (NULLs
// are found only by reading them), which sets the default partition count.
uint64_t LiveRows(const DatasetState& s, const std::set<uint64_t>& fragments) {
  uint64_t rows = 0;
  for (const auto& f : s.manifest.fragments()) {
    if (!fragments.count(f.id())) continue;
    const uint64_t deleted = f.has_deletion_file() ? f.deletion_file().num_deleted_rows() : 0;
    rows += f.physical_rows() > deleted ? f.physical_rows() - deleted : 0;
  }
  return rows;
}

BuildPlan PlanBuild(const std::string& column, size_t dim, IndexType type, const VectorIndexOptions& o,
                    uint64_t live_rows) {
  BuildPlan plan;
  plan.kind = type == IndexType::kIvfPq ? index::IvfKind::kPq : index::IvfKind::kFlat;
  plan.metric = IndexMetric(o.distance);
  plan.dim = dim;
  plan.partitions = o.num_partitions ? o.num_partitions
                                     : std::max<size_t>(1, size_t(std::sqrt(double(live_rows))));
  if (o.sample_rate == 0) ThrowInvalid("index on '{}': the sample rate must be at least 1", column);
  if (o.max_iterations == 0) ThrowInvalid("index on '{}': max iterations must be at least 1", column);
  if (plan.kind == index::IvfKind::kPq) {
    if (o.num_bits != 4 && o.num_bits != 8)
      ThrowInvalid("index on '{}': PQ codes of {} bits (bits must be 4 or 8)", column, o.num_bits);
    plan.bits = o.num_bits;
    plan.sub_vectors = o.num_sub_vectors ? o.num_sub_vectors : dim % 16 == 0 ? dim / 16 : dim % 8 == 0 ? dim / 8 : 1;
    if (dim % plan.sub_vectors != 0)
      ThrowInvalid("index on '{}': {} sub-vectors do not divide the dimension {}", column, plan.sub_vectors, dim);
    if (plan.bits == 4 && plan.sub_vectors % 2 != 0)
      ThrowInvalid("index on '{}': 4-bit PQ codes are stored two a byte, so the sub-vectors must be even, not {}",
                   column, plan.sub_vectors);
  }
  const size_t codes = plan.kind == index::IvfKind::kPq ? size_t(1) << plan.bits : 0;
  const size_t trained = std::max<size_t>(plan.partitions, codes);
  plan.sample_capacity = size_t(o.sample_rate) * trained;
  return plan;
}

// Streams the column's non-NULL vectors over `fragments`: fn(values, n, ids), values
// n x dim floats. Rows whose vector holds a NULL element are passed as NaN.
template <typename Fn>
void ForEachVectorBatch(const StatePtr& state, const format::StructPath& path, const std::set<uint64_t>& fragments,
                        size_t dim, Fn fn) {
  const DatasetState& s = *state;
  const bool row_ids = s.manifest.reader_feature_flags() & kFlagStableRowIds;
  ScanSpec spec = RowsWhere(std::vector<std::string>{s.schema.fields()[path.top].name,
                                                     row_ids ? kRowIdColumn : kRowAddrColumn},
                            "");
  spec.fragments = fragments;
  ScanPlan plan(state, spec);
  std::vector<float> values;
  std::vector<uint64_t> ids;
  plan.ForEachBatch([&](const FragmentBatch& b) {
    auto out = plan.Project(*b.batch);
    ArrayPtr column = out->column(0);
    for (int child : path.children) column = StructChild(*column, child);
    const uint64_t* addresses = out->column(1)->values<uint64_t>();
    const ArrayData& items = *column->child(0);
    const float* data = items.values<float>();
    values.clear();
    ids.clear();
    for (int64_t r = 0; r < column->length; ++r) {
      if (column->IsNull(r)) continue;
      const size_t at = values.size();
      values.insert(values.end(), data + size_t(r) * dim, data + size_t(r + 1) * dim);
      if (items.null_count > 0)
        for (size_t d = 0; d < dim; ++d)
          if (items.IsNull(r * int64_t(dim) + int64_t(d))) values[at + d] = NAN;
      ids.push_back(addresses[r]);
    }
    fn(values.data(), ids.size(), ids.data(), uint64_t(column->length));
    return true;
  });
}

// A seeded uniform sample of at most `capacity` vectors (reservoir sampling), and the
// number of vectors seen.
std::pair<std::vector<float>, uint64_t> SampleVectors(const StatePtr& state, const format::StructPath& path,
                                                      const std::set<uint64_t>& fragments, size_t dim,
                                                      size_t capacity, const VectorIndexOptions& o) {
  std::vector<float> sample;
  uint64_t seen = 0, read = 0;
  std::mt19937_64 rng(o.seed);
  ForEachVectorBatch(state, path, fragments, dim, [&](const float* v, size_t n, const uint64_t*, uint64_t rows) {
    for (size_t r = 0; r < n; ++r, ++seen) {
      if (seen < capacity) {
        sample.insert(sample.end(), v + r * dim, v + (r + 1) * dim);
        continue;
      }
      const uint64_t slot = std::uniform_int_distribution<uint64_t>(0, seen)(rng);
      if (slot < capacity) std::memcpy(sample.data() + slot * dim, v + r * dim, dim * sizeof(float));
    }
    read += rows;
    if (o.progress) o.progress("sampling", read, 0);
  });
  return {std::move(sample), seen};
}

lance::table::IndexMetadata SegmentMetadata(const DatasetState& s, const std::string& uuid, int32_t field_id,
                                            const std::string& name, const std::set<uint64_t>& fragments) {
  lance::table::IndexMetadata meta;
  meta.mutable_uuid()->set_uuid(UuidBytes(uuid));
  meta.add_fields(field_id);
  meta.set_name(name);
  meta.set_dataset_version(s.version());
  format::RoaringBitmap covered;
  for (uint64_t f : fragments) covered.Add(uint32_t(f));
  meta.set_fragment_bitmap(covered.SerializePortable(format::RoaringBitmap::RunContainers::kNone));
  meta.set_index_version(1);  // VECTOR_INDEX_VERSION of the reference's IVF_FLAT / IVF_PQ
  meta.set_created_at(uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()));
  return meta;
}

// Writes a segment's files from a trained model under _indices/<uuid>/ and returns its
// metadata.
lance::table::IndexMetadata WriteSegment(const StatePtr& state, const format::StructPath& path,
                                         const std::string& name, const google::protobuf::Any& details,
                                         const std::set<uint64_t>& fragments, index::IvfKind kind,
                                         index::KMeansModel ivf, std::optional<index::PqCodebook> pq,
                                         const decltype(VectorIndexOptions::progress)& progress,
                                         AttemptFiles& attempt) {
  const DatasetState& s = *state;
  const std::string uuid = NewUuid();
  lance::table::IndexMetadata meta = SegmentMetadata(s, uuid, path.field->id, name, fragments);
  *meta.mutable_index_details() = details;
  const std::string indices_dir = io::JoinPath(s.uri, kIndicesDir);
  const std::string dir = io::JoinPath(indices_dir, uuid);
  if (!s.store->Exists(indices_dir)) attempt.AddDirectory(indices_dir);
  s.store->CreateDir(indices_dir);
  attempt.AddOwnDirectory(dir);
  s.store->CreateDir(dir);
  const size_t dim = ivf.dim;
  index::IvfWriter writer(*s.store, dir, s.WriteVersion(), kind, std::move(ivf), std::move(pq));
  uint64_t read = 0;
  ForEachVectorBatch(state, path, fragments, dim, [&](const float* v, size_t n, const uint64_t* ids, uint64_t rows) {
    writer.Add(v, n, ids);
    read += rows;
    if (progress) progress("indexing", read, 0);
  });
  for (const auto& file : writer.Finish()) {
    auto* f = meta.add_files();
    f->set_path(file.name);
    f->set_size_bytes(file.size);
  }
  return meta;
}

}  // namespace

bool IsVectorIndexType(IndexType type) { return type == IndexType::kIvfFlat || type == IndexType::kIvfPq; }

format::StructPath VectorIndexField(const DatasetState& s, const std::string& column) {
  auto path = s.schema.StructPathNamed(column);
  if (!path) ThrowNotFound("no column '{}' in dataset '{}' to index (columns: {}; a struct field is named as a.b)",
                           column, s.uri, s.arrow_schema->ToString());
  const DataType& type = *path->field->type;
  if (type.id() != TypeId::kFixedSizeList || type.child(0)->type->id() != TypeId::kFloat32 || type.fixed_size() < 1)
    ThrowInvalid("column '{}' is {}: an IVF index holds vectors, a fixed_size_list<float32, dim>", column,
                 type.ToString());
  return std::move(*path);
}

lance::table::IndexMetadata BuildIvfSegment(const StatePtr& state, const format::StructPath& path, IndexType type,
                                            const VectorIndexOptions& options, const std::string& name,
                                            const std::set<uint64_t>& fragments, AttemptFiles& attempt) {
  const DatasetState& s = *state;
  const size_t dim = size_t(path.field->type->fixed_size());
  const BuildPlan plan = PlanBuild(path.name, dim, type, options, LiveRows(s, fragments));
  auto [sample, vectors] = SampleVectors(state, path, fragments, dim, plan.sample_capacity, options);
  if (plan.partitions > vectors)
    ThrowInvalid("index on '{}': {} partitions but only {} vectors to index (use at most {} partitions)", path.name,
                 plan.partitions, vectors, vectors);
  const size_t codes = size_t(1) << plan.bits;
  if (plan.kind == index::IvfKind::kPq && vectors < codes)
    ThrowInvalid("index on '{}': IVF_PQ trains {} codes per sub-vector and needs at least {} vectors, not {}",
                 path.name, codes, codes, vectors);
  index::KMeansParams kmeans;
  kmeans.k = plan.partitions;
  kmeans.metric = plan.metric;
  kmeans.max_iterations = options.max_iterations;
  kmeans.sample_rate = options.sample_rate;
  kmeans.seed = options.seed;
  const size_t sampled = sample.size() / dim;
  index::KMeansModel ivf = index::TrainKMeans(sample.data(), sampled, dim, kmeans);
  std::optional<index::PqCodebook> pq;
  if (plan.kind == index::IvfKind::kPq) {
    index::PqParams params;
    params.num_sub_vectors = plan.sub_vectors;
    params.nbits = plan.bits;
    params.metric = plan.metric;
    params.max_iterations = options.max_iterations;
    params.sample_rate = options.sample_rate;
    params.seed = options.seed;
    pq = index::TrainPq(sample.data(), sampled, dim, &ivf, params);
  }
  sample = {};

  google::protobuf::Any details;
  details.set_type_url(index::kVectorIndexDetailsUrl);
  details.set_value(index::VectorIndexDetailsBytes(plan.kind, plan.metric, plan.partitions, plan.sub_vectors, plan.bits,
                                                   options.max_iterations, options.sample_rate));
  return WriteSegment(state, path, name, details, fragments, plan.kind, std::move(ivf), std::move(pq),
                      options.progress, attempt);
}

std::optional<lance::table::IndexMetadata> BuildIvfDeltaSegment(const StatePtr& state, const format::StructPath& path,
                                                                const lance::table::IndexMetadata& model_of,
                                                                const std::set<uint64_t>& fragments,
                                                                AttemptFiles& attempt) {
  const DataType& type = *path.field->type;
  if (type.id() != TypeId::kFixedSizeList || type.child(0)->type->id() != TypeId::kFloat32) return std::nullopt;
  std::shared_ptr<const index::IvfIndex> existing;
  try {
    existing = state->OpenVectorIndex(model_of);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNotSupported) throw;
    return std::nullopt;
  }
  const size_t dim = existing->dim(), k = existing->num_partitions();
  index::KMeansModel ivf;
  ivf.k = k;
  ivf.dim = dim;
  ivf.metric = existing->metric();
  ivf.centroids.assign(existing->centroid(0), existing->centroid(0) + k * dim);
  std::optional<index::PqCodebook> pq;
  if (existing->kind() == index::IvfKind::kPq) {
    pq.emplace();
    pq->dim = dim;
    pq->num_sub_vectors = existing->num_sub_vectors();
    pq->nbits = existing->nbits();
    pq->metric = existing->metric();
    pq->codebook.assign(existing->codebook(), existing->codebook() + pq->codes() * dim);
  }
  if (size_t(path.field->type->fixed_size()) != dim)
    ThrowCorrupt("index '{}': its centroids have {} dimensions but column '{}' holds {}", model_of.name(), dim,
                 path.name, path.field->type->fixed_size());
  return WriteSegment(state, path, model_of.name(), model_of.index_details(), fragments, existing->kind(),
                      std::move(ivf), std::move(pq), nullptr, attempt);
}

void DescribeVectorIndex(const DatasetState& s, const lance::table::IndexMetadata& meta, IndexInfo& info) {
  const std::string type = index::VectorIndexTypeOf(*s.store, s.IndexDirectory(meta));
  if (!index::IsReadableVectorIndexType(type)) {  // named by its type, never opened
    info.type = type;
    return;
  }
  const auto ivf = s.OpenVectorIndex(meta);
  info.type = index::IvfKindName(ivf->kind());
  info.partitions = uint32_t(ivf->num_partitions());
  info.sub_vectors = uint32_t(ivf->num_sub_vectors());
  info.bits = uint32_t(ivf->kind() == index::IvfKind::kPq ? ivf->nbits() : 0);
  info.distance = index::MetricName(ivf->metric());
}

}  // namespace lancelet::table
