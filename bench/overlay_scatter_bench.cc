// Scattering overlay values into a scan's batch: the cells given as a coverage bitmap's
// range (what a first read of a version does) against the same cells listed (a merged
// layer), per covered cell, for int32 values at several densities of strided coverage.
//
//   build/release/bench/overlay_scatter_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <vector>

#include "format/roaring_bitmap.h"
#include "lancelet/builder.h"
#include "overlay/patch.h"

namespace lancelet {
namespace {

constexpr uint32_t kRows = 1 << 16;  // one container: a batch of 8192 rows is an eighth
constexpr uint32_t kBatch = 8192;

struct Setup {
  format::RoaringBitmap coverage;
  std::vector<uint32_t> cells;  // in the batch [kBatch, 2 * kBatch)
  ArrayPtr values;

  explicit Setup(uint32_t stride) {
    format::RoaringBitmap built;
    for (uint32_t c = 0; c < kRows; c += stride) built.Add(c);
    coverage = format::RoaringBitmap::DeserializePortable(built.SerializePortable(), "bench");
    coverage.AppendMembersIn(kBatch, 2 * kBatch, cells);
    FixedWidthBuilder<int32_t> b(DataType::Int32());
    for (size_t k = 0; k < cells.size(); ++k) b.Append(-int32_t(k));
    values = b.Finish();
  }
};

ArrayPtr Batch() {
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  for (uint32_t i = 0; i < kBatch; ++i) b.Append(int32_t(i));
  return b.Finish();
}

void Scatter(benchmark::State& state, bool listed) {
  const Setup setup(uint32_t(state.range(0)));
  overlay::Replacement r{{}, setup.values, 0, kBatch};
  if (listed) r.cells = setup.cells;
  else r.coverage = &setup.coverage, r.end = 2 * kBatch, r.count = setup.cells.size();
  const std::vector<overlay::Replacement> replacements = {r};
  ArrayPtr batch = Batch();
  for (auto _ : state) {
    batch = overlay::ApplyReplacements(std::move(batch), replacements);  // in place: the batch is unshared
    benchmark::DoNotOptimize(batch->buffers[1]->data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(setup.cells.size()));
}

void BitmapRange(benchmark::State& state) { Scatter(state, false); }
void Listed(benchmark::State& state) { Scatter(state, true); }

// Strides 1000 (0.1%, an array container), 10 (10%, a bitset) and 2 (50%).
BENCHMARK(BitmapRange)->Arg(1000)->Arg(10)->Arg(2);
BENCHMARK(Listed)->Arg(1000)->Arg(10)->Arg(2);

}  // namespace
}  // namespace lancelet

BENCHMARK_MAIN();
