// k-means for IVF centroids (index/kmeans.h): clusters found exactly on hand-made data,
// the loss the IVF protobuf records, cosine and dot as the reference trains them, the
// empty-cluster repair, determinism under a seed and across thread counts, refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "index/kmeans.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::index {
namespace {

using Rows = std::vector<std::vector<float>>;

Rows Centroids(const KMeansModel& model) {
  Rows out;
  for (size_t c = 0; c < model.k; ++c)
    out.emplace_back(model.centroids.begin() + c * model.dim, model.centroids.begin() + (c + 1) * model.dim);
  std::sort(out.begin(), out.end());
  return out;
}

// Four clusters of four points, 100 apart: each point is its cluster's corner plus one
// of (0,0), (1,0), (0,1), (1,1), so each mean is the corner plus (0.5, 0.5).
std::vector<float> FourSquares() {
  std::vector<float> data;
  for (float cx : {0.f, 100.f})
    for (float cy : {0.f, 100.f})
      for (float dx : {0.f, 1.f})
        for (float dy : {0.f, 1.f}) data.insert(data.end(), {cx + dx, cy + dy});
  return data;
}

TEST(KMeans, FindsWellSeparatedClustersExactly) {
  const std::vector<float> data = FourSquares();
  for (size_t threads : {1, 2}) {
    KMeansParams params;
    params.k = 4;
    params.init = KMeansInit::kPlusPlus;
    params.seed = 7;
    params.threads = threads;
    const KMeansModel model = TrainKMeans(data.data(), 16, 2, params);
    EXPECT_EQ(Centroids(model), (Rows{{0.5f, 0.5f}, {0.5f, 100.5f}, {100.5f, 0.5f}, {100.5f, 100.5f}}));
    EXPECT_EQ(model.loss, 8.0);  // 16 points at squared distance 0.25 + 0.25 from their mean
    EXPECT_EQ(model.iterations, 2u);  // the second assignment changed nothing
    EXPECT_EQ(model.training_rows, 16u);
    std::vector<uint32_t> ids(16);
    std::vector<float> dist(16);
    AssignPartitions(model, data.data(), 16, ids.data(), dist.data(), threads);
    for (size_t r = 0; r < 16; ++r) {
      EXPECT_EQ(model.centroids[ids[r] * 2], r < 8 ? 0.5f : 100.5f) << r;
      EXPECT_EQ(model.centroids[ids[r] * 2 + 1], r % 8 < 4 ? 0.5f : 100.5f) << r;
      EXPECT_EQ(dist[r], 0.5f) << r;
    }
  }
}

TEST(KMeans, RandomInitWithKEqualToRowsKeepsEveryRow) {
  const std::vector<float> data = {3, 1, -2, 5, 0, 0, 9, 9, 4, -4};
  KMeansParams params;
  params.k = 5;
  params.seed = 11;
  const KMeansModel model = TrainKMeans(data.data(), 5, 2, params);
  EXPECT_EQ(Centroids(model), (Rows{{-2, 5}, {0, 0}, {3, 1}, {4, -4}, {9, 9}}));
  EXPECT_EQ(model.loss, 0.0);
  EXPECT_EQ(model.iterations, 2u);
}

TEST(KMeans, TrainsOnAtMostSampleRateTimesKRows) {
  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 10);
  KMeansParams params;
  params.k = 2;
  params.sample_rate = 10;
  EXPECT_EQ(TrainKMeans(data.data(), 1000, 1, params).training_rows, 20u);
  params.sample_rate = 0;  // no sampling
  EXPECT_EQ(TrainKMeans(data.data(), 1000, 1, params).training_rows, 1000u);
  data[3] = std::nanf("");  // rows holding NaN are left out
  data[5] = INFINITY;
  EXPECT_EQ(TrainKMeans(data.data(), 1000, 1, params).training_rows, 998u);
}

TEST(KMeans, CosineClustersDirections) {
  const std::vector<float> data = {2, 0, 5, 0, 0, 3, 0, 7, 0, 0};  // the last row has no direction
  KMeansParams params;
  params.k = 2;
  params.metric = Metric::kCosine;
  params.init = KMeansInit::kPlusPlus;
  const KMeansModel model = TrainKMeans(data.data(), 5, 2, params);
  EXPECT_EQ(model.training_rows, 4u);
  EXPECT_EQ(Centroids(model), (Rows{{0, 1}, {1, 0}}));
  EXPECT_EQ(model.loss, 0.0);
  const float rows[6] = {10, 1, 1, 10, 0, 0};
  uint32_t ids[3];
  AssignPartitions(model, rows, 3, ids, nullptr);
  EXPECT_EQ(model.centroids[ids[0] * 2], 1.f);
  EXPECT_EQ(model.centroids[ids[1] * 2 + 1], 1.f);
  EXPECT_EQ(ids[2], kNoCentroid);
}

