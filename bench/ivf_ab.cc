// IVF search on two datasets A/B in one process, interleaved so that machine load hits
// both alike (issue 43: "10% of the vectors stale through overlays: QPS overhead <= 15%
// at equal recall"; A is the dataset as indexed, B the same rows with some overlaid).
//   ivf_ab A.lance B.lance QUERIES.f32 GT.i32 DIM [--nprobes 1,2,4,8,16] [--refine 0,5]
//          [--rounds 5] [--threads 2] [--queries N]
// Per (refine, nprobes): "single" runs the queries one at a time, alternating A and B
// query by query (A's query i, B's query i, A's i + 1, ...; which side goes first flips
// every round), and times each side's share; "batch" hands all queries to --threads
// threads on A, then on B (then B, A in the next round). Each figure is the median over
// --rounds of (queries / seconds); recall@10 against GT (int32 ids, 10 per query). The
// search is the library's Dataset::Search returning `id` and `_distance`, as the Python
// binding calls it, without Python.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/vector_search.h"

using namespace lancelet;

namespace {

constexpr size_t kTop = 10;

std::vector<int64_t> Ints(const std::string& list) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(std::stoll(list.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

template <typename T>
std::vector<T> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) ThrowInvalid("cannot open '{}'", path);
  const auto bytes = size_t(in.tellg());
  std::vector<T> out(bytes / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(out.size() * sizeof(T)));
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Bench {
  std::vector<DatasetPtr> sides;
  std::vector<std::vector<double>> queries;
  std::vector<int32_t> truth;
  size_t threads = 2;

  std::vector<int64_t> Ids(const Dataset& ds, size_t q, int64_t nprobes, int64_t refine) const {
    VectorQuery query;
    query.column = "emb";
    query.vector = queries[q];
    query.k = int64_t(kTop);
    query.nprobes = nprobes;
    if (refine) query.refine_factor = refine;
    query.columns = std::vector<std::string>{"id"};
    auto reader = ds.Search(query);
    std::vector<int64_t> ids;
    while (auto batch = reader->Next()) {
      const int64_t* v = batch->column(0)->values<int64_t>();
      ids.insert(ids.end(), v, v + batch->num_rows());
    }
    return ids;
  }

  double Recall(const std::vector<std::vector<int64_t>>& ids) const {
    size_t hits = 0;
    for (size_t q = 0; q < ids.size(); ++q) {
      const std::set<int64_t> want(truth.begin() + ptrdiff_t(q * kTop), truth.begin() + ptrdiff_t((q + 1) * kTop));
      for (int64_t id : ids[q]) hits += want.count(id);
    }
    return double(hits) / double(kTop * ids.size());
  }

  // One batch: every query on `threads` threads taking the next query in turn.
  double Batch(const Dataset& ds, int64_t nprobes, int64_t refine, std::vector<std::vector<int64_t>>& ids) const {
    std::atomic<size_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (size_t q; (q = next++) < queries.size();) ids[q] = Ids(ds, q, nprobes, refine);
      });
    for (auto& t : pool) t.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Per side: QPS of each round and the ids of the last.
  void Measure(bool batch, int64_t nprobes, int64_t refine, int rounds, std::vector<std::vector<double>>& qps,
               std::vector<std::vector<std::vector<int64_t>>>& ids) const {
    const size_t n = queries.size();
    for (size_t q = 0; q < std::min<size_t>(20, n); ++q)
      for (const auto& ds : sides) Ids(*ds, q, nprobes, refine);  // warm-up, untimed
    for (int round = 0; round < rounds; ++round) {
      std::vector<double> seconds(sides.size(), 0);
      for (size_t i = 0; i < sides.size(); ++i) {
        const size_t s = round % 2 ? sides.size() - 1 - i : i;
        if (batch) seconds[s] = Batch(*sides[s], nprobes, refine, ids[s]);
      }
      for (size_t q = 0; !batch && q < n; ++q)
        for (size_t i = 0; i < sides.size(); ++i) {
          const size_t s = round % 2 ? sides.size() - 1 - i : i;
          const auto start = std::chrono::steady_clock::now();
          ids[s][q] = Ids(*sides[s], q, nprobes, refine);
          seconds[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
      for (size_t s = 0; s < sides.size(); ++s) qps[s].push_back(double(n) / seconds[s]);
    }
  }
};

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: ivf_ab A.lance B.lance QUERIES.f32 GT.i32 DIM [--nprobes 1,2,4] [--refine 0,5] "
                 "[--rounds 5] [--threads 2] [--queries N]\n";
    return 2;
  }
  try {
    Bench bench;
    bench.sides = {Dataset::Open(argv[1]), Dataset::Open(argv[2])};
    const size_t dim = std::stoull(argv[5]);
    std::vector<int64_t> nprobes_list{1, 2, 4, 8, 16}, refines{0, 5};
    int rounds = 5;
    size_t limit = SIZE_MAX;
    for (int a = 6; a + 1 < argc; a += 2) {
      const std::string flag = argv[a], value = argv[a + 1];
      if (flag == "--nprobes") nprobes_list = Ints(value);
      else if (flag == "--refine") refines = Ints(value);
      else if (flag == "--rounds") rounds = std::stoi(value);
      else if (flag == "--threads") bench.threads = std::stoull(value);
      else if (flag == "--queries") limit = std::stoull(value);
      else ThrowInvalid("unknown option {}", flag);
    }
    const std::vector<float> flat = ReadAll<float>(argv[3]);
    bench.truth = ReadAll<int32_t>(argv[4]);
    const size_t n = std::min(flat.size() / dim, limit);
    for (size_t q = 0; q < n; ++q) bench.queries.emplace_back(flat.begin() + ptrdiff_t(q * dim),
                                                              flat.begin() + ptrdiff_t((q + 1) * dim));
    for (int64_t refine : refines)
      for (const bool batch : {false, true})
        for (int64_t nprobes : nprobes_list) {
          std::vector<std::vector<double>> qps(2);
          std::vector<std::vector<std::vector<int64_t>>> ids(2, std::vector<std::vector<int64_t>>(n));
          bench.Measure(batch, nprobes, refine, rounds, qps, ids);
          const double a = Median(qps[0]), b = Median(qps[1]);
          fmt::print("{{\"refine\": {}, \"mode\": \"{}\", \"nprobes\": {}, \"a_recall\": {:.4f}, \"a_qps\": {:.1f}, "
                     "\"b_recall\": {:.4f}, \"b_qps\": {:.1f}, \"b_overhead\": {:.4f}, \"load\": {:.1f}}}\n",
                     refine, batch ? "batch" : "single", nprobes, bench.Recall(ids[0]), a, bench.Recall(ids[1]), b,
                     1 - b / a, LoadAverage());
          std::fflush(stdout);
        }
  } catch (const std::exception& e) {
    std::cerr << "ivf_ab: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
