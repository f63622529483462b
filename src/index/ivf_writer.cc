#include "index/ivf_writer.h"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "index.pb.h"
#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::index {
namespace {

lance::index::pb::VectorMetricType MetricType(Metric metric) {
  switch (metric) {
    case Metric::kL2: return lance::index::pb::L2;
    case Metric::kCosine: return lance::index::pb::Cosine;
    case Metric::kDot: return lance::index::pb::Dot;
    case Metric::kHamming: return lance::index::pb::Hamming;
  }
  return lance::index::pb::L2;
}

std::string FloatTensorBytes(const std::vector<float>& values, uint32_t rows, uint32_t cols) {
  lance::index::pb::Tensor tensor;
  tensor.set_data_type(lance::index::pb::Tensor::FLOAT32);
  tensor.add_shape(rows);
  tensor.add_shape(cols);
  tensor.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return tensor.SerializeAsString();
}

ArrayPtr UInt64Array(std::vector<uint64_t> ids) {
  auto a = std::make_shared<ArrayData>();
  a->type = DataType::UInt64();
  a->length = int64_t(ids.size());
  a->buffers = {nullptr, Buffer::Copy(ids.data(), ids.size() * sizeof(uint64_t))};
  return a;
}

// A fixed_size_list<item, size> of rows whose values are `bytes`, row-major.
ArrayPtr FixedSizeListArray(const TypePtr& item, int32_t size, const uint8_t* bytes, size_t rows, size_t item_bytes) {
  auto child = std::make_shared<ArrayData>();
  child->type = item;
  child->length = int64_t(rows * size_t(size));
  child->buffers = {nullptr, Buffer::Copy(bytes, rows * size_t(size) * item_bytes)};
  auto list = std::make_shared<ArrayData>();
  list->type = DataType::FixedSizeList(item, size);
  list->length = int64_t(rows);
  list->buffers = {nullptr};
  list->children = {child};
  return list;
}

}  // namespace

IvfWriter::IvfWriter(io::ObjectStore& store, std::string dir, format::FileVersion version, IvfKind kind,
                     KMeansModel ivf, std::optional<PqCodebook> pq, uint64_t memory_budget)
    : store_(store), dir_(std::move(dir)), version_(version), kind_(kind), ivf_(std::move(ivf)), pq_(std::move(pq)),
      budget_(memory_budget) {
  if (kind_ == IvfKind::kPq && !pq_) ThrowInvalid("an IVF_PQ index needs a PQ codebook");
  if (kind_ == IvfKind::kPq && pq_->nbits != 8 && !(pq_->nbits == 4 && pq_->num_sub_vectors % 2 == 0))
    ThrowInvalid("IVF_PQ codes are of 8 bits, or of 4 bits over an even number of sub-vectors; not {} bits over {}",
                 pq_->nbits, pq_->num_sub_vectors);
  ids_.resize(ivf_.k);
  payload_.resize(ivf_.k);
  lengths_.assign(ivf_.k, 0);
}

IvfWriter::~IvfWriter() {
  std::vector<std::string> paths;
  for (const auto& run : runs_) paths.push_back(run.path);
  if (!finished_) {
    paths.push_back(dir_ + "/" + kIvfIndexFile);
    paths.push_back(dir_ + "/" + kIvfAuxiliaryFile);
  }
  io::RemoveQuietly(store_, paths);
}

size_t IvfWriter::row_bytes() const { return kind_ == IvfKind::kPq ? pq_->code_bytes() : ivf_.dim * sizeof(float); }

void IvfWriter::Add(const float* rows, size_t n, const uint64_t* ids) {
  const size_t dim = ivf_.dim;
  std::vector<uint32_t> partition(n);
  AssignPartitions(ivf_, rows, n, partition.data(), nullptr);
  std::vector<float> inputs(n * dim);
  std::vector<uint8_t> keep(n, 0);
  for (size_t r = 0; r < n; ++r) {
    float* out = inputs.data() + r * dim;
    if (partition[r] == kNoCentroid) continue;
    if (kind_ == IvfKind::kPq) {
      keep[r] = PqInput(*pq_, &ivf_, rows + r * dim, partition[r], out);
    } else {
      std::memcpy(out, rows + r * dim, dim * sizeof(float));
      keep[r] = ivf_.metric != Metric::kCosine || NormalizeInPlace(out, dim);
    }
  }
  std::vector<uint8_t> codes;
  if (kind_ == IvfKind::kPq) {
    codes.resize(n * pq_->num_sub_vectors);
    EncodePq(*pq_, inputs.data(), n, codes.data());
    codes = PackCodes(*pq_, codes.data(), n);
  }
  const size_t bytes = row_bytes();
  for (size_t r = 0; r < n; ++r) {
    if (!keep[r]) {
      ++skipped_;
      continue;
    }
    const uint8_t* payload = kind_ == IvfKind::kPq ? codes.data() + r * bytes
                                                   : reinterpret_cast<const uint8_t*>(inputs.data() + r * dim);
    ids_[partition[r]].push_back(ids[r]);
    payload_[partition[r]].insert(payload_[partition[r]].end(), payload, payload + bytes);
    ++lengths_[partition[r]];
    ++rows_;
    buffered_bytes_ += bytes + sizeof(uint64_t);
  }
  if (buffered_bytes_ > budget_) Spill();
}