TEST(KMeans, DotCentroidsArePlainMeansAsTheReferenceTrainsThem) {
  const std::vector<float> data = {3, 4, 6, 8, -5, 0, -10, 0};
  KMeansParams params;
  params.k = 2;
  params.metric = Metric::kDot;
  params.init = KMeansInit::kPlusPlus;
  const KMeansModel model = TrainKMeans(data.data(), 4, 2, params);
  EXPECT_EQ(Centroids(model), (Rows{{-7.5f, 0}, {4.5f, 6}}));
  // Each row's distance is 1 - its inner product with its centroid's mean.
  EXPECT_EQ(model.loss, double((1 - 37.5f) + (1 - 75.f) + (1 - 37.5f) + (1 - 75.f)));
}

TEST(KMeans, DotUnitCentroidsOnRequest) {
  const std::vector<float> data = {3, 4, 6, 8, -5, 0, -10, 0};
  KMeansParams params;
  params.k = 2;
  params.metric = Metric::kDot;
  params.init = KMeansInit::kPlusPlus;
  params.unit_dot_centroids = true;
  const KMeansModel model = TrainKMeans(data.data(), 4, 2, params);
  const Rows c = Centroids(model);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (std::vector<float>{-1, 0}));  // the mean (-7.5, 0), normalised
  EXPECT_NEAR(c[1][0], 0.6f, 1e-7);              // the mean (4.5, 6), normalised
  EXPECT_NEAR(c[1][1], 0.8f, 1e-7);
  uint32_t ids[4];
  float dist[4];
  AssignPartitions(model, data.data(), 4, ids, dist);
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_EQ(ids[2], ids[3]);
  EXPECT_NE(ids[0], ids[2]);
  EXPECT_EQ(dist[2], -4.f);  // 1 - (-5)(-1)
  EXPECT_EQ(dist[3], -9.f);
}

TEST(KMeans, EmptyClustersTakeHalfOfTheLargest) {
  const float eps = 1.0f / 1024;
  std::vector<float> centroids = {0, 0, 2, 4, 8, 8, 0, 0};
  std::vector<size_t> counts = {0, 5, 2, 0};
  SplitEmptyClusters(centroids, 2, counts);
  // Cluster 0 takes half of cluster 1 (5 -> 3 + 2); cluster 3 then half of cluster 1, still
  // the largest (3 -> 2 + 1), from its centroid as the first split left it.
  EXPECT_EQ(counts, (std::vector<size_t>{2, 2, 2, 1}));
  EXPECT_EQ(centroids[0], 2 * (1 + eps));
  EXPECT_EQ(centroids[1], 4 * (1 - eps));
  const float c1x = 2 * (1 - eps), c1y = 4 * (1 + eps);
  EXPECT_EQ(centroids[6], c1x * (1 + eps));
  EXPECT_EQ(centroids[7], c1y * (1 - eps));
  EXPECT_EQ(centroids[2], c1x * (1 - eps));
  EXPECT_EQ(centroids[3], c1y * (1 + eps));
  std::vector<float> one = {1, 1, 0, 0};
  std::vector<size_t> single = {1, 0};  // nothing to split below two rows
  SplitEmptyClusters(one, 2, single);
  EXPECT_EQ(single, (std::vector<size_t>{1, 0}));
}

std::vector<float> Clustered(size_t n, size_t dim, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0, 1);
  std::vector<float> centers(16 * dim), data(n * dim);
  for (float& v : centers) v = noise(gen) * 10;
  for (size_t r = 0; r < n; ++r)
    for (size_t d = 0; d < dim; ++d) data[r * dim + d] = centers[(r % 16) * dim + d] + noise(gen);
  return data;
}

