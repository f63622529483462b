#include "index/ivf_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <nlohmann/json.hpp>

#include "array/ascii_case.h"
#include "format/lance_file.h"
#include "index.pb.h"
#include "lancelet/error.h"

namespace lancelet::index {
namespace {

Metric ParseMetric(const std::string& path, const std::string& text) {
  const std::string lower = AsciiLower(text);
  if (lower == "l2" || lower == "euclidean") return Metric::kL2;
  if (lower == "cosine") return Metric::kCosine;
  if (lower == "dot") return Metric::kDot;
  if (lower == "hamming")
    ThrowNotSupported("{}: a hamming IVF index (over binary vectors) is not supported", path);
  ThrowCorrupt("{}: unknown distance_type '{}' (expected l2, cosine or dot)", path, text);
}

const std::string& MetadataValue(const format::LanceFileReader& file, const std::string& key) {
  const auto& metadata = file.schema().metadata();
  auto it = metadata.find(key);
  if (it == metadata.end()) ThrowCorrupt("{}: the schema metadata has no '{}'", file.path(), key);
  return it->second;
}

nlohmann::json ParseJson(const format::LanceFileReader& file, const std::string& key, const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) ThrowCorrupt("{}: schema metadata '{}' is not JSON", file.path(), key);
  return json;
}

// index.idx's `lance:index` metadata: an object with a string `type` and `distance_type`.
nlohmann::json IndexDescription(const format::LanceFileReader& file) {
  if (file.num_global_buffers() == 0) ThrowCorrupt("{}: a legacy Lance file, not an IVF index", file.path());
  const nlohmann::json meta = ParseJson(file, "lance:index", MetadataValue(file, "lance:index"));
  if (!meta.is_object() || !meta.contains("type") || !meta["type"].is_string() || !meta.contains("distance_type") ||
      !meta["distance_type"].is_string())
    ThrowCorrupt("{}: schema metadata 'lance:index' has no string 'type' and 'distance_type'", file.path());
  return meta;
}

// The IVF message in the global buffer the metadata key `lance:ivf` names.
lance::index::pb::IVF ReadIvf(const format::LanceFileReader& file) {
  const std::string& text = MetadataValue(file, "lance:ivf");
  char* end = nullptr;
  const unsigned long position = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || position == 0)
    ThrowCorrupt("{}: schema metadata 'lance:ivf' is '{}', not the number of a global buffer after the first",
                 file.path(), text);
  lance::index::pb::IVF ivf;
  if (!ivf.ParseFromString(file.ReadGlobalBuffer(position)))
    ThrowCorrupt("{}: global buffer {} is not a lance.index.pb.IVF message", file.path(), position);
  return ivf;
}

// A FLOAT32 tensor of `shape`, its values.
std::vector<float> FloatTensor(const std::string& path, const char* what, const lance::index::pb::Tensor& tensor,
                               size_t rows, size_t cols) {
  if (tensor.data_type() != lance::index::pb::Tensor::FLOAT32)
    ThrowNotSupported("{}: the {} are of tensor type {}, not FLOAT32 (2)", path, what, int(tensor.data_type()));
  if (tensor.shape_size() != 2 || tensor.shape(0) != rows || tensor.shape(1) != cols)
    ThrowCorrupt("{}: the {} tensor's shape is not [{}, {}]", path, what, rows, cols);
  if (tensor.data().size() != rows * cols * sizeof(float))
    ThrowCorrupt("{}: the {} tensor holds {} bytes, not the {} of {} x {} float32 values", path, what,
                 tensor.data().size(), rows * cols * sizeof(float), rows, cols);
  std::vector<float> values(rows * cols);
  std::memcpy(values.data(), tensor.data().data(), tensor.data().size());
  return values;
}

int FieldIndex(const format::LanceFileReader& file, const std::string& name) {
  const auto& fields = file.schema().fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return int(i);
  return -1;
}

// A fixed_size_list<`element`, size> column's `rows` rows, its list size checked.
ArrayPtr ReadListColumn(const format::LanceFileReader& file, int field, TypeId element, size_t size,
                        uint64_t rows) {
  const std::string& name = file.schema().fields()[size_t(field)].name;
  const DataType& type = *file.schema().fields()[size_t(field)].type;
  if (type.id() != TypeId::kFixedSizeList || type.child(0)->type->id() != element || size_t(type.fixed_size()) != size)
    ThrowCorrupt("{}: column '{}' is {}, not a fixed_size_list of {} {}", file.path(), name, type.ToString(), size,
                 element == TypeId::kFloat32 ? "float32" : "uint8");
  ArrayPtr column = file.ReadField(size_t(field), 0, rows);
  if (column->length != int64_t(rows) || column->null_count != 0 || column->child(0)->null_count != 0)
    ThrowCorrupt("{}: column '{}' does not hold {} rows without NULLs", file.path(), name, rows);
  return column;
}