// A run file holds, partition after partition, the partition's ids and then its payloads.
void IvfWriter::Spill() {
  Run run;
  run.path = fmt::format("{}/ivf-run-{}.bin", dir_, runs_.size());
  auto file = store_.OpenWrite(run.path, /*no_overwrite=*/false);
  runs_.push_back(Run{run.path, {}, {}});  // removed by the destructor even if writing fails
  for (size_t p = 0; p < ids_.size(); ++p) {
    run.starts.push_back(file->position());
    run.counts.push_back(uint32_t(ids_[p].size()));
    file->Write(ids_[p].data(), ids_[p].size() * sizeof(uint64_t));
    file->Write(payload_[p].data(), payload_[p].size());
    ids_[p].clear();
    ids_[p].shrink_to_fit();
    payload_[p].clear();
    payload_[p].shrink_to_fit();
  }
  file->Finish();
  runs_.back() = std::move(run);
  buffered_bytes_ = 0;
}

void IvfWriter::GatherPartition(size_t p, std::vector<uint64_t>& ids, std::vector<uint8_t>& payload) const {
  const size_t bytes = row_bytes();
  ids.clear();
  payload.clear();
  for (const auto& run : runs_) {
    const size_t n = run.counts[p];
    if (n == 0) continue;
    auto file = store_.OpenRead(run.path);
    const size_t at = ids.size();
    ids.resize(at + n);
    file->ReadAt(run.starts[p], n * sizeof(uint64_t), ids.data() + at);
    payload.resize((at + n) * bytes);
    file->ReadAt(run.starts[p] + n * sizeof(uint64_t), n * bytes, payload.data() + at * bytes);
  }
  ids.insert(ids.end(), ids_[p].begin(), ids_[p].end());
  payload.insert(payload.end(), payload_[p].begin(), payload_[p].end());
}

// index.idx: no rows (one uint64 column, `__flat_marker`), the centroids in the IVF
// message of global buffer 1, whose offsets and lengths are zeros, one per partition.
uint64_t IvfWriter::WriteCentroidFile() const {
  const size_t partitions = ivf_.k;
  nlohmann::json flat = nlohmann::json::array();
  for (size_t p = 0; p < partitions; ++p) flat.push_back("");
  // Keys in the reference's order (ordered_json keeps insertion order).
  const nlohmann::ordered_json index = {{"type", IvfKindName(kind_)}, {"distance_type", MetricName(ivf_.metric)}};
  Metadata metadata{{"lance:index", index.dump()}, {"lance:ivf", "1"}, {"lance:flat", flat.dump()}};
  Schema schema({Field::Make("__flat_marker", DataType::UInt64(), false)}, metadata);
  format::LanceFileWriter writer(store_, dir_ + "/" + kIvfIndexFile, format::LanceSchema::FromArrow(schema),
                                 format::FileWriterOptions{version_});
  lance::index::pb::IVF message;
  for (size_t p = 0; p < partitions; ++p) {
    message.add_offsets(0);
    message.add_lengths(0);
  }
  auto* tensor = message.mutable_centroids_tensor();
  tensor->ParseFromString(FloatTensorBytes(ivf_.centroids, uint32_t(partitions), uint32_t(ivf_.dim)));
  message.set_loss(ivf_.loss);
  writer.AddGlobalBuffer(message.SerializeAsString());
  return writer.Finish();
}

