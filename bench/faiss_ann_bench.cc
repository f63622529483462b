// The faiss anchor of bench/ann_compare.py: faiss's IndexIVFPQ and IndexIVFFlat (Debian's
// libfaiss-dev) on the same raw float32 files the driver wrote, with the same partitions,
// sub-vectors and bits as the lancelet and reference indexes, trained on 256 rows per
// partition (the reference's sample rate). Prints one JSON line per measurement:
//
//   faiss_ann_bench DIR ROWS DIM QUERIES [--nprobes 1,2,4] [--threads T] [--rounds R]
//                   [--type ivf_pq|ivf_flat] [--partitions P] [--sub-vectors M] [--bits B]
//
// DIR holds base.f32 (ROWS x DIM), queries.f32 (QUERIES x DIM) and gt.i32 (QUERIES x 10,
// the exact 10 nearest by L2). "single" times a loop of one-query search calls on one
// thread; "batch" one search call over all queries on T threads (OpenMP), faiss's own
// batching. Refine 5 wraps the index in IndexRefineFlat (k_factor 5: re-rank 50
// candidates with the stored vectors), as refine_factor does for the other two.
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexRefine.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Idx = faiss::Index::idx_t;

struct Options {
  std::string dir, type = "ivf_pq";
  size_t rows = 0, dim = 0, queries = 0, partitions = 256, sub_vectors = 16, bits = 8, threads = 2, rounds = 2;
  std::vector<int> nprobes{1, 2, 4, 8, 16, 32, 64};
};

Options Parse(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: faiss_ann_bench DIR ROWS DIM QUERIES [--nprobes a,b] [--threads T] [--rounds R] "
                         "[--type ivf_pq|ivf_flat] [--partitions P] [--sub-vectors M] [--bits B]\n");
    std::exit(2);
  }
  Options o;
  o.dir = argv[1];
  o.rows = std::strtoull(argv[2], nullptr, 10);
  o.dim = std::strtoull(argv[3], nullptr, 10);
  o.queries = std::strtoull(argv[4], nullptr, 10);
  for (int i = 5; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--nprobes") {
      o.nprobes.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');) o.nprobes.push_back(std::stoi(item));
    } else if (flag == "--threads") o.threads = std::stoul(value);
    else if (flag == "--rounds") o.rounds = std::stoul(value);
    else if (flag == "--type") o.type = value;
    else if (flag == "--partitions") o.partitions = std::stoul(value);
    else if (flag == "--sub-vectors") o.sub_vectors = std::stoul(value);
    else if (flag == "--bits") o.bits = std::stoul(value);
    else {
      std::fprintf(stderr, "faiss_ann_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

template <typename T>
std::vector<T> ReadRaw(const std::string& path, size_t count) {
  std::vector<T> values(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), std::streamsize(count * sizeof(T)));
  if (!in) {
    std::fprintf(stderr, "faiss_ann_bench: %s: expected %zu bytes\n", path.c_str(), count * sizeof(T));
    std::exit(1);
  }
  return values;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// recall@10: the share of each query's exact 10 nearest found among its 10 results.
double Recall(const std::vector<Idx>& found, const std::vector<int32_t>& truth, size_t queries) {
  size_t hits = 0;
  for (size_t q = 0; q < queries; ++q)
    for (size_t i = 0; i < 10; ++i)
      hits += std::count(found.begin() + long(q * 10), found.begin() + long(q * 10 + 10), Idx(truth[q * 10 + i]));
  return double(hits) / double(queries * 10);
}

// Times the queries one search call at a time (one thread) and all in one call (T threads).
void Measure(const Options& o, faiss::Index& index, const std::vector<float>& queries,
             const std::vector<int32_t>& truth, int nprobe, int refine) {
  std::vector<float> distances(o.queries * 10);
  std::vector<Idx> labels(o.queries * 10);
  for (const char* mode : {"single", "batch"}) {
    const bool single = std::string(mode) == "single";
    omp_set_num_threads(single ? 1 : int(o.threads));
    index.search(std::min<Idx>(20, Idx(o.queries)), queries.data(), 10, distances.data(),
                 labels.data());  // warm-up
    for (size_t round = 0; round < o.rounds; ++round) {
      const auto start = std::chrono::steady_clock::now();
      if (single) {
        for (size_t q = 0; q < o.queries; ++q)
          index.search(1, queries.data() + q * o.dim, 10, distances.data() + q * 10, labels.data() + q * 10);
      } else {
        index.search(Idx(o.queries), queries.data(), 10, distances.data(), labels.data());
      }
      const double s = Seconds(start);
      std::printf("{\"side\":\"faiss\",\"type\":\"%s\",\"mode\":\"%s\",\"nprobes\":%d,\"refine\":%d,\"qps\":%.1f,"
                  "\"recall\":%.4f}\n", o.type.c_str(), mode, nprobe, refine, double(o.queries) / s,
                  Recall(labels, truth, o.queries));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const auto base = ReadRaw<float>(o.dir + "/base.f32", o.rows * o.dim);
  const auto queries = ReadRaw<float>(o.dir + "/queries.f32", o.queries * o.dim);
  const auto truth = ReadRaw<int32_t>(o.dir + "/gt.i32", o.queries * 10);
  omp_set_num_threads(int(o.threads));

  faiss::IndexFlatL2 quantizer(int64_t(o.dim));
  std::unique_ptr<faiss::IndexIVF> ivf;
  if (o.type == "ivf_pq")
    ivf = std::make_unique<faiss::IndexIVFPQ>(&quantizer, int64_t(o.dim), o.partitions, o.sub_vectors, o.bits);
  else
    ivf = std::make_unique<faiss::IndexIVFFlat>(&quantizer, int64_t(o.dim), o.partitions);
  // Train on 256 random rows per partition, as the reference samples.
  const size_t sample = std::min(o.rows, 256 * o.partitions);
  std::vector<size_t> order(o.rows);
  for (size_t i = 0; i < o.rows; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  std::vector<float> train(sample * o.dim);
  for (size_t i = 0; i < sample; ++i)
    std::copy_n(base.begin() + long(order[i] * o.dim), o.dim, train.begin() + long(i * o.dim));
  auto start = std::chrono::steady_clock::now();
  ivf->train(Idx(sample), train.data());
  ivf->add(Idx(o.rows), base.data());
  std::printf("{\"side\":\"faiss\",\"type\":\"%s\",\"build_s\":%.2f}\n", o.type.c_str(), Seconds(start));
  std::fflush(stdout);

  faiss::IndexRefineFlat refined(ivf.get(), base.data());
  refined.k_factor = 5;
  for (int refine : {0, 5}) {
    if (refine && o.type != "ivf_pq") break;
    for (int nprobe : o.nprobes) {
      ivf->nprobe = size_t(std::min<int>(nprobe, int(o.partitions)));
      Measure(o, refine ? static_cast<faiss::Index&>(refined) : *ivf, queries, truth, nprobe, refine);
    }
  }
  return 0;
}
