// What opening a dataset and reading one column costs through a warm Session (every
// data and overlay file already opened and decoded by an earlier opening) against a new
// Session each time (a new process's first read, less process start-up).
//
//   build/release/bench/session_open_bench DATASET
// e.g. bench-data/history_unbounded/history.lance (bench/overlay_history.sh writes it).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "lancelet/dataset.h"
#include "lancelet/session.h"

namespace {

std::string g_dataset;

int64_t OpenAndScan(const std::shared_ptr<lancelet::Session>& session) {
  lancelet::OpenOptions options;
  options.session = session;
  auto reader = lancelet::Dataset::Open(g_dataset, std::nullopt, options)->NewScan().Columns({"qty"}).Open();
  int64_t rows = 0;
  while (auto batch = reader->Next()) rows += batch->num_rows();
  return rows;
}

void WarmSession(benchmark::State& state) {
  auto session = std::make_shared<lancelet::Session>();
  OpenAndScan(session);
  for (auto _ : state) benchmark::DoNotOptimize(OpenAndScan(session));
}

void NewSession(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(OpenAndScan(std::make_shared<lancelet::Session>()));
}

BENCHMARK(WarmSession)->Unit(benchmark::kMillisecond);
BENCHMARK(NewSession)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: session_open_bench DATASET\n");
    return 2;
  }
  g_dataset = argv[1];
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
