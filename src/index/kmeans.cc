#include "index/kmeans.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "array/worker_thread.h"
#include "lancelet/error.h"

namespace lancelet::index {
namespace {

// Rows scored per call of the batch kernel: the products of a block with every centroid
// (rows x stride floats, 96 KiB for 256 centroids) stay in L2 while they are scanned.
constexpr size_t kAssignBlock = 96;
constexpr float kSplitEps = 1.0f / 1024;

// mt19937_64 is specified bit for bit by the standard; the standard distributions are
// not, so draws are made here: uniform in [0, bound) by Lemire's multiply-and-reject.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  uint64_t Below(uint64_t bound) {
    unsigned __int128 m = (unsigned __int128)engine_() * bound;
    if (uint64_t(m) < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (uint64_t(m) < threshold) m = (unsigned __int128)engine_() * bound;
    }
    return uint64_t(m >> 64);
  }
  double Unit() { return double(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  std::mt19937_64 engine_;
};

// `count` distinct indices of [0, n), ascending (a partial Fisher-Yates shuffle).
std::vector<uint32_t> DistinctIndices(size_t n, size_t count, Rng& rng) {
  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  for (size_t i = 0; i < count; ++i) std::swap(all[i], all[i + rng.Below(n - i)]);
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

bool AllFinite(const float* v, size_t dim) {
  for (size_t d = 0; d < dim; ++d)
    if (!std::isfinite(v[d])) return false;
  return true;
}

// The training rows: all rows, or sample_rate x k of them drawn without replacement;
// rows holding NaN or infinity are left out (and, for cosine, rows of norm 0), the rest
// normalised for cosine.
std::vector<float> SampleRows(const float* data, size_t n, size_t dim, const KMeansParams& params, Rng& rng) {
  const size_t cap = params.sample_rate * params.k;
  std::vector<uint32_t> picked;
  if (params.sample_rate > 0 && n > cap) picked = DistinctIndices(n, cap, rng);
  const size_t count = picked.empty() ? n : picked.size();
  std::vector<float> rows;
  rows.reserve(count * dim);
  for (size_t i = 0; i < count; ++i) {
    const float* v = data + size_t(picked.empty() ? i : picked[i]) * dim;
    if (!AllFinite(v, dim)) continue;
    rows.insert(rows.end(), v, v + dim);
    if (params.metric == Metric::kCosine && !NormalizeInPlace(rows.data() + rows.size() - dim, dim))
      rows.resize(rows.size() - dim);
  }
  return rows;
}

std::vector<float> InitRandom(const std::vector<float>& rows, size_t m, size_t dim, size_t k, Rng& rng) {
  // Drawn without sorting, so the order of the centroids is the order of the draws.
  std::vector<uint32_t> all(m);
  std::iota(all.begin(), all.end(), 0u);
  std::vector<float> centroids(k * dim);
  for (size_t i = 0; i < k; ++i) {
    std::swap(all[i], all[i + rng.Below(m - i)]);
    std::copy_n(rows.data() + size_t(all[i]) * dim, dim, centroids.data() + i * dim);
  }
  return centroids;
}

// k-means++: each next centroid is a row drawn with probability proportional to its
// squared L2 distance to the nearest centroid chosen so far (for every metric).
std::vector<float> InitPlusPlus(const std::vector<float>& rows, size_t m, size_t dim, const KMeansParams& params,
                                Rng& rng) {
  const FloatKernels& kernels = KernelsFor(params.allow_simd);
  std::vector<float> centroids(params.k * dim);
  std::vector<float> nearest(m, std::numeric_limits<float>::infinity());
  size_t chosen = rng.Below(m);
  for (size_t c = 0; c < params.k; ++c) {
    const float* centroid = rows.data() + chosen * dim;
    std::copy_n(centroid, dim, centroids.data() + c * dim);
    if (c + 1 == params.k) break;
    ParallelFor(m, params.threads, 4096, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r)
        nearest[r] = std::min(nearest[r], kernels.l2(rows.data() + r * dim, centroid, dim));
    });
    const double total = std::accumulate(nearest.begin(), nearest.end(), 0.0);
    if (!(total > 0)) {  // every row sits on a chosen centroid: fall back to a uniform draw
      chosen = rng.Below(m);
      continue;
    }
    const double target = rng.Unit() * total;
    double running = 0;
    chosen = m - 1;
    for (size_t r = 0; r < m; ++r) {
      running += nearest[r];
      if (running > target && nearest[r] > 0) {
        chosen = r;
        break;
      }
    }
  }
  return centroids;
}

void NormalizeCentroids(std::vector<float>& centroids, size_t k, size_t dim) {
  for (size_t c = 0; c < k; ++c) NormalizeInPlace(centroids.data() + c * dim, dim);
}

// Each centroid becomes the mean of its rows (summed in double, in row order); counts[c]
// its row count. Centroids of empty clusters are left as they were. Parallel over
// clusters, so no two threads write one sum.
void UpdateCentroids(const std::vector<float>& rows, size_t dim, const std::vector<uint32_t>& ids,
                     std::vector<float>& centroids, std::vector<size_t>& counts, size_t threads) {
  const size_t k = counts.size();
  std::vector<double> sums(k * dim, 0.0);
  ParallelFor(k, threads, 1, [&](size_t begin, size_t end) {
    for (size_t r = 0; r < ids.size(); ++r) {
      const uint32_t c = ids[r];
      if (c < begin || c >= end) continue;  // kNoCentroid falls out here too
      const float* v = rows.data() + r * dim;
      double* s = sums.data() + size_t(c) * dim;
      for (size_t d = 0; d < dim; ++d) s[d] += v[d];
    }
  });
  std::fill(counts.begin(), counts.end(), 0);
  for (uint32_t c : ids)
    if (c != kNoCentroid) ++counts[c];
  for (size_t c = 0; c < k; ++c) {
    if (counts[c] == 0) continue;
    for (size_t d = 0; d < dim; ++d) centroids[c * dim + d] = float(sums[c * dim + d] / double(counts[c]));
  }
}

void CheckParams(size_t n, size_t dim, const KMeansParams& params) {
  if (params.k == 0) ThrowInvalid("k-means: k must be at least 1, got 0");
  if (dim == 0) ThrowInvalid("k-means: vector dimension must be at least 1, got 0");
  if (params.metric != Metric::kL2 && params.metric != Metric::kCosine && params.metric != Metric::kDot)
    ThrowInvalid("k-means: metric must be l2, cosine or dot");
  if (params.max_iterations == 0) ThrowInvalid("k-means: max_iterations must be at least 1, got 0");
  if (n < params.k) ThrowInvalid("k-means: {} partitions need at least {} vectors, got {}", params.k, params.k, n);
}

}  // namespace

