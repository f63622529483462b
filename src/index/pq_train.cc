#include "index/pq_train.h"

#include <algorithm>
#include <cmath>

#include "lancelet/error.h"

namespace lancelet::index {
namespace {

bool UsesResidual(Metric metric) { return metric == Metric::kL2 || metric == Metric::kCosine; }

void CheckIvf(size_t dim, const KMeansModel* ivf, const PqParams& params) {
  if (!UsesResidual(params.metric)) return;
  if (ivf == nullptr) ThrowInvalid("PQ: l2 and cosine quantize residuals, so they need the IVF centroids");
  if (ivf->dim != dim) ThrowInvalid("PQ: the IVF centroids have dimension {}, the vectors {}", ivf->dim, dim);
  if (ivf->metric != params.metric) ThrowInvalid("PQ: the IVF centroids were trained for another metric");
}

// The sub-vector s of every row (n x dim) as one n x sub_dim matrix.
std::vector<float> SubVectors(const std::vector<float>& rows, size_t dim, size_t sub_dim, size_t s) {
  const size_t n = rows.size() / dim;
  std::vector<float> out(n * sub_dim);
  for (size_t r = 0; r < n; ++r) std::copy_n(rows.data() + r * dim + s * sub_dim, sub_dim, out.data() + r * sub_dim);
  return out;
}

// The PQ inputs of the sampled rows: rows that are not finite, or (cosine) have no
// direction, are left out.
std::vector<float> TrainingInputs(const PqCodebook& pq, const float* data, size_t n, const KMeansModel* ivf,
                                  const PqParams& params) {
  const size_t dim = pq.dim;
  const std::vector<uint32_t> picked = SampleIndices(n, params.sample_rate * pq.codes(), params.seed);
  std::vector<float> rows;
  rows.reserve(picked.size() * dim);
  for (uint32_t i : picked) {
    const float* v = data + size_t(i) * dim;
    if (std::all_of(v, v + dim, [](float x) { return std::isfinite(x); })) rows.insert(rows.end(), v, v + dim);
  }
  const size_t m = rows.size() / dim;
  if (!UsesResidual(params.metric)) return rows;
  std::vector<uint32_t> ids(m);
  AssignPartitions(*ivf, rows.data(), m, ids.data(), nullptr, params.threads, params.allow_simd);
  std::vector<float> inputs;
  inputs.reserve(rows.size());
  std::vector<float> input(dim);
  for (size_t r = 0; r < m; ++r) {
    if (ids[r] == kNoCentroid || !PqInput(pq, ivf, rows.data() + r * dim, ids[r], input.data())) continue;
    inputs.insert(inputs.end(), input.begin(), input.end());
  }
  return inputs;
}

}  // namespace

void CheckPqParams(size_t dim, const PqParams& params) {
  if (params.num_sub_vectors == 0) ThrowInvalid("PQ: num_sub_vectors must be at least 1, got 0");
  if (dim == 0 || dim % params.num_sub_vectors != 0)
    ThrowInvalid("PQ: dimension {} is not divisible by num_sub_vectors {}", dim, params.num_sub_vectors);
  if (params.nbits != 4 && params.nbits != 8) ThrowInvalid("PQ: nbits must be 4 or 8, got {}", params.nbits);
  if (params.nbits == 4 && params.num_sub_vectors % 2 != 0)
    ThrowInvalid("PQ: 4-bit codes are stored two a byte, so num_sub_vectors must be even, got {}",
                 params.num_sub_vectors);
  if (params.metric != Metric::kL2 && params.metric != Metric::kCosine && params.metric != Metric::kDot)
    ThrowInvalid("PQ: metric must be l2, cosine or dot");
}

PqCodebook TrainPq(const float* data, size_t n, size_t dim, const KMeansModel* ivf, const PqParams& params) {
  CheckPqParams(dim, params);
  CheckIvf(dim, ivf, params);
  PqCodebook pq;
  pq.dim = dim;
  pq.num_sub_vectors = params.num_sub_vectors;
  pq.nbits = params.nbits;
  pq.metric = params.metric;
  if (n < pq.codes()) ThrowInvalid("PQ: {} codes need at least {} vectors, got {}", pq.codes(), pq.codes(), n);
  const std::vector<float> inputs = TrainingInputs(pq, data, n, ivf, params);
  const size_t sub_dim = pq.sub_dim();
  pq.codebook.resize(pq.num_sub_vectors * pq.codes() * sub_dim);
  for (size_t s = 0; s < pq.num_sub_vectors; ++s) {
    KMeansParams kp;
    kp.k = pq.codes();
    kp.metric = Metric::kL2;  // for dot too: see pq_train.h
    kp.max_iterations = params.max_iterations;
    kp.tolerance = params.tolerance;
    kp.sample_rate = 0;  // the rows are a sample already
    kp.init = params.init;
    kp.seed = params.seed + 0x9E3779B97F4A7C15ull * (s + 1);  // a draw of its own per sub-vector
    kp.threads = params.threads;
    kp.allow_simd = params.allow_simd;
    const std::vector<float> sub = SubVectors(inputs, dim, sub_dim, s);
    const KMeansModel model = TrainKMeans(sub.data(), sub.size() / sub_dim, sub_dim, kp);
    std::copy(model.centroids.begin(), model.centroids.end(), pq.codebook.begin() + s * pq.codes() * sub_dim);
  }
  return pq;
}

bool PqInput(const PqCodebook& pq, const KMeansModel* ivf, const float* row, uint32_t partition, float* out) {
  std::copy_n(row, pq.dim, out);
  if (!UsesResidual(pq.metric)) return true;
  if (pq.metric == Metric::kCosine && !NormalizeInPlace(out, pq.dim)) return false;
  const float* centroid = ivf->centroids.data() + size_t(partition) * pq.dim;
  for (size_t d = 0; d < pq.dim; ++d) out[d] -= centroid[d];
  return true;
}

void EncodePq(const PqCodebook& pq, const float* inputs, size_t n, uint8_t* codes, size_t threads, bool allow_simd) {
  const size_t m = pq.num_sub_vectors, sub_dim = pq.sub_dim(), dim = pq.dim;
  std::vector<CentroidSet> sets;
  sets.reserve(m);
  for (size_t s = 0; s < m; ++s) sets.emplace_back(pq.code(s, 0), pq.codes(), sub_dim, Metric::kL2, allow_simd);
  ParallelFor(n, threads, 256, [&](size_t begin, size_t end) {
    constexpr size_t kBlock = 256;
    std::vector<float> sub(kBlock * sub_dim);
    std::vector<uint32_t> ids(kBlock);
    for (size_t start = begin; start < end; start += kBlock) {
      const size_t count = std::min(kBlock, end - start);
      for (size_t s = 0; s < m; ++s) {
        for (size_t r = 0; r < count; ++r)
          std::copy_n(inputs + (start + r) * dim + s * sub_dim, sub_dim, sub.data() + r * sub_dim);
        sets[s].Assign(sub.data(), count, ids.data(), nullptr);
        // A sub-vector holding NaN has no nearest code; code 0 keeps the byte defined.
        for (size_t r = 0; r < count; ++r) codes[(start + r) * m + s] = uint8_t(ids[r] == kNoCentroid ? 0 : ids[r]);
      }
    }
  });
}

std::vector<uint8_t> PackCodes(const PqCodebook& pq, const uint8_t* codes, size_t n) {
  const size_t m = pq.num_sub_vectors;
  if (pq.nbits == 8) return std::vector<uint8_t>(codes, codes + n * m);
  const size_t width = pq.code_bytes();
  std::vector<uint8_t> out(n * width);
  for (size_t r = 0; r < n; ++r)
    for (size_t j = 0; j < width; ++j)
      out[r * width + j] = uint8_t((codes[r * m + 2 * j] & 15) | (codes[r * m + 2 * j + 1] << 4));
  return out;
}

std::vector<uint8_t> TransposeCodes(const uint8_t* codes, size_t n, size_t width) {
  std::vector<uint8_t> out(n * width);
  for (size_t r = 0; r < n; ++r)
    for (size_t j = 0; j < width; ++j) out[j * n + r] = codes[r * width + j];
  return out;
}

std::vector<uint8_t> EncodePartition(const PqCodebook& pq, const KMeansModel* ivf, const float* rows, size_t n,
                                     uint32_t partition, size_t threads, bool allow_simd) {
  std::vector<float> inputs(n * pq.dim);
  for (size_t r = 0; r < n; ++r) {
    // A cosine row with no direction is never assigned a partition; encode it as zeros.
    if (!PqInput(pq, ivf, rows + r * pq.dim, partition, inputs.data() + r * pq.dim))
      std::fill_n(inputs.data() + r * pq.dim, pq.dim, 0.0f);
  }
  std::vector<uint8_t> codes(n * pq.num_sub_vectors);
  EncodePq(pq, inputs.data(), n, codes.data(), threads, allow_simd);
  return TransposeCodes(PackCodes(pq, codes.data(), n).data(), n, pq.code_bytes());
}

double ReconstructionError(const PqCodebook& pq, const float* inputs, const uint8_t* codes, size_t n) {
  const size_t m = pq.num_sub_vectors, sub_dim = pq.sub_dim();
  double error = 0;
  for (size_t r = 0; r < n; ++r) {
    for (size_t s = 0; s < m; ++s) {
      const float* c = pq.code(s, codes[r * m + s]);
      const float* x = inputs + r * pq.dim + s * sub_dim;
      for (size_t d = 0; d < sub_dim; ++d) error += double(x[d] - c[d]) * double(x[d] - c[d]);
    }
  }
  return error;
}

}  // namespace lancelet::index