// Partition offsets and lengths: one each per partition, the offsets the running sum of
// the lengths, which add up to the file's rows.
void CheckPartitions(const std::string& path, const lance::index::pb::IVF& ivf, size_t partitions, uint64_t rows) {
  if (size_t(ivf.offsets_size()) != partitions || size_t(ivf.lengths_size()) != partitions)
    ThrowCorrupt("{}: the IVF message has {} offsets and {} lengths for {} partitions", path, ivf.offsets_size(),
                 ivf.lengths_size(), partitions);
  uint64_t next = 0;
  for (size_t p = 0; p < partitions; ++p) {
    if (ivf.offsets(int(p)) != next)
      ThrowCorrupt("{}: partition {} starts at row {}, not at {} where partition {} ends", path, p,
                   ivf.offsets(int(p)), next, p == 0 ? 0 : p - 1);
    next += ivf.lengths(int(p));
  }
  if (next != rows)
    ThrowCorrupt("{}: the partitions hold {} rows but the file has {}", path, next, rows);
}

void CheckRowIds(const std::string& path, const std::vector<uint64_t>& ids, const IdBounds& bounds) {
  for (uint64_t id : ids)
    if (std::string problem = bounds.Problem(id); !problem.empty())
      ThrowCorrupt("{}: row id {} cannot be in this dataset version: {}", path, id, problem);
  std::vector<uint64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) ThrowCorrupt("{}: row id {} is indexed twice", path, *dup);
}

}  // namespace

