// Distance kernels of exact vector search, as the reference defines its metrics: L2 is
// the squared Euclidean distance, cosine is 1 - cos, dot is 1 - the inner product (upstream
// lance-linalg dot_distance; its ranking is the negative inner product's),
// hamming the bit count of a ^ b over bytes. Float kernels have a portable loop and an
// AVX2+FMA path chosen once at run time (the library is built without -mavx2, so the
// binary still runs on CPUs without it); both sum in float32, the AVX2 path in a
// different order, so their results agree exactly only when every partial sum is exact.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lancelet::index {

enum class Metric { kL2, kCosine, kDot, kHamming };
// As the reference names them (its distance_type): "l2", "cosine", "dot", "hamming".
const char* MetricName(Metric metric);

// Columns of a transposed matrix are padded to a multiple of this (see `products`).
inline constexpr size_t kProductColumns = 16;

// The sums one query needs against many vectors of `dim` floats each, and the inner
// products of many rows with many columns at once (k-means assignment, PQ encoding).
struct FloatKernels {
  float (*l2)(const float* a, const float* b, size_t dim);   // sum (a - b)^2
  float (*dot)(const float* a, const float* b, size_t dim);  // sum a * b
  // out[r * stride + j] = sum over d of rows[r * dim + d] * columns_t[d * stride + j], for
  // r < n and j < stride: `rows` is n x dim row-major, `columns_t` the other matrix
  // transposed (dim x stride), stride a multiple of kProductColumns. Each sum runs over d
  // in order (the AVX2 path fuses each multiply-add), so both paths agree exactly when
  // every partial sum is exact.
  void (*products)(const float* rows, size_t n, size_t dim, const float* columns_t, size_t stride, float* out);
  // The nearest column of each row, with the products of `products`: ids[r] = the j
  // minimising score(j) = bias[j] + scale * (row r . column j), the lowest j among equal
  // scores, and best[r] = that score; ids[r] = UINT32_MAX and best[r] = +inf when no score
  // is below +inf (NaN never is). `bias` holds stride floats (+inf for padding columns);
  // scale is -2 or -1, so scale * product is exact and both paths round the score once.
  void (*nearest)(const float* rows, size_t n, size_t dim, const float* columns_t, size_t stride, const float* bias,
                  float scale, uint32_t* ids, float* best);
};
// The AVX2+FMA kernels when the CPU has both and `allow_simd`, else the portable ones.
const FloatKernels& KernelsFor(bool allow_simd = true);
bool CpuHasAvx2Fma();

double SquaredNorm(const double* a, size_t dim);
uint32_t HammingBytes(const uint8_t* a, const uint8_t* b, size_t bytes);

// Cosine distance from an inner product and the two squared norms, in double so the
// result does not depend on which kernel summed them: 1 - dot / sqrt(aa * bb). NaN when
// either norm is 0 (the cosine of a zero vector is undefined; search skips such rows).
inline float CosineFromSums(double dot, double aa, double bb) {
  return float(1.0 - dot / __builtin_sqrt(aa * bb));
}

// Scores `n` float vectors laid out back to back (n * dim floats) against `query`;
// `query_norm2` is the query's squared norm (used by cosine). out[i] is vector i's
// distance. Not for hamming.
void ScoreFloat(Metric metric, const FloatKernels& kernels, const float* query, double query_norm2,
                const float* vectors, size_t n, size_t dim, float* out);
void ScoreDouble(Metric metric, const double* query, double query_norm2, const double* vectors, size_t n,
                 size_t dim, float* out);

}  // namespace lancelet::index
