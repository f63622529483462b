// IVF and PQ training, lancelet's (index/kmeans.h, index/pq_train.h) beside faiss's
// (Debian's libfaiss-dev, compiled in when CMake finds it), on the same seeded clustered
// float32 data with the same partitions, sub-vectors, iterations and threads.
//
//   kmeans_bench [--rows N] [--dim D] [--partitions K] [--sub-vectors M] [--iterations I]
//                [--threads T] [--seed S] [--init random|plusplus]
//
// Prints one line per trainer: wall time of training and of assigning / encoding every
// row, and the quality, measured the same way for both: the k-means loss (sum over all
// rows of the squared L2 distance to the nearest centroid) and the PQ reconstruction
// error (sum over all residuals of the squared L2 distance to their decoded codes,
// encoded by lancelet's encoder for both codebooks). Both train on a sample of 256 rows
// per centroid (faiss's max_points_per_centroid, the reference's sample rate), both
// start from random rows, and lancelet runs the full iteration count (tolerance 0).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "index/kmeans.h"
#include "index/pq_train.h"

#ifdef LANCELET_BENCH_FAISS
#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/ProductQuantizer.h>
#include <omp.h>
#endif

namespace {

using lancelet::index::KMeansModel;
using lancelet::index::PqCodebook;

struct Options {
  size_t rows = 100000, dim = 128, partitions = 256, sub_vectors = 16, iterations = 25, threads = 2;
  uint64_t seed = 42;
  bool plus_plus = false;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--rows") o.rows = std::strtoull(value, nullptr, 10);
    else if (flag == "--dim") o.dim = std::strtoull(value, nullptr, 10);
    else if (flag == "--partitions") o.partitions = std::strtoull(value, nullptr, 10);
    else if (flag == "--sub-vectors") o.sub_vectors = std::strtoull(value, nullptr, 10);
    else if (flag == "--iterations") o.iterations = std::strtoull(value, nullptr, 10);
    else if (flag == "--threads") o.threads = std::strtoull(value, nullptr, 10);
    else if (flag == "--seed") o.seed = std::strtoull(value, nullptr, 10);
    else if (flag == "--init") o.plus_plus = std::strcmp(value, "plusplus") == 0;
    else {
      std::fprintf(stderr, "kmeans_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

// 1024 Gaussian clusters of different spreads around N(0, 4^2) centres.
std::vector<float> Clustered(const Options& o) {
  std::mt19937_64 gen(o.seed);
  std::normal_distribution<float> normal(0, 1);
  const size_t centers = 1024;
  std::vector<float> center(centers * o.dim), spread(centers), data(o.rows * o.dim);
  for (float& v : center) v = 4 * normal(gen);
  for (float& s : spread) s = 0.5f + std::uniform_real_distribution<float>(0, 1)(gen);
  for (size_t r = 0; r < o.rows; ++r) {
    const size_t c = gen() % centers;
    for (size_t d = 0; d < o.dim; ++d) data[r * o.dim + d] = center[c * o.dim + d] + spread[c] * normal(gen);
  }
  return data;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Quality {
  double loss = 0, assign_seconds = 0;
};

// The loss of `centroids` over every row, through lancelet's assignment.
Quality Measure(const Options& o, const std::vector<float>& data, const std::vector<float>& centroids) {
  KMeansModel model;
  model.k = o.partitions;
  model.dim = o.dim;
  model.centroids = centroids;
  std::vector<uint32_t> ids(o.rows);
  std::vector<float> dist(o.rows);
  const auto start = std::chrono::steady_clock::now();
  lancelet::index::AssignPartitions(model, data.data(), o.rows, ids.data(), dist.data(), o.threads);
  Quality q;
  q.assign_seconds = Seconds(start);
  for (float d : dist) q.loss += d;
  return q;
}

// Every row's residual from its nearest centroid of `ivf`.
std::vector<float> Residuals(const Options& o, const std::vector<float>& data, const KMeansModel& ivf) {
  std::vector<uint32_t> ids(o.rows);
  lancelet::index::AssignPartitions(ivf, data.data(), o.rows, ids.data(), nullptr, o.threads);
  std::vector<float> out(data.size());
  for (size_t r = 0; r < o.rows; ++r)
    for (size_t d = 0; d < o.dim; ++d) out[r * o.dim + d] = data[r * o.dim + d] - ivf.centroids[ids[r] * o.dim + d];
  return out;
}

double PqError(const Options& o, const PqCodebook& pq, const std::vector<float>& residuals, double* encode_seconds) {
  std::vector<uint8_t> codes(o.rows * o.sub_vectors);
  const auto start = std::chrono::steady_clock::now();
  lancelet::index::EncodePq(pq, residuals.data(), o.rows, codes.data(), o.threads);
  *encode_seconds = Seconds(start);
  return lancelet::index::ReconstructionError(pq, residuals.data(), codes.data(), o.rows);
}

void Report(const char* who, const char* what, double train, double loss, double apply, const char* apply_what) {
  std::printf("%-8s %-4s train %7.3f s  %s %6.3f s  %s %.6e\n", who, what, train, apply_what, apply,
              std::strcmp(what, "ivf") == 0 ? "loss" : "pq_error", loss);
}

KMeansModel OursIvf(const Options& o, const std::vector<float>& data) {
  lancelet::index::KMeansParams p;
  p.k = o.partitions;
  p.max_iterations = o.iterations;
  p.tolerance = 0;
  p.seed = o.seed;
  p.threads = o.threads;
  p.init = o.plus_plus ? lancelet::index::KMeansInit::kPlusPlus : lancelet::index::KMeansInit::kRandom;
  const auto start = std::chrono::steady_clock::now();
  KMeansModel model = lancelet::index::TrainKMeans(data.data(), o.rows, o.dim, p);
  const double train = Seconds(start);
  const Quality q = Measure(o, data, model.centroids);
  Report("lancelet", "ivf", train, q.loss, q.assign_seconds, "assign");
  std::printf("         (iterations %zu, training loss %.6e over %zu rows)\n", model.iterations, model.loss,
              model.training_rows);
  return model;
}

void OursPq(const Options& o, const std::vector<float>& residuals) {
  lancelet::index::PqParams p;
  p.num_sub_vectors = o.sub_vectors;
  p.max_iterations = o.iterations;
  p.tolerance = 0;
  p.seed = o.seed;
  p.threads = o.threads;
  // The residuals are given: an IVF of one zero centroid leaves them as they are.
  KMeansModel zero;
  zero.k = 1;
  zero.dim = o.dim;
  zero.centroids.assign(o.dim, 0.0f);
  const auto start = std::chrono::steady_clock::now();
  const PqCodebook pq = lancelet::index::TrainPq(residuals.data(), o.rows, o.dim, &zero, p);
  const double train = Seconds(start);
  double encode = 0;
  const double error = PqError(o, pq, residuals, &encode);
  Report("lancelet", "pq", train, error, encode, "encode");
}

#ifdef LANCELET_BENCH_FAISS
void FaissIvf(const Options& o, const std::vector<float>& data) {
  faiss::ClusteringParameters cp;
  cp.niter = int(o.iterations);
  cp.seed = int(o.seed);
  cp.max_points_per_centroid = 256;
  faiss::Clustering clustering(int(o.dim), int(o.partitions), cp);
  faiss::IndexFlatL2 index(int64_t(o.dim));
  const auto start = std::chrono::steady_clock::now();
  clustering.train(int64_t(o.rows), data.data(), index);
  const double train = Seconds(start);
  const Quality q = Measure(o, data, clustering.centroids);
  std::vector<int64_t> labels(o.rows);
  std::vector<float> dist(o.rows);
  const auto assign_start = std::chrono::steady_clock::now();
  index.search(int64_t(o.rows), data.data(), 1, dist.data(), labels.data());
  const double assign = Seconds(assign_start);
  Report("faiss", "ivf", train, q.loss, assign, "assign");
  std::printf("         (training loss %.6e)\n", double(clustering.iteration_stats.back().obj));
}

void FaissPq(const Options& o, const std::vector<float>& residuals) {
  faiss::ProductQuantizer fpq(o.dim, o.sub_vectors, 8);
  fpq.cp.niter = int(o.iterations);
  fpq.cp.seed = int(o.seed);
  fpq.cp.max_points_per_centroid = 256;
  const auto start = std::chrono::steady_clock::now();
  fpq.train(o.rows, residuals.data());
  const double train = Seconds(start);
  std::vector<uint8_t> codes(o.rows * fpq.code_size);
  const auto encode_start = std::chrono::steady_clock::now();
  fpq.compute_codes(residuals.data(), codes.data(), o.rows);
  const double encode = Seconds(encode_start);
  // faiss lays its centroids out as [M][ksub][dsub], the reference's codebook layout.
  PqCodebook pq;
  pq.dim = o.dim;
  pq.num_sub_vectors = o.sub_vectors;
  pq.nbits = 8;
  pq.codebook = fpq.centroids;
  double ours_encode = 0;
  const double error = PqError(o, pq, residuals, &ours_encode);
  Report("faiss", "pq", train, error, encode, "encode");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
#ifdef LANCELET_BENCH_FAISS
  omp_set_num_threads(int(o.threads));
#endif
  std::printf("%zu x %zu float32, %zu partitions, PQ %zu x 8 bits, %zu iterations, %zu threads, init %s\n", o.rows,
              o.dim, o.partitions, o.sub_vectors, o.iterations, o.threads, o.plus_plus ? "k-means++" : "random");
  const std::vector<float> data = Clustered(o);
  const KMeansModel ivf = OursIvf(o, data);
  // Both PQs train on the same residuals: those from lancelet's IVF centroids.
  const std::vector<float> residuals = Residuals(o, data, ivf);
  OursPq(o, residuals);
#ifdef LANCELET_BENCH_FAISS
  FaissIvf(o, data);
  FaissPq(o, residuals);
#else
  std::printf("faiss: not found when this was built (apt-get install libfaiss-dev, then run CMake again)\n");
#endif
  return 0;
}
