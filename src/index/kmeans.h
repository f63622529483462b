// k-means over float vectors: the centroids of an IVF index's partitions, and (through
// pq_train.h) the codebooks of product quantization.
//
// As the reference trains them: at most sample_rate x k rows are trained on (a seeded
// uniform sample); centroids start as k distinct sample rows drawn at random (the
// reference's init) or by k-means++; each iteration assigns every row to its nearest
// centroid and moves each centroid to the mean of its rows, for at most max_iterations,
// stopping early when no row changed its centroid or the loss moved by less than
// tolerance x loss. A cluster left empty takes half of the largest one: its centroid
// becomes that one's, scaled by 1 + eps and 1 - eps in alternate dimensions (eps = 1/1024),
// the other scaled the opposite way. Metrics: L2 (squared Euclidean); cosine normalises
// every vector to unit length and runs L2 (the centroids are means of unit vectors, not
// themselves unit); dot assigns by 1 - the inner product, each centroid the plain mean
// of its rows, as the reference (lance 12.0.0) does: measured, its dot-trained IVF
// centroids are not unit vectors. Upstream's later k-means keeps every non-zero dot
// centroid at unit length (init, each update, each split), since with plain means the
// rows of largest norm draw every row and the other clusters empty; unit_dot_centroids
// asks for that. The loss is the sum over the training rows of the distance to
// their centroid at the last assignment, which is what the IVF protobuf's `loss` holds.
//
// Results depend on the data, the parameters and the seed only: not on the thread count
// (each row's assignment is computed alone, and sums run in row order). The AVX2 and
// portable kernels can differ in the last bit of a sum, so `allow_simd` is a parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/distance.h"

namespace lancelet::index {

enum class KMeansInit { kRandom, kPlusPlus };

struct KMeansParams {
  size_t k = 0;
  Metric metric = Metric::kL2;  // kL2, kCosine or kDot
  size_t max_iterations = 50;
  double tolerance = 1e-4;  // 0 stops early only when no row changed
  size_t sample_rate = 256;
  KMeansInit init = KMeansInit::kRandom;
  uint64_t seed = 0;
  size_t threads = 0;  // 0: std::thread::hardware_concurrency()
  bool allow_simd = true;
  bool unit_dot_centroids = false;  // dot only: see above
};

struct KMeansModel {
  size_t k = 0;
  size_t dim = 0;
  Metric metric = Metric::kL2;
  std::vector<float> centroids;  // k x dim, row-major
  double loss = 0;
  size_t iterations = 0;     // assignments made
  size_t training_rows = 0;  // rows of the sample that took part (finite, and non-zero for cosine)
};

inline constexpr uint32_t kNoCentroid = UINT32_MAX;

// The nearest of `k` centroids (k x dim) by squared L2 (kL2) or 1 - inner product (kDot),
// for many rows at a time: the centroids are held transposed for the batch kernel.
class CentroidSet {
 public:
  CentroidSet(const float* centroids, size_t k, size_t dim, Metric metric, bool allow_simd = true);
  // ids[r] is row r's nearest centroid (the lowest index on ties), kNoCentroid when every
  // distance is NaN (a row holding NaN); distances[r] its distance (nullable; squared L2
  // is clamped at 0, as ||x||^2 + ||c||^2 - 2 x.c can round below it). One thread.
  void Assign(const float* rows, size_t n, uint32_t* ids, float* distances) const;
  size_t k() const { return k_; }
  size_t dim() const { return dim_; }

 private:
  size_t k_, dim_, stride_;
  Metric metric_;
  const FloatKernels* kernels_;
  std::vector<float> transposed_;  // dim x stride_, zero past column k
  // L2 ranks by |c|^2 - 2 x.c (|x|^2 is the same for every centroid), dot by 1 - x.c: the
  // bias and scale of FloatKernels::nearest; padding columns have bias +inf.
  std::vector<float> bias_;
  float scale_;
};

// Trains on `n` rows of `dim` floats. Refuses (ThrowInvalid, one line) k = 0, dim = 0,
// a metric other than L2/cosine/dot, and fewer usable rows than k.
KMeansModel TrainKMeans(const float* data, size_t n, size_t dim, const KMeansParams& params);

// The partition of each of `n` rows: its nearest centroid by the model's metric (cosine
// normalises the row first); distances nullable. Runs on `threads` threads (0: all).
void AssignPartitions(const KMeansModel& model, const float* rows, size_t n, uint32_t* ids, float* distances,
                      size_t threads = 0, bool allow_simd = true);

// Runs fn(begin, end) over [0, n) split into contiguous shares on up to `threads` threads
// (0: all cores), the calling thread taking one; shares are never smaller than `grain`.
template <typename Fn>
void ParallelFor(size_t n, size_t threads, size_t grain, Fn fn);
size_t TrainingThreads(size_t requested);
void RunShares(size_t n, size_t shares, void (*call)(void*, size_t, size_t), void* fn);

template <typename Fn>
void ParallelFor(size_t n, size_t threads, size_t grain, Fn fn) {
  size_t shares = TrainingThreads(threads);
  if (grain > 0 && n / grain < shares) shares = n / grain > 0 ? n / grain : 1;
  RunShares(n, shares, [](void* f, size_t begin, size_t end) { (*static_cast<Fn*>(f))(begin, end); }, &fn);
}

// The repair of empty clusters (counts[c] == 0) described above; exposed for its test.
void SplitEmptyClusters(std::vector<float>& centroids, size_t dim, std::vector<size_t>& counts);

// min(count, n) distinct indices of [0, n), ascending, drawn uniformly with `seed`.
std::vector<uint32_t> SampleIndices(size_t n, size_t count, uint64_t seed);

// Scales `v` to unit length; false (and `v` unchanged) when its norm is 0 or not finite.
bool NormalizeInPlace(float* v, size_t dim);

}  // namespace lancelet::index