// auxiliary.idx: `_rowid` and `flat` or `__pq_code`, partition after partition; global
// buffer 1 the IVF message with the partitions' offsets and lengths, 2 the PQ codebook.
uint64_t IvfWriter::WriteStorageFile() {
  const size_t partitions = ivf_.k, dim = ivf_.dim;
  const bool pq = kind_ == IvfKind::kPq;
  std::string storage;
  if (pq) {
    storage = nlohmann::ordered_json{{"codebook_position", 2},  {"nbits", pq_->nbits},
                             {"num_sub_vectors", pq_->num_sub_vectors}, {"dimension", dim},
                             {"codebook_tensor", nlohmann::json::array()}, {"transposed", true}}
                  .dump();
  } else {
    storage = nlohmann::ordered_json{{"dim", dim}}.dump();
  }
  Metadata metadata{{"lance:ivf", "1"},
                    {"distance_type", MetricName(ivf_.metric)},
                    {"storage_metadata", nlohmann::json::array({storage}).dump()}};
  const TypePtr payload_type = pq ? DataType::FixedSizeList(DataType::UInt8(), int32_t(pq_->code_bytes()))
                                  : DataType::FixedSizeList(DataType::Float32(), int32_t(dim));
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("_rowid", DataType::UInt64(), true),
                            Field::Make(pq ? "__pq_code" : "flat", payload_type, pq)},
      metadata);
  format::LanceFileWriter writer(store_, dir_ + "/" + kIvfAuxiliaryFile, format::LanceSchema::FromArrow(*schema),
                                 format::FileWriterOptions{version_});
  lance::index::pb::IVF message;
  uint64_t offset = 0;
  for (size_t p = 0; p < partitions; ++p) {
    message.add_offsets(offset);
    message.add_lengths(lengths_[p]);
    offset += lengths_[p];
  }
  writer.AddGlobalBuffer(message.SerializeAsString());
  if (pq) writer.AddGlobalBuffer(FloatTensorBytes(pq_->codebook, uint32_t(pq_->codes()), uint32_t(dim)));
  std::vector<uint64_t> ids;
  std::vector<uint8_t> payload;
  for (size_t p = 0; p < partitions; ++p) {
    GatherPartition(p, ids, payload);
    if (ids.empty()) continue;
    const size_t n = ids.size();
    ArrayPtr values = pq ? FixedSizeListArray(DataType::UInt8(), int32_t(pq_->code_bytes()),
                                              TransposeCodes(payload.data(), n, pq_->code_bytes()).data(), n, 1)
                         : FixedSizeListArray(DataType::Float32(), int32_t(dim), payload.data(), n, sizeof(float));
    writer.Write(RecordBatch(schema, {UInt64Array(std::move(ids)), values}, int64_t(n)));
    ids = {};
  }
  return writer.Finish();
}

std::vector<WrittenFile> IvfWriter::Finish() {
  std::vector<WrittenFile> files;
  files.push_back({kIvfAuxiliaryFile, WriteStorageFile()});
  files.push_back({kIvfIndexFile, WriteCentroidFile()});
  finished_ = true;
  std::vector<std::string> runs;
  for (const auto& run : runs_) runs.push_back(run.path);
  io::RemoveQuietly(store_, runs);
  runs_.clear();
  return files;
}

std::string VectorIndexDetailsBytes(IvfKind kind, Metric metric, size_t /*partitions*/, size_t sub_vectors,
                                    size_t nbits, size_t max_iterations, size_t sample_rate) {
  lance::index::pb::VectorIndexDetails details;
  details.set_metric_type(MetricType(metric));
  auto& hints = *details.mutable_runtime_hints();
  // The hints the reference (12.0.0) records for its default build; lancelet's build
  // takes the same parameters (it shuffles nothing, so the shuffle hints are its defaults).
  hints["lance.skip_transpose"] = "false";
  hints["lance.ivf.max_iters"] = std::to_string(max_iterations);
  hints["lance.ivf.sample_rate"] = std::to_string(sample_rate);
  hints["lance.ivf.shuffle_partition_batches"] = "10240";
  hints["lance.ivf.shuffle_partition_concurrency"] = "2";
  if (kind == IvfKind::kPq) {
    details.mutable_pq()->set_num_bits(uint32_t(nbits));
    details.mutable_pq()->set_num_sub_vectors(uint32_t(sub_vectors));
    hints["lance.pq.max_iters"] = std::to_string(max_iterations);
    hints["lance.pq.sample_rate"] = std::to_string(sample_rate);
    hints["lance.pq.kmeans_redos"] = "1";
  } else {
    details.mutable_flat();
  }
  return details.SerializeAsString();
}

}  // namespace lancelet::index
