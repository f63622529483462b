// IVF vector index segments (IVF_FLAT, IVF_PQ) in the reference's layout, read whole and
// searched: `_indices/<uuid>/index.idx` holds the partition centroids (an IVF message in
// the global buffer its `lance:ivf` metadata names, centroids_tensor [P][dim]) and the
// index type and metric (`lance:index`); `auxiliary.idx` holds every indexed row grouped
// by partition (an IVF message with the partitions' offsets and lengths), its `_rowid`
// and either its vector (`flat`, normalised for cosine) or its PQ code (`__pq_code`,
// transposed within each partition: byte j*n + r is row r's byte j), and for PQ the
// codebook tensor [m][2^nbits][dim/m] (shape [2^nbits, dim]) in the global buffer
// `storage_metadata`'s codebook_position names. With 8-bit codes a row has m bytes, byte
// s its code for sub-vector s; with 4-bit codes (m even) it has m/2 bytes, byte j holding
// sub-vector 2j's code in its low nibble and sub-vector 2j+1's in its high nibble.
//
// The older layout, one index.idx holding the IVF and PQ stages in an Index message and
// the codes row-major by partition, is read too (ivf_legacy.cc: l2, 8-bit codes).
//
// Every structural fact the search relies on is checked when the files are opened
// (shapes, offsets against lengths and row counts, metric and dimension agreeing between
// the two files, row ids unique and possible in the dataset version); any mismatch is one
// Corrupt error naming the file. Vector values and PQ codes carry no redundancy (Lance
// files have no checksums), so a flipped bit inside one changes a distance, not a row.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "index/distance.h"
#include "index/id_bounds.h"
#include "io/object_store.h"
#include "lancelet/array.h"

namespace lancelet::format {
class LanceFileReader;
}
namespace lance::index::pb {
class IVF;
}

namespace lancelet::index {

// Whether an IndexMetadata.index_details type URL names a vector index: any URL ending
// in "VectorIndexDetails" (compared case-insensitively), as the reference matches them
// (newer writers use /lance.index.pb.VectorIndexDetails, older /lance.table.…).
bool IsVectorIndexTypeUrl(const std::string& type_url);

// The `type` of `dir`/index.idx's `lance:index` schema metadata ("IVF_PQ", "IVF_HNSW_SQ",
// ...), read without the rest of the index, so that a kind lancelet cannot search is
// still named (listing) and passed over (search scores every row instead).
std::string VectorIndexTypeOf(const io::ObjectStore& store, const std::string& dir);
// Whether IvfIndex::Open reads an index of that type: IVF_FLAT and IVF_PQ.
bool IsReadableVectorIndexType(const std::string& type);

enum class IvfKind { kFlat, kPq };
const char* IvfKindName(IvfKind kind);  // "IVF_FLAT", "IVF_PQ"

// One query prepared against one index: the query as the index scores it (normalised
// for cosine), its squared norm, and for PQ the distance tables built per partition.
struct IvfQuery {
  std::vector<float> vector;
  double norm2 = 0;
};

class IvfIndex {
 public:
  // Opens `dir`/index.idx and `dir`/auxiliary.idx. `bounds` says what a row id may be in
  // the dataset version the index is read with.
  static std::unique_ptr<IvfIndex> Open(const io::ObjectStore& store, const std::string& dir,
                                        const IdBounds& bounds);

  IvfKind kind() const { return kind_; }
  Metric metric() const { return metric_; }
  size_t dim() const { return dim_; }
  size_t num_partitions() const { return lengths_.size(); }
  uint64_t num_rows() const { return row_ids_.size(); }
  const float* centroid(size_t p) const { return centroids_.data() + p * dim_; }
  uint64_t partition_offset(size_t p) const { return offsets_[p]; }
  uint64_t partition_length(size_t p) const { return lengths_[p]; }
  std::span<const uint64_t> row_ids() const { return row_ids_; }
  const float* flat_vectors() const { return flat_; }  // IVF_FLAT: [num_rows][dim]
  size_t num_sub_vectors() const { return sub_vectors_; }  // IVF_PQ
  size_t nbits() const { return nbits_; }                    // IVF_PQ: 4 or 8
  size_t code_bytes() const { return sub_vectors_ * nbits_ / 8; }  // IVF_PQ: bytes of a row's code
  // Partition p's codes, [code_bytes()][length] at offset * code_bytes().
  const uint8_t* pq_codes() const { return codes_; }
  const float* codebook() const { return codebook_.data(); }  // [m][2^nbits][dim / m]

  // `query` (dim() values) as the index scores it: normalised for cosine (InvalidArgument
  // for a zero vector, whose cosine is undefined).
  IvfQuery Prepare(std::span<const float> query) const;
  // The `nprobes` partitions whose centroids are nearest the query (all when fewer),
  // nearest first, ties by partition number.
  std::vector<uint32_t> NearestPartitions(const IvfQuery& query, size_t nprobes) const;
  // Partition p's rows scored against the query: out[i] is the distance of row
  // partition_offset(p) + i (exact for IVF_FLAT, the PQ estimate for IVF_PQ).
  void ScorePartition(const IvfQuery& query, size_t p, std::vector<float>& out) const;
  // IVF_PQ: `n` codes laid out as a partition's (transposed: byte j * n + r is code r's
  // byte j) scored with partition p's distance table, as ScorePartition scores its own.
  void ScoreCodes(const IvfQuery& query, size_t p, const uint8_t* codes, size_t n, std::vector<float>& out) const;

 private:
  IvfIndex() = default;
  void ReadCentroids(const io::ObjectStore& store, const std::string& path);
  void ReadStorage(const io::ObjectStore& store, const std::string& path, const IdBounds& bounds);
  void ReadPqStorage(const format::LanceFileReader& file, const std::string& storage_text, uint64_t rows);
  void PqTable(const IvfQuery& query, size_t p, std::vector<float>& table) const;
  // The older one-file layout (ivf_legacy.cc), read when there is no auxiliary.idx.
  void ReadLegacy(const io::ObjectStore& store, const std::string& path);
  void ReadLegacyPartitions(const std::string& path, const std::string& bytes, const lance::index::pb::IVF& ivf,
                            uint64_t end);

  IvfKind kind_ = IvfKind::kFlat;
  Metric metric_ = Metric::kL2;
  size_t dim_ = 0;
  std::vector<float> centroids_;  // [P][dim]
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> lengths_;
  std::vector<uint64_t> row_ids_;
  ArrayPtr vectors_;              // the column `flat` or `__pq_code`, holding the bytes below
  const float* flat_ = nullptr;
  const uint8_t* codes_ = nullptr;
  std::vector<uint8_t> transposed_;  // codes transposed here when the file kept them row-major
  size_t sub_vectors_ = 0;
  size_t nbits_ = 0;
  std::vector<float> codebook_;
};

}  // namespace lancelet::index
