// The distance kernels: the AVX2+FMA path and the portable loop agree (exactly, on data
// whose partial sums are exact in float32) at every length, tails included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "index/distance.h"

namespace lancelet::index {
namespace {

TEST(DistanceKernels, SimdAndPortableAgreeAtEveryLength) {
  const FloatKernels& portable = KernelsFor(false);
  const FloatKernels& chosen = KernelsFor(true);
  for (size_t dim : {1, 7, 8, 9, 15, 16, 17, 31, 33, 768}) {
    std::vector<float> a(dim), b(dim);
    float l2 = 0, dot = 0;
    for (size_t i = 0; i < dim; ++i) {
      a[i] = float(int(i % 5) - 2);
      b[i] = float(int(i % 3) - 1);
      l2 += (a[i] - b[i]) * (a[i] - b[i]);
      dot += a[i] * b[i];
    }
    EXPECT_EQ(portable.l2(a.data(), b.data(), dim), l2) << dim;
    EXPECT_EQ(chosen.l2(a.data(), b.data(), dim), l2) << dim;
    EXPECT_EQ(portable.dot(a.data(), b.data(), dim), dot) << dim;
    EXPECT_EQ(chosen.dot(a.data(), b.data(), dim), dot) << dim;
  }
}

TEST(DistanceKernels, BatchProductsOfRowsAndTransposedColumns) {
  // rows x columns_t for every row count around the 6-row tile and two 16-column tiles.
  const size_t dim = 5, stride = 32;
  std::vector<float> columns_t(dim * stride);
  for (size_t i = 0; i < columns_t.size(); ++i) columns_t[i] = float(int(i % 7) - 3);
  for (size_t n : {1, 5, 6, 7, 13}) {
    std::vector<float> rows(n * dim);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = float(int(i % 5) - 2);
    for (bool simd : {false, true}) {
      std::vector<float> out(n * stride, -99.f);
      KernelsFor(simd).products(rows.data(), n, dim, columns_t.data(), stride, out.data());
      for (size_t r = 0; r < n; ++r) {
        for (size_t j = 0; j < stride; ++j) {
          float want = 0;
          for (size_t d = 0; d < dim; ++d) want += rows[r * dim + d] * columns_t[d * stride + j];
          ASSERT_EQ(out[r * stride + j], want) << n << " " << r << " " << j << " " << simd;
        }
      }
    }
  }
}

TEST(DistanceKernels, NearestColumnTakesTheLowestOfEqualScores) {
  // 40 columns of dim 1 (stride 48, the last 8 padding); columns 3, 19 and 35 (three
  // different lanes and tiles) score lowest, equally; a NaN row has no nearest column.
  const size_t stride = 48;
  std::vector<float> columns_t(stride, 0.f), bias(stride, std::numeric_limits<float>::infinity());
  for (size_t j = 0; j < 40; ++j) bias[j] = 10.f + float(j % 7);
  for (size_t j : {3, 19, 35}) bias[j] = 1.f;
  for (size_t j : {3, 19, 35}) columns_t[j] = 2.f;  // score 1 + -2 * (row * 2)
  const float rows[8] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, NAN};
  for (bool simd : {false, true}) {
    uint32_t ids[8];
    float best[8];
    KernelsFor(simd).nearest(rows, 8, 1, columns_t.data(), stride, bias.data(), -2.f, ids, best);
    for (int r = 0; r < 7; ++r) {
      EXPECT_EQ(ids[r], 3u) << simd;
      EXPECT_EQ(best[r], -1.f) << simd;
    }
    EXPECT_EQ(ids[7], UINT32_MAX) << simd;
    EXPECT_EQ(best[7], std::numeric_limits<float>::infinity()) << simd;
  }
}

TEST(DistanceKernels, MetricsAsTheReferenceDefinesThem) {
  const float q[2] = {1, 0};
  const float v[4] = {3, 4, 0, 2};  // two vectors
  float out[2];
  ScoreFloat(Metric::kL2, KernelsFor(), q, 1.0, v, 2, 2, out);
  EXPECT_EQ(out[0], 20.f);  // (1-3)^2 + 4^2: squared, no root
  EXPECT_EQ(out[1], 5.f);
  ScoreFloat(Metric::kDot, KernelsFor(), q, 1.0, v, 2, 2, out);
  EXPECT_EQ(out[0], -2.f);  // 1 - the inner product, as the reference's dot_distance
  EXPECT_EQ(out[1], 1.f);
  ScoreFloat(Metric::kCosine, KernelsFor(), q, 1.0, v, 2, 2, out);
  EXPECT_EQ(out[0], float(1.0 - 3.0 / 5.0));  // 1 - cos
  EXPECT_EQ(out[1], 1.f);
  const double qd[2] = {1, 0}, vd[2] = {3, 4};
  ScoreDouble(Metric::kCosine, qd, 1.0, vd, 1, 2, out);
  EXPECT_EQ(out[0], float(1.0 - 3.0 / 5.0));
  const uint8_t a[9] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1}, b[9] = {0x0f, 0, 0, 0, 0, 0, 0, 0, 2};
  EXPECT_EQ(HammingBytes(a, b, 9), 6u);  // 4 bits in the first byte, 2 in the tail byte
}

}  // namespace
}  // namespace lancelet::index
