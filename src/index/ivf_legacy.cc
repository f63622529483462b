// The older (legacy) IVF_PQ layout, written by the reference before its index.idx +
// auxiliary.idx files (lance 0.8 to 0.2x wrote it by default): one `index.idx` that is no
// Lance data file. Each partition's rows lie at a byte offset (the IVF stage's offsets):
// its PQ codes, length x num_sub_vectors bytes row-major, then its row ids, length x
// uint64. After them a uint32 length and a lance.index.pb.Index message (the name, the
// column, and a VectorIndex whose stages are IVF then PQ, and its metric), then a 16-byte
// footer: the message's byte position (uint64), the version 0.1 (two uint16) and "LANC".
// Read here into the same members as the current layout (codes transposed per partition),
// so scoring is shared. Only l2 with 8-bit codes and no transform stage is read: those
// are what the reference's compatibility data holds (upstream test_data v0.21.0 and
// v0.8.14); the others are refused by name.
#include <cstring>

#include "format/little_endian.h"
#include "index.pb.h"
#include "index/ivf_index.h"
#include "lancelet/error.h"

namespace lancelet::index {
namespace {

constexpr size_t kFooterBytes = 16;

lance::index::pb::Index ReadIndexMessage(const std::string& path, const std::string& bytes, uint64_t& position) {
  if (bytes.size() < kFooterBytes + 4 || bytes.compare(bytes.size() - 4, 4, "LANC") != 0)
    ThrowCorrupt("{}: no auxiliary.idx beside it, and no legacy vector index footer (\"LANC\") at its end", path);
  const char* footer = bytes.data() + bytes.size() - kFooterBytes;
  position = format::LoadLE<uint64_t>(footer);
  const uint16_t major = format::LoadLE<uint16_t>(footer + 8), minor = format::LoadLE<uint16_t>(footer + 10);
  if (major != 0 || minor != 1)
    ThrowNotSupported("{}: a legacy vector index file of version {}.{} (0.1 is read)", path, major, minor);
  const uint64_t limit = bytes.size() - kFooterBytes;
  if (position > limit - 4)
    ThrowCorrupt("{}: the index message's position {} is past the footer at byte {}", path, position, limit);
  const uint32_t length = format::LoadLE<uint32_t>(bytes.data() + position);
  if (length > limit - 4 - position)
    ThrowCorrupt("{}: the index message at byte {} claims {} bytes, more than the {} before the footer", path,
                 position, length, limit - 4 - position);
  lance::index::pb::Index message;
  if (!message.ParseFromArray(bytes.data() + position + 4, int(length)))
    ThrowCorrupt("{}: the {} bytes at byte {} are not a lance.index.pb.Index message", path, length, position + 4);
  return message;
}

// `rows` x `cols` floats from a FLOAT32 tensor, or from the older repeated floats when the
// tensor is absent.
std::vector<float> LegacyFloats(const std::string& path, const char* what, bool has_tensor,
                                const lance::index::pb::Tensor& tensor,
                                const google::protobuf::RepeatedField<float>& values, size_t rows, size_t cols) {
  std::vector<float> out(rows * cols);
  if (!has_tensor) {
    if (size_t(values.size()) != out.size())
      ThrowCorrupt("{}: the {} hold {} floats, not the {} of {} x {}", path, what, values.size(), out.size(), rows,
                   cols);
    std::copy(values.begin(), values.end(), out.begin());
    return out;
  }
  if (tensor.data_type() != lance::index::pb::Tensor::FLOAT32)
    ThrowNotSupported("{}: the {} are of tensor type {}, not FLOAT32 (2)", path, what, int(tensor.data_type()));
  if (tensor.data().size() != out.size() * sizeof(float))
    ThrowCorrupt("{}: the {} tensor holds {} bytes, not the {} of {} x {} float32 values", path, what,
                 tensor.data().size(), out.size() * sizeof(float), rows, cols);
  std::memcpy(out.data(), tensor.data().data(), tensor.data().size());
  return out;
}

}  // namespace

void IvfIndex::ReadLegacy(const io::ObjectStore& store, const std::string& path) {
  const std::string bytes = store.ReadObject(path);
  uint64_t position = 0;
  const lance::index::pb::Index message = ReadIndexMessage(path, bytes, position);
  if (!message.has_vector_index()) ThrowNotSupported("{}: a legacy index that is not a vector index", path);
  const auto& vector = message.vector_index();
  const lance::index::pb::IVF* ivf = nullptr;
  const lance::index::pb::PQ* pq = nullptr;
  for (const auto& stage : vector.stages()) {
    if (stage.has_ivf()) ivf = &stage.ivf();
    else if (stage.has_pq()) pq = &stage.pq();
    else if (stage.has_transform())
      ThrowNotSupported("{}: a legacy vector index with a transform stage (OPQ) is not supported", path);
    else ThrowNotSupported("{}: a legacy vector index stage lancelet does not read (it reads IVF and PQ)", path);
  }
  if (ivf == nullptr || pq == nullptr)
    ThrowNotSupported("{}: a legacy vector index without both an IVF and a PQ stage", path);
  if (vector.metric_type() != lance::index::pb::L2)
    ThrowNotSupported("{}: a legacy IVF_PQ index of metric {} (lancelet reads legacy l2 indexes); search exactly "
                      "instead (--exact)", path, int(vector.metric_type()));
  if (pq->num_bits() != 8) ThrowNotSupported("{}: legacy PQ codes of {} bits (8 are read)", path, pq->num_bits());
  kind_ = IvfKind::kPq;
  metric_ = Metric::kL2;
  dim_ = vector.dimension();
  const size_t m = pq->num_sub_vectors(), partitions = size_t(ivf->lengths_size());
  if (dim_ == 0 || m == 0 || dim_ % m != 0 || pq->dimension() != dim_)
    ThrowCorrupt("{}: {} sub-vectors of a {}-dimensional PQ do not divide the index's dimension {}", path, m,
                 pq->dimension(), dim_);
  if (partitions == 0 || size_t(ivf->offsets_size()) != partitions)
    ThrowCorrupt("{}: the IVF stage has {} offsets and {} lengths", path, ivf->offsets_size(), partitions);
  centroids_ = LegacyFloats(path, "centroids", ivf->has_centroids_tensor(), ivf->centroids_tensor(),
                            ivf->centroids(), partitions, dim_);
  codebook_ = LegacyFloats(path, "codebook", pq->has_codebook_tensor(), pq->codebook_tensor(), pq->codebook(), 256,
                           dim_);
  sub_vectors_ = m;
  nbits_ = 8;
  ReadLegacyPartitions(path, bytes, *ivf, position);
}

// Each partition's codes (transposed here) and row ids, from its byte offset; partitions
// lie in order, apart, and before the index message.
void IvfIndex::ReadLegacyPartitions(const std::string& path, const std::string& bytes,
                                    const lance::index::pb::IVF& ivf, uint64_t end) {
  const size_t m = sub_vectors_, partitions = size_t(ivf.lengths_size());
  lengths_.assign(ivf.lengths().begin(), ivf.lengths().end());
  offsets_.resize(partitions);
  uint64_t rows = 0, next_byte = 0;
  for (size_t p = 0; p < partitions; ++p) {
    offsets_[p] = rows;
    const uint64_t start = ivf.offsets(int(p)), span = uint64_t(lengths_[p]) * (m + sizeof(uint64_t));
    if (start < next_byte || start > end || span > end - start)
      ThrowCorrupt("{}: partition {} ({} rows at byte {}) overlaps the one before or runs past the index message "
                   "at byte {}", path, p, lengths_[p], start, end);
    next_byte = start + span;
    rows += lengths_[p];
  }
  row_ids_.resize(rows);
  transposed_.resize(rows * m);
  for (size_t p = 0; p < partitions; ++p) {
    const size_t n = lengths_[p];
    const uint8_t* codes = reinterpret_cast<const uint8_t*>(bytes.data()) + ivf.offsets(int(p));
    uint8_t* out = transposed_.data() + offsets_[p] * m;
    for (size_t r = 0; r < n; ++r)
      for (size_t s = 0; s < m; ++s) out[s * n + r] = codes[r * m + s];
    for (size_t r = 0; r < n; ++r) row_ids_[offsets_[p] + r] = format::LoadLE<uint64_t>(codes + n * m + r * 8);
  }
  codes_ = transposed_.data();
}

}  // namespace lancelet::index
