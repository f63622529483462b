// Product quantization for IVF_PQ: codebook training, encoding, and the transposed code
// layout of one partition.
//
// A vector of `dim` floats is cut into m sub-vectors of dim / m; each sub-vector s has
// its own 2^nbits codes, trained by k-means (kmeans.h) on sub-vector s of the training
// rows. What is quantized is the PQ input of a row: for L2 and cosine its residual, the
// row (normalised first for cosine) minus its partition's centroid; for dot the raw row.
// For every metric the codes reconstruct the PQ input: the sub-vector k-means runs with
// L2 and encoding picks the L2-nearest code; only search differs (a dot table holds inner
// products of the raw query with the codes). Measured on lance 12.0.0's dot IVF_PQ files
// (3000 x 32 clustered rows, 8 partitions, 8 sub-vectors at 8 bits and 16 at 4 bits):
// every stored code is the L2-nearest code of the raw row (none of the residual), and the
// codes span the raw values. Upstream source agrees: rust/lance/src/index/vector/ivf.rs
// (build_ivf_model_and_pq) hands build_pq_model the IVF model for residuals only for L2
// and cosine, and rust/lance/src/index/vector/pq.rs (build_pq_model) trains with
// ProductQuantizer::build(.., DistanceType::L2, ..), so the quantizer that encodes rows
// (rust/lance-index/src/vector/pq.rs, transform) picks codes by L2; the index's dot
// metric is applied when it is read (ProductQuantizer::from_metadata). Codes picked by
// largest inner product, as lancelet once did, crowd onto the codes of largest norm and
// lose the rows' directions: the reference's recall@10 through such an index was 0.38
// against 0.98 through its own.
// The codebook is laid out as the reference stores it: [m][2^nbits][dim / m] floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/kmeans.h"

namespace lancelet::index {

struct PqParams {
  size_t num_sub_vectors = 16;  // m; must divide dim
  size_t nbits = 8;             // 8, or 4 (then num_sub_vectors must be even)
  Metric metric = Metric::kL2;  // the index's metric: kL2, kCosine or kDot
  size_t max_iterations = 50;
  double tolerance = 1e-4;
  size_t sample_rate = 256;  // at most sample_rate x 2^nbits rows are trained on
  KMeansInit init = KMeansInit::kRandom;
  uint64_t seed = 0;
  size_t threads = 0;
  bool allow_simd = true;
};

struct PqCodebook {
  size_t dim = 0;
  size_t num_sub_vectors = 0;
  size_t nbits = 0;
  Metric metric = Metric::kL2;  // the index's metric
  std::vector<float> codebook;  // [num_sub_vectors][2^nbits][sub_dim()]
  size_t sub_dim() const { return dim / num_sub_vectors; }
  size_t codes() const { return size_t(1) << nbits; }
  // Bytes of one row's stored code: m at 8 bits, m / 2 at 4 bits (two codes a byte).
  size_t code_bytes() const { return num_sub_vectors * nbits / 8; }
  const float* code(size_t sub_vector, size_t code) const {
    return codebook.data() + (sub_vector * codes() + code) * sub_dim();
  }
};

// Refuses (one line) m = 0, dim not divisible by m, nbits other than 4 or 8, an odd m at
// 4 bits, a metric other than L2/cosine/dot, an IVF model of another dimension or metric.
void CheckPqParams(size_t dim, const PqParams& params);

// Trains the codebook on `n` rows of `ivf.dim` floats. For L2 and cosine `ivf` supplies the
// partition centroids the residuals are taken from (each sampled row is assigned to its
// nearest one); for dot it is not used and may be null.
PqCodebook TrainPq(const float* data, size_t n, size_t dim, const KMeansModel* ivf, const PqParams& params);

// The PQ input of one row in partition `partition`: its residual (L2, cosine: normalised
// first) or the row itself (dot). `out` holds dim floats. False when a cosine row has no
// direction (norm 0 or not finite).
bool PqInput(const PqCodebook& pq, const KMeansModel* ivf, const float* row, uint32_t partition, float* out);

// codes[r * m + s] = the nearest code of sub-vector s of PQ input row r (n rows, row-major).
void EncodePq(const PqCodebook& pq, const float* inputs, size_t n, uint8_t* codes, size_t threads = 0,
              bool allow_simd = true);

// The n rows of EncodePq's codes (m a row, one a byte) as the reference stores a row:
// code_bytes() bytes, the codes themselves at 8 bits; at 4 bits byte j holds sub-vector
// 2j's code in its low nibble and sub-vector 2j+1's in its high nibble.
std::vector<uint8_t> PackCodes(const PqCodebook& pq, const uint8_t* codes, size_t n);

// Stored codes of one partition as the reference keeps them (`transposed: true`): for n
// rows of `width` bytes, byte j * n + r is row r's byte j.
std::vector<uint8_t> TransposeCodes(const uint8_t* codes, size_t n, size_t width);

// The n rows of one partition (raw vectors) encoded, packed and transposed.
std::vector<uint8_t> EncodePartition(const PqCodebook& pq, const KMeansModel* ivf, const float* rows, size_t n,
                                     uint32_t partition, size_t threads = 0, bool allow_simd = true);

// Sum over the n PQ input rows of the squared L2 distance to their decoded codes.
double ReconstructionError(const PqCodebook& pq, const float* inputs, const uint8_t* codes, size_t n);

}  // namespace lancelet::index
