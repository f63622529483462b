#include "index/distance.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <vector>

namespace lancelet::index {

const char* MetricName(Metric metric) {
  switch (metric) {
    case Metric::kL2: return "l2";
    case Metric::kCosine: return "cosine";
    case Metric::kDot: return "dot";
    case Metric::kHamming: return "hamming";
  }
  return "?";
}
namespace {

// The portable loops, for float (the AVX2 path's tail and fallback) and double vectors.
template <typename T>
T SumSquaredDifferences(const T* a, const T* b, size_t dim) {
  T sum = 0;
  for (size_t i = 0; i < dim; ++i) {
    const T d = a[i] - b[i];
    sum += d * d;
  }
  return sum;
}

template <typename T>
T SumProducts(const T* a, const T* b, size_t dim) {
  T sum = 0;
  for (size_t i = 0; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

constexpr auto L2Portable = SumSquaredDifferences<float>;
constexpr auto DotPortable = SumProducts<float>;

void ProductsPortable(const float* rows, size_t n, size_t dim, const float* columns_t, size_t stride, float* out) {
  for (size_t r = 0; r < n; ++r) {
    float* o = out + r * stride;
    for (size_t j = 0; j < stride; ++j) o[j] = 0;
    for (size_t d = 0; d < dim; ++d) {
      const float x = rows[r * dim + d];
      const float* c = columns_t + d * stride;
      for (size_t j = 0; j < stride; ++j) o[j] += x * c[j];
    }
  }
}

void NearestPortable(const float* rows, size_t n, size_t dim, const float* columns_t, size_t stride,
                     const float* bias, float scale, uint32_t* ids, float* best) {
  constexpr size_t kBlock = 16;
  std::vector<float> products(kBlock * stride);
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t count = std::min(kBlock, n - start);
    ProductsPortable(rows + start * dim, count, dim, columns_t, stride, products.data());
    for (size_t r = 0; r < count; ++r) {
      float low = std::numeric_limits<float>::infinity();
      uint32_t id = UINT32_MAX;
      for (size_t j = 0; j < stride; ++j) {
        const float score = bias[j] + scale * products[r * stride + j];
        if (score < low) low = score, id = uint32_t(j);
      }
      ids[start + r] = id;
      best[start + r] = low;
    }
  }
}

// Each vector's distance by `metric`, its sums computed in T by `l2` and `dot`.
template <typename T, typename L2, typename Dot>
void Score(Metric metric, L2 l2, Dot dot, const T* query, double query_norm2, const T* vectors, size_t n, size_t dim,
           float* out) {
  for (size_t r = 0; r < n; ++r) {
    const T* v = vectors + r * dim;
    switch (metric) {
      case Metric::kL2: out[r] = float(l2(query, v, dim)); break;
      case Metric::kDot: out[r] = float(T(1) - dot(query, v, dim)); break;
      case Metric::kCosine: out[r] = CosineFromSums(dot(query, v, dim), query_norm2, dot(v, v, dim)); break;
      case Metric::kHamming: out[r] = 0; break;  // bytes go through HammingBytes
    }
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float HorizontalSum(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
}

// Two accumulators of 8 lanes hide the FMA latency; the tail runs the portable loop.
__attribute__((target("avx2,fma"))) float L2Avx2(const float* a, const float* b, size_t dim) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    acc0 = _mm256_fmadd_ps(d0, d0, acc0);
    acc1 = _mm256_fmadd_ps(d1, d1, acc1);
  }
  for (; i + 8 <= dim; i += 8) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    acc0 = _mm256_fmadd_ps(d0, d0, acc0);
  }
  return HorizontalSum(_mm256_add_ps(acc0, acc1)) + L2Portable(a + i, b + i, dim - i);
}

// The products of R rows with 16 transposed columns, over every dimension: 2R
// accumulators of 8 lanes stay in registers (R = 6 uses 12 of the 16, plus two column
// loads and a broadcast), each step over d two loads of the columns and R broadcasts for
// 2R fused multiply-adds.
template <int R>
__attribute__((target("avx2,fma"), always_inline)) inline void TileProductsAvx2(const float* rows, size_t dim,
                                                                               const float* columns_t, size_t stride,
                                                                               __m256 (&acc)[R][2]) {
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (size_t d = 0; d < dim; ++d) {
    const __m256 c0 = _mm256_loadu_ps(columns_t + d * stride);
    const __m256 c1 = _mm256_loadu_ps(columns_t + d * stride + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(rows + r * dim + d);
      acc[r][0] = _mm256_fmadd_ps(x, c0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, c1, acc[r][1]);
    }
  }
}

// One tile of R rows by 16 columns, stored.
template <int R>
__attribute__((target("avx2,fma"))) void ProductsTileAvx2(const float* rows, size_t dim, const float* columns_t,
                                                          size_t stride, float* out) {
  __m256 acc[R][2];
  TileProductsAvx2<R>(rows, dim, columns_t, stride, acc);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(out + r * stride, acc[r][0]);
    _mm256_storeu_ps(out + r * stride + 8, acc[r][1]);
  }
}

// The products of one tile as ProductsTileAvx2 computes them, turned into scores and
// folded into each row's running minimum per lane: lane l of a row has seen columns
// congruent to l mod 8 in increasing order, keeping the first of equal scores.
template <int R>
__attribute__((target("avx2,fma"))) void NearestTileAvx2(const float* rows, size_t dim, const float* columns_t,
                                                         size_t stride, const float* bias, __m256 scale,
                                                         __m256i first, float* low, int32_t* low_id) {
  __m256 acc[R][2];
  TileProductsAvx2<R>(rows, dim, columns_t, stride, acc);
  const __m256 b0 = _mm256_loadu_ps(bias), b1 = _mm256_loadu_ps(bias + 8);
  const __m256 i0 = _mm256_castsi256_ps(first);
  const __m256 i1 = _mm256_castsi256_ps(_mm256_add_epi32(first, _mm256_set1_epi32(8)));
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    __m256 v = _mm256_loadu_ps(low + r * 8);
    __m256 id = _mm256_loadu_ps(reinterpret_cast<const float*>(low_id + r * 8));
    const __m256 s0 = _mm256_fmadd_ps(acc[r][0], scale, b0);
    const __m256 m0 = _mm256_cmp_ps(s0, v, _CMP_LT_OQ);
    v = _mm256_blendv_ps(v, s0, m0);
    id = _mm256_blendv_ps(id, i0, m0);
    const __m256 s1 = _mm256_fmadd_ps(acc[r][1], scale, b1);
    const __m256 m1 = _mm256_cmp_ps(s1, v, _CMP_LT_OQ);
    v = _mm256_blendv_ps(v, s1, m1);
    id = _mm256_blendv_ps(id, i1, m1);
    _mm256_storeu_ps(low + r * 8, v);
    _mm256_storeu_ps(reinterpret_cast<float*>(low_id + r * 8), id);
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void NearestRowsAvx2(const float* rows, size_t dim, const float* columns_t,
                                                         size_t stride, const float* bias, float scale, uint32_t* ids,
                                                         float* best) {
  alignas(32) float low[R * 8];
  alignas(32) int32_t low_id[R * 8];
  std::fill_n(low, R * 8, std::numeric_limits<float>::infinity());
  std::fill_n(low_id, R * 8, -1);
  const __m256 s = _mm256_set1_ps(scale);
  for (size_t j = 0; j < stride; j += 16) {
    const __m256i first = _mm256_add_epi32(_mm256_set1_epi32(int32_t(j)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    NearestTileAvx2<R>(rows, dim, columns_t + j, stride, bias + j, s, first, low, low_id);
  }
  for (int r = 0; r < R; ++r) {  // the lanes' minimum, the lowest column among equals
    float v = std::numeric_limits<float>::infinity();
    int32_t id = -1;
    for (int l = 0; l < 8; ++l) {
      const float lv = low[r * 8 + l];
      const int32_t li = low_id[r * 8 + l];
      if (li >= 0 && (lv < v || (lv == v && (id < 0 || li < id)))) v = lv, id = li;
    }
    ids[r] = id < 0 ? UINT32_MAX : uint32_t(id);
    best[r] = v;
  }
}

__attribute__((target("avx2,fma"))) void NearestAvx2(const float* rows, size_t n, size_t dim, const float* columns_t,
                                                     size_t stride, const float* bias, float scale, uint32_t* ids,
                                                     float* best) {
  size_t r = 0;
  for (; r + 6 <= n; r += 6) NearestRowsAvx2<6>(rows + r * dim, dim, columns_t, stride, bias, scale, ids + r, best + r);
  const float* tail = rows + r * dim;
  switch (n - r) {
    case 5: NearestRowsAvx2<5>(tail, dim, columns_t, stride, bias, scale, ids + r, best + r); break;
    case 4: NearestRowsAvx2<4>(tail, dim, columns_t, stride, bias, scale, ids + r, best + r); break;
    case 3: NearestRowsAvx2<3>(tail, dim, columns_t, stride, bias, scale, ids + r, best + r); break;
    case 2: NearestRowsAvx2<2>(tail, dim, columns_t, stride, bias, scale, ids + r, best + r); break;
    case 1: NearestRowsAvx2<1>(tail, dim, columns_t, stride, bias, scale, ids + r, best + r); break;
    default: break;
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void ProductsRowsAvx2(const float* rows, size_t dim, const float* columns_t,
                                                          size_t stride, float* out) {
  for (size_t j = 0; j < stride; j += 16) ProductsTileAvx2<R>(rows, dim, columns_t + j, stride, out + j);
}

__attribute__((target("avx2,fma"))) void ProductsAvx2(const float* rows, size_t n, size_t dim,
                                                      const float* columns_t, size_t stride, float* out) {
  size_t r = 0;
  for (; r + 6 <= n; r += 6) ProductsRowsAvx2<6>(rows + r * dim, dim, columns_t, stride, out + r * stride);
  const float* tail = rows + r * dim;
  float* tail_out = out + r * stride;
  switch (n - r) {
    case 5: ProductsRowsAvx2<5>(tail, dim, columns_t, stride, tail_out); break;
    case 4: ProductsRowsAvx2<4>(tail, dim, columns_t, stride, tail_out); break;
    case 3: ProductsRowsAvx2<3>(tail, dim, columns_t, stride, tail_out); break;
    case 2: ProductsRowsAvx2<2>(tail, dim, columns_t, stride, tail_out); break;
    case 1: ProductsRowsAvx2<1>(tail, dim, columns_t, stride, tail_out); break;
    default: break;
  }
}

__attribute__((target("avx2,fma"))) float DotAvx2(const float* a, const float* b, size_t dim) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= dim; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  return HorizontalSum(_mm256_add_ps(acc0, acc1)) + DotPortable(a + i, b + i, dim - i);
}
#endif

}  // namespace

bool CpuHasAvx2Fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

const FloatKernels& KernelsFor(bool allow_simd) {
  static const FloatKernels portable{L2Portable, DotPortable, ProductsPortable, NearestPortable};
#if defined(__x86_64__)
  static const FloatKernels avx2{L2Avx2, DotAvx2, ProductsAvx2, NearestAvx2};
  if (allow_simd && CpuHasAvx2Fma()) return avx2;
#else
  (void)allow_simd;
#endif
  return portable;
}

double SquaredNorm(const double* a, size_t dim) { return SumProducts(a, a, dim); }

uint32_t HammingBytes(const uint8_t* a, const uint8_t* b, size_t bytes) {
  uint32_t count = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    count += uint32_t(std::popcount(x ^ y));
  }
  for (; i < bytes; ++i) count += uint32_t(std::popcount(uint8_t(a[i] ^ b[i])));
  return count;
}

void ScoreFloat(Metric metric, const FloatKernels& kernels, const float* query, double query_norm2,
                const float* vectors, size_t n, size_t dim, float* out) {
  Score(metric, kernels.l2, kernels.dot, query, query_norm2, vectors, n, dim, out);
}

void ScoreDouble(Metric metric, const double* query, double query_norm2, const double* vectors, size_t n,
                 size_t dim, float* out) {
  Score(metric, SumSquaredDifferences<double>, SumProducts<double>, query, query_norm2, vectors, n, dim, out);
}

}  // namespace lancelet::index
