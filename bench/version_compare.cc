// Times scans or takes of several versions of datasets in one process, interleaved
// round by round so that machine noise hits every version alike, and prints each
// version's median, minimum and ratio to the first. The order rotates from round to
// round, so no version always runs right after another. Comparing versions of ONE dataset
// measures only what the versions add (overlays, deletions): the base files are the
// same files.
//   version_compare scan|take COLUMNS ROUNDS [--where PREDICATE] [--cold] [--no-index] [--batch-size N]
//                   DIR@VERSION...
// take reads 100 random rows per round (the same rows for every version); a scan with
// --where filters its rows. --cold opens each dataset anew, through a new Session, in every
// round and times the open too, so nothing a Dataset or a Session caches carries over
// (what a fresh process pays, less process start-up and the page cache). --no-index filters every row instead of using
// scalar indexes. --batch-size sets the scan's batch rows (default 65536; the CLI and the
// library default to 8192).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"

using namespace lancelet;

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// `fresh_session`: through a Session of its own, so that no file or overlay column that an
// earlier open decoded is found warm (Session::Default() keeps them for the process).
DatasetPtr OpenAt(const std::string& spec, bool fresh_session = false) {
  OpenOptions options;
  if (fresh_session) options.session = std::make_shared<Session>();
  size_t at = spec.rfind('@');
  if (at == std::string::npos) return Dataset::Open(spec, std::nullopt, options);
  return Dataset::Open(spec.substr(0, at), std::stoull(spec.substr(at + 1)), options);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: version_compare scan|take COLUMNS ROUNDS [--where PREDICATE] DIR@VERSION...\n";
    return 2;
  }
  try {
    const std::string mode = argv[1];
    const std::vector<std::string> columns = Split(argv[2]);
    const int rounds = std::stoi(argv[3]);
    int first_dataset = 4;
    std::string where;
    if (argc > first_dataset + 1 && std::string(argv[first_dataset]) == "--where") {
      where = argv[first_dataset + 1];
      first_dataset += 2;
    }
    bool cold = false;
    if (argc > first_dataset && std::string(argv[first_dataset]) == "--cold") {
      cold = true;
      first_dataset += 1;
    }
    bool use_index = true;
    if (argc > first_dataset && std::string(argv[first_dataset]) == "--no-index") {
      use_index = false;
      first_dataset += 1;
    }
    int64_t batch_size = 65536;
    if (argc > first_dataset + 1 && std::string(argv[first_dataset]) == "--batch-size") {
      batch_size = std::stoll(argv[first_dataset + 1]);
      first_dataset += 2;
    }
    std::vector<DatasetPtr> versions;
    for (int i = first_dataset; i < argc; ++i) versions.push_back(OpenAt(argv[i]));
    if (versions.empty()) {
      std::cerr << "version_compare: no DIR@VERSION given\n";
      return 2;
    }
    std::vector<std::vector<double>> seconds(versions.size());
    std::mt19937_64 rng(7);
    for (int round = -1; round < rounds; ++round) {  // round -1 warms caches
      std::vector<uint64_t> rows;
      for (int i = 0; i < 100; ++i) rows.push_back(rng() % versions[0]->CountRows());
      for (size_t i = 0; i < versions.size(); ++i) {
        const size_t v = (size_t(round + 1) + i) % versions.size();  // each round starts with another version
        auto start = std::chrono::steady_clock::now();
        if (cold) versions[v] = OpenAt(argv[first_dataset + int(v)], /*fresh_session=*/true);
        if (mode == "take") {
          versions[v]->Take(rows, columns);
        } else {
          auto scan = versions[v]->NewScan().BatchSize(batch_size).Columns(columns).UseIndex(use_index);
          if (!where.empty()) scan.Filter(where);
          auto reader = scan.Open();
          while (reader->Next()) {
          }
        }
        if (round >= 0) seconds[v].push_back(Seconds(start));
      }
    }
    double first = 0;
    for (size_t v = 0; v < versions.size(); ++v) {
      std::sort(seconds[v].begin(), seconds[v].end());
      double median = seconds[v][seconds[v].size() / 2];
      if (v == 0) first = median;
      std::cout << fmt::format("{{\"dataset\":\"{}\",\"median_ms\":{:.4f},\"min_ms\":{:.4f},\"ratio\":{:.3f}}}\n",
                               argv[first_dataset + int(v)], median * 1e3, seconds[v][0] * 1e3, median / first);
    }
    return 0;
  } catch (const Error& e) {
    std::cerr << "version_compare: " << e.what() << "\n";
    return 1;
  }
}