// Each empty cluster, lowest first, takes half of the then largest cluster (the lowest
// index among equals), its centroid that one's pushed apart by eps; none is split below 2.
void SplitEmptyClusters(std::vector<float>& centroids, size_t dim, std::vector<size_t>& counts) {
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) continue;
    const size_t j = size_t(std::max_element(counts.begin(), counts.end()) - counts.begin());
    if (counts[j] < 2) return;
    counts[i] = counts[j] / 2;
    counts[j] -= counts[i];
    float* to = centroids.data() + i * dim;
    float* from = centroids.data() + j * dim;
    for (size_t d = 0; d < dim; ++d) {
      const float up = d % 2 == 0 ? 1 + kSplitEps : 1 - kSplitEps;
      to[d] = from[d] * up;
      from[d] *= 2 - up;
    }
  }
}

std::vector<uint32_t> SampleIndices(size_t n, size_t count, uint64_t seed) {
  Rng rng(seed);
  return DistinctIndices(n, std::min(count, n), rng);
}

size_t TrainingThreads(size_t requested) {
  if (requested > 0) return requested;
  return size_t(CoresAvailable());
}

void RunShares(size_t n, size_t shares, void (*call)(void*, size_t, size_t), void* fn) {
  shares = std::max<size_t>(1, std::min(shares, n));
  if (shares <= 1) {
    if (n > 0) call(fn, 0, n);
    return;
  }
  RunOnThreads(shares, [=](size_t s) { call(fn, n * s / shares, n * (s + 1) / shares); });
}

bool NormalizeInPlace(float* v, size_t dim) {
  double norm2 = 0;
  for (size_t d = 0; d < dim; ++d) norm2 += double(v[d]) * v[d];
  if (!(norm2 > 0) || !std::isfinite(norm2)) return false;
  const double scale = 1.0 / std::sqrt(norm2);
  for (size_t d = 0; d < dim; ++d) v[d] = float(v[d] * scale);
  return true;
}

CentroidSet::CentroidSet(const float* centroids, size_t k, size_t dim, Metric metric, bool allow_simd)
    : k_(k),
      dim_(dim),
      stride_((k + kProductColumns - 1) / kProductColumns * kProductColumns),
      metric_(metric),
      kernels_(&KernelsFor(allow_simd)),
      transposed_(dim * stride_, 0.0f),
      bias_(stride_, std::numeric_limits<float>::infinity()),
      scale_(metric == Metric::kDot ? -1.0f : -2.0f) {
  for (size_t c = 0; c < k; ++c) {
    double norm2 = 0;
    for (size_t d = 0; d < dim; ++d) {
      const float v = centroids[c * dim + d];
      transposed_[d * stride_ + c] = v;
      norm2 += double(v) * v;
    }
    bias_[c] = metric == Metric::kDot ? 1.0f : float(norm2);
  }
}

