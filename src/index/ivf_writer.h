// Writing IVF_FLAT and IVF_PQ index segments in the reference's layout (ivf_index.h
// describes the files; ivf_index.h's reader opens what this writes).
//
// The model (partition centroids, and for PQ the codebook) is trained beforehand on a
// sample (kmeans.h, pq_train.h). Rows then arrive in any order, in batches: each is
// assigned to its nearest centroid and reduced to what the index stores (the vector,
// normalised for cosine, or its PQ code). auxiliary.idx holds the rows grouped by
// partition, so rows are buffered per partition up to a memory budget; a full buffer is
// spilled to a run file in the segment's directory (each run holds its rows partition by
// partition), and Finish reads every run's share of one partition at a time. Memory is
// the budget plus the largest partition, never the column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/lance_file.h"
#include "index/ivf_index.h"
#include "index/kmeans.h"
#include "index/pq_train.h"
#include "index/scalar_index.h"

namespace lancelet::index {

inline constexpr const char* kIvfIndexFile = "index.idx";
inline constexpr const char* kIvfAuxiliaryFile = "auxiliary.idx";

class IvfWriter {
 public:
  static constexpr uint64_t kDefaultMemoryBudget = 64 << 20;

  // `pq` is required for kPq and ignored for kFlat; `ivf.metric` is the index's metric
  // (the model trained with it: cosine centroids are means of unit vectors).
  IvfWriter(io::ObjectStore& store, std::string dir, format::FileVersion version, IvfKind kind, KMeansModel ivf,
            std::optional<PqCodebook> pq, uint64_t memory_budget = kDefaultMemoryBudget);
  ~IvfWriter();  // removes the runs, and the files when Finish did not complete
  IvfWriter(const IvfWriter&) = delete;
  IvfWriter& operator=(const IvfWriter&) = delete;

  // `n` rows of dim floats and their row ids. A row that belongs to no partition (NaN,
  // or a zero vector under cosine) is not indexed: it is counted in skipped().
  void Add(const float* rows, size_t n, const uint64_t* ids);
  // Writes index.idx and auxiliary.idx; returns them with their sizes.
  std::vector<WrittenFile> Finish();

  uint64_t rows() const { return rows_; }
  uint64_t skipped() const { return skipped_; }
  const std::vector<uint32_t>& partition_lengths() const { return lengths_; }

 private:
  size_t row_bytes() const;
  void Spill();
  // Partition p's ids and payloads from every run and the buffer, in arrival order.
  void GatherPartition(size_t p, std::vector<uint64_t>& ids, std::vector<uint8_t>& payload) const;
  uint64_t WriteCentroidFile() const;
  uint64_t WriteStorageFile();

  io::ObjectStore& store_;
  std::string dir_;
  format::FileVersion version_;
  IvfKind kind_;
  KMeansModel ivf_;
  std::optional<PqCodebook> pq_;
  uint64_t budget_;
  std::vector<std::vector<uint64_t>> ids_;      // per partition, buffered
  std::vector<std::vector<uint8_t>> payload_;   // per partition: row_bytes() per row
  uint64_t buffered_bytes_ = 0;
  struct Run {
    std::string path;
    std::vector<uint64_t> starts;   // byte offset of partition p's ids; payloads follow them
    std::vector<uint32_t> counts;   // rows of partition p
  };
  std::vector<Run> runs_;
  std::vector<uint32_t> lengths_;
  uint64_t rows_ = 0, skipped_ = 0;
  bool finished_ = false;
};

// The IndexMetadata.index_details value the reference writes for such an index: a
// serialized lance.index.pb.VectorIndexDetails (metric, compression pq{bits, sub-vectors}
// or flat{}, the target partition count and the build's runtime hints).
std::string VectorIndexDetailsBytes(IvfKind kind, Metric metric, size_t partitions, size_t sub_vectors, size_t nbits,
                                    size_t max_iterations, size_t sample_rate);
inline constexpr const char* kVectorIndexDetailsUrl = "/lance.index.pb.VectorIndexDetails";

}  // namespace lancelet::index
