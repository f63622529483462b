// Filter evaluation in process: EvaluateSelection over 1M rows in batches of 64K (the
// scanner's batch), for the predicates the issues quote. Counter `ns_per_row` is the
// figure the targets are written in (issue 16: `id % 100 = 0` at <= 3 ns a row).
//   build/release/bench/expr_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "lancelet/builder.h"
#include "lancelet/expr.h"
#include "lancelet/record_batch.h"

using namespace lancelet;

namespace {

constexpr int64_t kRows = 1 << 20;
constexpr int64_t kBatchRows = 1 << 16;

// id int64 = row number, price float64 in [0, 1000), qty int32 in [0, 100) with 1% NULL.
std::vector<RecordBatchPtr> Batches() {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("price", DataType::Float64()),
      Field::Make("qty", DataType::Int32())});
  std::mt19937_64 rng(11);
  std::vector<RecordBatchPtr> out;
  for (int64_t start = 0; start < kRows; start += kBatchRows) {
    auto id = ArrayBuilder::Make(DataType::Int64());
    auto price = ArrayBuilder::Make(DataType::Float64());
    auto qty = ArrayBuilder::Make(DataType::Int32());
    for (int64_t i = start; i < start + kBatchRows; ++i) {
      id->AppendScalar(Scalar{DataType::Int64(), i});
      price->AppendScalar(Scalar{DataType::Float64(), double(rng() % 1000000) / 1000.0});
      if (rng() % 100 == 0) qty->AppendScalar(Scalar::Null(DataType::Int32()));
      else qty->AppendScalar(Scalar{DataType::Int32(), int64_t(rng() % 100)});
    }
    out.push_back(RecordBatch::Make(schema, {id->Finish(), price->Finish(), qty->Finish()}));
  }
  return out;
}

void Filter(benchmark::State& state, const std::string& predicate) {
  static const std::vector<RecordBatchPtr> batches = Batches();
  const BoundExprPtr bound = Bind(*ParseExpression(predicate), *batches[0]->schema());
  int64_t selected = 0;
  for (auto _ : state) {
    selected = 0;
    for (const auto& b : batches) selected += int64_t(EvaluateSelection(*bound, *b).size());
    benchmark::DoNotOptimize(selected);
  }
  state.counters["selected"] = double(selected);
  state.counters["ns_per_row"] =
      benchmark::Counter(double(kRows) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                   benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(Filter, id_mod_100_eq_0, std::string("id % 100 = 0"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Filter, id_gt_990000, std::string("id > 990000"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Filter, price_gt_500, std::string("price > 500"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Filter, qty_mod_7_eq_0, std::string("qty % 7 = 0"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Filter, range_and, std::string("price > 100 AND price < 200 AND qty > 50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Filter, arithmetic, std::string("price * 2 + qty > 1000"))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