void CentroidSet::Assign(const float* rows, size_t n, uint32_t* ids, float* distances) const {
  std::vector<float> scratch;
  float* best = distances;
  if (best == nullptr) {
    scratch.resize(n);
    best = scratch.data();
  }
  kernels_->nearest(rows, n, dim_, transposed_.data(), stride_, bias_.data(), scale_, ids, best);
  if (distances == nullptr) return;
  for (size_t r = 0; r < n; ++r) {
    if (ids[r] == kNoCentroid) {
      distances[r] = std::numeric_limits<float>::quiet_NaN();
    } else if (metric_ != Metric::kDot) {
      const float* x = rows + r * dim_;
      distances[r] = std::max(0.0f, kernels_->dot(x, x, dim_) + best[r]);
    }
  }
}

namespace {

struct Iteration {
  double loss = 0;
  size_t changed = 0;
};

// One assignment of every training row, in parallel, and the loss it gives.
Iteration AssignAll(const CentroidSet& set, const std::vector<float>& rows, size_t dim, std::vector<uint32_t>& ids,
                    std::vector<float>& distances, size_t threads) {
  const size_t m = ids.size();
  std::vector<uint32_t> previous = ids;
  ParallelFor(m, threads, kAssignBlock, [&](size_t begin, size_t end) {
    set.Assign(rows.data() + begin * dim, end - begin, ids.data() + begin, distances.data() + begin);
  });
  Iteration it;
  for (size_t r = 0; r < m; ++r) {
    if (ids[r] != previous[r]) ++it.changed;
    if (ids[r] != kNoCentroid) it.loss += distances[r];
  }
  return it;
}

}  // namespace

KMeansModel TrainKMeans(const float* data, size_t n, size_t dim, const KMeansParams& params) {
  CheckParams(n, dim, params);
  Rng rng(params.seed);
  const std::vector<float> rows = SampleRows(data, n, dim, params, rng);
  const size_t m = rows.size() / dim;
  if (m < params.k)
    ThrowInvalid("k-means: {} partitions need at least {} usable vectors, got {} (of {}; NaN, infinite{} vectors "
                 "are left out)",
                 params.k, params.k, m, n, params.metric == Metric::kCosine ? " and zero" : "");
  KMeansModel model;
  model.k = params.k;
  model.dim = dim;
  model.metric = params.metric;
  model.training_rows = m;
  model.centroids = params.init == KMeansInit::kPlusPlus ? InitPlusPlus(rows, m, dim, params, rng)
                                                          : InitRandom(rows, m, dim, params.k, rng);
  const Metric assign_metric = params.metric == Metric::kDot ? Metric::kDot : Metric::kL2;
  const bool unit = params.metric == Metric::kDot && params.unit_dot_centroids;
  if (unit) NormalizeCentroids(model.centroids, params.k, dim);
  std::vector<uint32_t> ids(m, kNoCentroid);
  std::vector<float> distances(m);
  std::vector<size_t> counts(params.k);
  double previous_loss = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i <= params.max_iterations; ++i) {
    const CentroidSet set(model.centroids.data(), params.k, dim, assign_metric, params.allow_simd);
    const Iteration it = AssignAll(set, rows, dim, ids, distances, params.threads);
    model.loss = it.loss;
    model.iterations = i;
    if (it.changed == 0) break;  // the means of an unchanged assignment are the centroids already
    UpdateCentroids(rows, dim, ids, model.centroids, counts, params.threads);
    SplitEmptyClusters(model.centroids, dim, counts);
    if (unit) NormalizeCentroids(model.centroids, params.k, dim);
    if (params.tolerance > 0 && std::abs(previous_loss - it.loss) < params.tolerance * it.loss) break;
    previous_loss = it.loss;
  }
  return model;
}

void AssignPartitions(const KMeansModel& model, const float* rows, size_t n, uint32_t* ids, float* distances,
                      size_t threads, bool allow_simd) {
  const Metric metric = model.metric == Metric::kDot ? Metric::kDot : Metric::kL2;
  const CentroidSet set(model.centroids.data(), model.k, model.dim, metric, allow_simd);
  const size_t dim = model.dim;
  ParallelFor(n, threads, kAssignBlock, [&](size_t begin, size_t end) {
    if (model.metric != Metric::kCosine) {
      set.Assign(rows + begin * dim, end - begin, ids + begin, distances ? distances + begin : nullptr);
      return;
    }
    // Cosine: unit rows, a block at a time; a row that has no direction (norm 0, or not
    // finite) gets no partition.
    std::vector<float> unit(kAssignBlock * dim);
    for (size_t start = begin; start < end; start += kAssignBlock) {
      const size_t count = std::min(kAssignBlock, end - start);
      std::copy_n(rows + start * dim, count * dim, unit.data());
      std::vector<bool> zero(count);
      for (size_t r = 0; r < count; ++r) zero[r] = !NormalizeInPlace(unit.data() + r * dim, dim);
      set.Assign(unit.data(), count, ids + start, distances ? distances + start : nullptr);
      for (size_t r = 0; r < count; ++r) {
        if (!zero[r]) continue;
        ids[start + r] = kNoCentroid;
        if (distances) distances[start + r] = std::numeric_limits<float>::quiet_NaN();
      }
    }
  });
}

}  // namespace lancelet::index