bool IsVectorIndexTypeUrl(const std::string& type_url) {
  static const std::string kSuffix = "vectorindexdetails";
  const std::string url = AsciiLower(type_url);
  return url.size() >= kSuffix.size() && url.compare(url.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::string VectorIndexTypeOf(const io::ObjectStore& store, const std::string& dir) {
  return IndexDescription(*format::LanceFileReader::OpenAlone(store, dir + "/index.idx"))["type"].get<std::string>();
}

bool IsReadableVectorIndexType(const std::string& type) { return type == "IVF_FLAT" || type == "IVF_PQ"; }

const char* IvfKindName(IvfKind kind) {
  switch (kind) {
    case IvfKind::kFlat: return "IVF_FLAT";
    case IvfKind::kPq: return "IVF_PQ";
  }
  return "?";
}

std::unique_ptr<IvfIndex> IvfIndex::Open(const io::ObjectStore& store, const std::string& dir,
                                         const IdBounds& bounds) {
  std::unique_ptr<IvfIndex> index(new IvfIndex());
  if (!store.Head(dir + "/auxiliary.idx")) {
    index->ReadLegacy(store, dir + "/index.idx");
    CheckRowIds(dir + "/index.idx", index->row_ids_, bounds);
    return index;
  }
  index->ReadCentroids(store, dir + "/index.idx");
  index->ReadStorage(store, dir + "/auxiliary.idx", bounds);
  return index;
}

// index.idx: the type and metric, and the centroids.
void IvfIndex::ReadCentroids(const io::ObjectStore& store, const std::string& path) {
  auto file = format::LanceFileReader::OpenAlone(store, path);
  const nlohmann::json meta = IndexDescription(*file);
  const std::string type = meta["type"].get<std::string>();
  if (type == "IVF_FLAT") kind_ = IvfKind::kFlat;
  else if (type == "IVF_PQ") kind_ = IvfKind::kPq;
  else ThrowNotSupported("{}: vector index type '{}' is not supported (IVF_FLAT and IVF_PQ are)", path, type);
  metric_ = ParseMetric(path, meta["distance_type"].get<std::string>());

  const lance::index::pb::IVF ivf = ReadIvf(*file);
  const auto& tensor = ivf.centroids_tensor();
  if (tensor.shape_size() != 2 || tensor.shape(0) == 0 || tensor.shape(1) == 0)
    ThrowCorrupt("{}: the IVF message's centroids_tensor is not of shape [partitions, dimension]", path);
  dim_ = tensor.shape(1);
  centroids_ = FloatTensor(path, "centroids", tensor, tensor.shape(0), dim_);
  lengths_.resize(tensor.shape(0));
}

// auxiliary.idx: rows by partition, their ids and vectors or codes.
void IvfIndex::ReadStorage(const io::ObjectStore& store, const std::string& path, const IdBounds& bounds) {
  auto file = format::LanceFileReader::OpenAlone(store, path);
  if (file->num_global_buffers() == 0) ThrowCorrupt("{}: a legacy Lance file, not an IVF index", path);
  const std::string& metric = MetadataValue(*file, "distance_type");
  if (ParseMetric(path, metric) != metric_)
    ThrowCorrupt("{}: distance_type '{}' differs from index.idx's '{}'", path, metric, MetricName(metric_));
  const uint64_t rows = file->num_rows();
  const lance::index::pb::IVF ivf = ReadIvf(*file);
  CheckPartitions(path, ivf, lengths_.size(), rows);
  offsets_.assign(ivf.offsets().begin(), ivf.offsets().end());
  lengths_.assign(ivf.lengths().begin(), ivf.lengths().end());

  const int id_field = FieldIndex(*file, "_rowid");
  if (id_field < 0 || file->schema().fields()[size_t(id_field)].type->id() != TypeId::kUInt64)
    ThrowCorrupt("{}: no uint64 column '_rowid'", path);
  ArrayPtr ids = file->ReadField(size_t(id_field), 0, rows);
  if (ids->length != int64_t(rows) || ids->null_count != 0)
    ThrowCorrupt("{}: column '_rowid' does not hold {} rows without NULLs", path, rows);
  row_ids_.assign(ids->values<uint64_t>(), ids->values<uint64_t>() + rows);
  CheckRowIds(path, row_ids_, bounds);

  const nlohmann::json storage = ParseJson(*file, "storage_metadata", MetadataValue(*file, "storage_metadata"));
  if (!storage.is_array() || storage.size() != 1 || !storage[0].is_string())
    ThrowCorrupt("{}: schema metadata 'storage_metadata' is not a JSON list of one string", path);
  const std::string storage_text = storage[0].get<std::string>();
  if (kind_ == IvfKind::kFlat) {
    const int field = FieldIndex(*file, "flat");
    if (field < 0) ThrowCorrupt("{}: an IVF_FLAT index without the column 'flat'", path);
    vectors_ = ReadListColumn(*file, field, TypeId::kFloat32, dim_, rows);
    flat_ = vectors_->child(0)->values<float>();
    return;
  }
  ReadPqStorage(*file, storage_text, rows);
}

void IvfIndex::ReadPqStorage(const format::LanceFileReader& file, const std::string& storage_text, uint64_t rows) {
  const std::string& path = file.path();
  const nlohmann::json pq = ParseJson(file, "storage_metadata", storage_text);
  auto number = [&](const char* key) -> uint64_t {
    if (!pq.is_object() || !pq.contains(key) || !pq[key].is_number_unsigned())
      ThrowCorrupt("{}: the PQ storage metadata has no number '{}'", path, key);
    return pq[key].get<uint64_t>();
  };
  const uint64_t nbits = number("nbits"), m = number("num_sub_vectors"), dimension = number("dimension");
  const uint64_t codebook_position = number("codebook_position");
  if (nbits != 4 && nbits != 8)
    ThrowNotSupported("{}: PQ codes of {} bits are not supported (4 and 8 are); search exactly instead (--exact)",
                      path, nbits);
  if (dimension != dim_)
    ThrowCorrupt("{}: the PQ dimension {} differs from the centroids' {} in index.idx", path, dimension, dim_);
  if (m == 0 || dim_ % m != 0)
    ThrowCorrupt("{}: {} sub-vectors do not divide the dimension {}", path, m, dim_);
  if (nbits == 4 && m % 2 != 0)
    ThrowCorrupt("{}: 4-bit PQ codes pair sub-vectors in bytes, but num_sub_vectors is {}", path, m);
  sub_vectors_ = size_t(m);
  nbits_ = size_t(nbits);
  const bool transposed = pq.contains("transposed") && pq["transposed"].is_boolean() && pq["transposed"].get<bool>();

  lance::index::pb::Tensor tensor;
  if (codebook_position == 0 || !tensor.ParseFromString(file.ReadGlobalBuffer(codebook_position)))
    ThrowCorrupt("{}: global buffer {} (codebook_position) is not a lance.index.pb.Tensor", path, codebook_position);
  codebook_ = FloatTensor(path, "codebook", tensor, size_t(1) << nbits_, dim_);

  const int field = FieldIndex(file, "__pq_code");
  if (field < 0) ThrowCorrupt("{}: an IVF_PQ index without the column '__pq_code'", path);
  const size_t width = code_bytes();
  vectors_ = ReadListColumn(file, field, TypeId::kUInt8, width, rows);
  codes_ = vectors_->child(0)->values<uint8_t>();
  if (transposed) return;
  // Row-major codes (an older writer): transposed here, so scoring has one layout.
  transposed_.resize(rows * width);
  for (size_t p = 0; p < lengths_.size(); ++p) {
    const size_t n = lengths_[p], base = offsets_[p] * width;
    for (size_t r = 0; r < n; ++r)
      for (size_t j = 0; j < width; ++j) transposed_[base + j * n + r] = codes_[base + r * width + j];
  }
  codes_ = transposed_.data();
}

IvfQuery IvfIndex::Prepare(std::span<const float> query) const {
  if (query.size() != dim_)
    ThrowInvalid("the query has {} values but the index holds {}-dimensional vectors", query.size(), dim_);
  IvfQuery q;
  q.vector.assign(query.begin(), query.end());
  double norm2 = 0;
  for (float v : q.vector) norm2 += double(v) * v;
  if (metric_ == Metric::kCosine) {
    if (norm2 == 0) ThrowInvalid("the query vector is all zeros, whose cosine distance to any vector is undefined");
    const float scale = float(1.0 / std::sqrt(norm2));
    for (float& v : q.vector) v *= scale;
    norm2 = 0;
    for (float v : q.vector) norm2 += double(v) * v;
  }
  q.norm2 = norm2;
  return q;
}

std::vector<uint32_t> IvfIndex::NearestPartitions(const IvfQuery& query, size_t nprobes) const {
  const size_t partitions = num_partitions();
  std::vector<float> distance(partitions);
  // Cosine queries are normalised, and the centroids were trained on normalised vectors:
  // L2 ranks them as cosine does.
  const Metric metric = metric_ == Metric::kDot ? Metric::kDot : Metric::kL2;
  ScoreFloat(metric, KernelsFor(), query.vector.data(), query.norm2, centroids_.data(), partitions, dim_,
             distance.data());
  std::vector<uint32_t> order(partitions);
  std::iota(order.begin(), order.end(), 0u);
  const size_t keep = std::min(std::max<size_t>(nprobes, 1), partitions);
  auto nearer = [&](uint32_t a, uint32_t b) { return distance[a] != distance[b] ? distance[a] < distance[b] : a < b; };
  std::partial_sort(order.begin(), order.begin() + ptrdiff_t(keep), order.end(), nearer);
  order.resize(keep);
  return order;
}

// The PQ distance table of one partition, one row of 256 entries per code byte:
// table[j * 256 + b] is the distance the byte value b of byte j stands for. At 8 bits
// that is the distance between the query's sub-vector j and code b of its codebook; at
// 4 bits the sum of the distances of sub-vector 2j to code b & 15 and of sub-vector 2j+1
// to code b >> 4, so both widths score a row as one lookup per byte. L2 and cosine tables
// are over the residual (query - centroid, as the codes encode residuals); dot over the
// raw query, its entries being partial inner products.
void IvfIndex::PqTable(const IvfQuery& query, size_t p, std::vector<float>& table) const {
  const size_t m = sub_vectors_, sub = dim_ / m, codes = size_t(1) << nbits_;
  std::vector<float> target(query.vector);
  if (metric_ != Metric::kDot)
    for (size_t d = 0; d < dim_; ++d) target[d] -= centroid(p)[d];
  std::vector<float> per_code(m * codes);  // [s][c]: sub-vector s against code c
  const FloatKernels& kernels = KernelsFor();
  for (size_t s = 0; s < m; ++s) {
    const float* q = target.data() + s * sub;
    const float* book = codebook_.data() + s * codes * sub;
    for (size_t c = 0; c < codes; ++c)
      per_code[s * codes + c] = metric_ == Metric::kDot ? kernels.dot(q, book + c * sub, sub)
                                                        : kernels.l2(q, book + c * sub, sub);
  }
  if (nbits_ == 8) {
    table = std::move(per_code);
    return;
  }
  table.resize(code_bytes() * 256);
  for (size_t j = 0; j < code_bytes(); ++j) {
    const float* low = per_code.data() + 2 * j * 16;
    const float* high = low + 16;
    for (size_t b = 0; b < 256; ++b) table[j * 256 + b] = low[b & 15] + high[b >> 4];
  }
}

void IvfIndex::ScorePartition(const IvfQuery& query, size_t p, std::vector<float>& out) const {
  const size_t n = lengths_[p], offset = offsets_[p];
  if (kind_ == IvfKind::kPq) return ScoreCodes(query, p, codes_ + offset * code_bytes(), n, out);
  out.assign(n, 0.f);
  if (n == 0) return;
  ScoreFloat(metric_, KernelsFor(), query.vector.data(), query.norm2, flat_ + offset * dim_, n, dim_, out.data());
}

void IvfIndex::ScoreCodes(const IvfQuery& query, size_t p, const uint8_t* codes, size_t n,
                          std::vector<float>& out) const {
  out.assign(n, 0.f);
  if (n == 0) return;
  std::vector<float> table;
  PqTable(query, p, table);
  const size_t width = code_bytes();
  for (size_t j = 0; j < width; ++j) {
    const float* row = table.data() + j * 256;
    const uint8_t* column = codes + j * n;
    for (size_t r = 0; r < n; ++r) out[r] += row[column[r]];
  }
  // Dot distance is 1 - the inner product, as exact search scores it.
  if (metric_ == Metric::kDot)
    for (float& d : out) d = 1.f - d;
}

}  // namespace lancelet::index
