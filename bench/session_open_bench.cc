// What opening a dataset and reading one column costs through a warm Session (every
// data and overlay file already opened and decoded by an earlier opening) against a new
// Session each time (a new process's first read, less process start-up).
//
//   build/release/bench/session_open_bench DATASET
// e.g. bench-data/history_unbounded/history.lance (bench/overlay_history.sh writes it): it
// reads qty, or the first column of a dataset without one.
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
  auto ds = lancelet::Dataset::Open(g_dataset, std::nullopt, options);
  // qty (bench/overlay_history.sh's overlaid column) when there is one, else the first.
  const auto& schema = *ds->schema();
  std::string column = schema.field(0)->name;
  for (size_t i = 0; i < schema.num_fields(); ++i)
    if (schema.field(i)->name == "qty") column = "qty";
  auto reader = ds->NewScan().Columns({column}).Open();
  int64_t rows = 0;
  while (auto batch = reader->Next()) rows += batch->num_rows();
  return rows;
}

void WarmSession(benchmark::State& state) {
  auto session = std::make_shared<lancelet::Session>();
  OpenAndScan(session);
  for (auto _ : state) benchmark::DoNotOptimize(OpenAndScan(session));
}

// Opening alone (the newest version: listing, manifest, index section), no read: the
// version kept by the session, against a session that keeps no version (every open
// decodes the manifest, as before sessions kept versions).
void OpenOnly(benchmark::State& state, uint64_t versions_kept) {
  auto session = std::make_shared<lancelet::Session>(lancelet::SessionOptions{.versions = versions_kept});
  OpenAndScan(session);
  lancelet::OpenOptions options;
  options.session = session;
  for (auto _ : state) benchmark::DoNotOptimize(lancelet::Dataset::Open(g_dataset, std::nullopt, options));
}
void WarmSessionOpenOnly(benchmark::State& state) { OpenOnly(state, 8); }
void NoVersionKeptOpenOnly(benchmark::State& state) { OpenOnly(state, 0); }

void NewSession(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(OpenAndScan(std::make_shared<lancelet::Session>()));
}

BENCHMARK(WarmSession)->Unit(benchmark::kMillisecond);
BENCHMARK(WarmSessionOpenOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(NoVersionKeptOpenOnly)->Unit(benchmark::kMillisecond);
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
