// Opening an overlay file and decoding its column: what a first read pays per tiny
// overlay (a strided 0.1% UPDATE writes one of about 1.3 KB per fragment).
//
//   build/release/bench/overlay_open_bench DATA_DIR
// DATA_DIR's overlay files under 4 KiB are opened in turn (bench/overlay_history.sh
// writes sixty-four of them in bench-data/history_unbounded/history.lance/data).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "format/lance_file.h"
#include "io/object_store.h"

namespace {

std::vector<std::string> g_files;

// Opens the files in turn; with `decode`, also decodes each one's column whole.
void Open(benchmark::State& state, bool decode) {
  auto store = lancelet::io::MakeLocalStore();
  size_t i = 0;
  for (auto _ : state) {
    const auto& path = g_files[i++ % g_files.size()];
    auto reader = lancelet::format::LanceFileReader::Open(*store, path, std::filesystem::file_size(path));
    if (decode) benchmark::DoNotOptimize(reader->ReadField(0, 0, reader->num_rows()).get());
    benchmark::DoNotOptimize(reader.get());
  }
}

void OpenOnly(benchmark::State& state) { Open(state, false); }
void OpenAndDecode(benchmark::State& state) { Open(state, true); }

BENCHMARK(OpenOnly);
BENCHMARK(OpenAndDecode);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR (a dataset's data/, e.g. bench-data/history_unbounded/history.lance/data)\n", argv[0]);
    return 2;
  }
  for (const auto& e : std::filesystem::directory_iterator(argv[1]))
    if (e.path().filename().string().rfind("overlay", 0) == 0 && e.file_size() < 4096) g_files.push_back(e.path());
  benchmark::RunSpecifiedBenchmarks();
}
