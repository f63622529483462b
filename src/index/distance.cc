#include "index/distance.h"

#include <immintrin.h>

#include <bit>
#include <cstring>

namespace lancelet::index {
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

// One tile of R rows by 16 columns: 2R accumulators of 8 lanes stay in registers (R = 6
// uses 12 of the 16, plus two column loads and a broadcast), each step over d is two
// loads of the transposed columns and R broadcasts for 2R fused multiply-adds.
template <int R>
__attribute__((target("avx2,fma"))) void ProductsTileAvx2(const float* rows, size_t dim, const float* columns_t,
                                                          size_t stride, float* out) {
  __m256 acc[R][2];
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
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(out + r * stride, acc[r][0]);
    _mm256_storeu_ps(out + r * stride + 8, acc[r][1]);
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
  static const FloatKernels portable{L2Portable, DotPortable, ProductsPortable};
#if defined(__x86_64__)
  static const FloatKernels avx2{L2Avx2, DotAvx2, ProductsAvx2};
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