TEST(KMeans, SameSeedSameModelWhateverTheThreads) {
  const std::vector<float> data = Clustered(3000, 12, 5);
  for (KMeansInit init : {KMeansInit::kRandom, KMeansInit::kPlusPlus}) {
    KMeansParams params;
    params.k = 20;
    params.sample_rate = 100;
    params.seed = 42;
    params.init = init;
    params.threads = 1;
    const KMeansModel one = TrainKMeans(data.data(), 3000, 12, params);
    params.threads = 2;
    const KMeansModel two = TrainKMeans(data.data(), 3000, 12, params);
    params.threads = 3;
    const KMeansModel three = TrainKMeans(data.data(), 3000, 12, params);
    EXPECT_EQ(one.centroids, two.centroids);
    EXPECT_EQ(one.centroids, three.centroids);
    EXPECT_EQ(one.loss, three.loss);
    EXPECT_EQ(one.iterations, three.iterations);
    params.seed = 43;
    EXPECT_NE(TrainKMeans(data.data(), 3000, 12, params).centroids, one.centroids);
  }
}

TEST(KMeans, RefusesBadParametersInOneLine) {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  KMeansParams params;
  params.k = 5;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainKMeans(data.data(), 3, 2, params); }),
            "k-means: 5 partitions need at least 5 vectors, got 3");
  params.k = 0;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainKMeans(data.data(), 3, 2, params); }), "k-means: k must be at least 1, got 0");
  params.k = 2;
  params.metric = Metric::kHamming;
  EXPECT_EQ(testing::ThrownMessage([&] { TrainKMeans(data.data(), 3, 2, params); }), "k-means: metric must be l2, cosine or dot");
  params.metric = Metric::kCosine;
  const std::vector<float> zeros = {0, 0, 0, 0, 1, 0};
  EXPECT_EQ(testing::ThrownMessage([&] { TrainKMeans(zeros.data(), 3, 2, params); }),
            "k-means: 2 partitions need at least 2 usable vectors, got 1 (of 3; NaN, infinite and zero vectors are "
            "left out)");
}

TEST(CentroidSet, NearestByL2AndDotTiesToTheLowest) {
  const float centroids[6] = {0, 0, 2, 0, 0, 2};
  const CentroidSet l2(centroids, 3, 2, Metric::kL2);
  const float rows[8] = {1, 0, 2, 1, 0, 3, NAN, 0};  // (1,0) is as near 0 as 1
  uint32_t ids[4];
  float dist[4];
  l2.Assign(rows, 4, ids, dist);
  EXPECT_EQ(ids[0], 0u);
  EXPECT_EQ(dist[0], 1.f);
  EXPECT_EQ(ids[1], 1u);
  EXPECT_EQ(dist[1], 1.f);
  EXPECT_EQ(ids[2], 2u);
  EXPECT_EQ(dist[2], 1.f);
  EXPECT_EQ(ids[3], kNoCentroid);
  EXPECT_TRUE(std::isnan(dist[3]));
  const CentroidSet dot(centroids, 3, 2, Metric::kDot);
  dot.Assign(rows, 3, ids, dist);
  EXPECT_EQ(ids[0], 1u);  // 1 - 2 beats 1 - 0
  EXPECT_EQ(dist[0], -1.f);
  EXPECT_EQ(ids[1], 1u);  // 1 - 4 beats 1 - 2
  EXPECT_EQ(ids[2], 2u);
  EXPECT_EQ(dist[2], -5.f);
}

TEST(CentroidSet, ManyCentroidsAndRowsMatchBruteForce) {
  // Small integers keep every sum exact, so any summation order gives the same bits.
  for (size_t k : {1, 15, 16, 17, 40}) {
    for (size_t dim : {1, 3, 8, 13}) {
      const size_t n = 203;  // two blocks of 96 and a tail that is not a multiple of 6
      std::vector<float> c(k * dim), x(n * dim);
      for (size_t i = 0; i < c.size(); ++i) c[i] = float(int((i * 7) % 11) - 5);
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 5) % 13) - 6);
      for (bool simd : {false, true}) {
        const CentroidSet set(c.data(), k, dim, Metric::kL2, simd);
        std::vector<uint32_t> ids(n);
        std::vector<float> dist(n);
        set.Assign(x.data(), n, ids.data(), dist.data());
        for (size_t r = 0; r < n; ++r) {
          float best = INFINITY;
          uint32_t id = 0;
          for (size_t j = 0; j < k; ++j) {
            float s = 0;
            for (size_t d = 0; d < dim; ++d) s += (x[r * dim + d] - c[j * dim + d]) * (x[r * dim + d] - c[j * dim + d]);
            if (s < best) best = s, id = uint32_t(j);
          }
          ASSERT_EQ(ids[r], id) << k << " " << dim << " " << r << " " << simd;
          ASSERT_EQ(dist[r], best) << k << " " << dim << " " << r << " " << simd;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lancelet::index
