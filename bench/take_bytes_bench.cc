// Bytes a take reads: a take of k random rows reads only the mini-block chunks and the
// full-zip values that hold them, never whole pages. Reports per take the bytes read and
// read calls (from the dataset's ObjectStore counters), the size of the data files, and
// the fraction read; a full scan is the yardstick.
//
// Dataset: $LANCELET_TAKE_DATASET when set (e.g. the reference-written one of
// bench/census_compare.sh: bench-data/census_1000000_2_2.lance), otherwise a 2.2 dataset
// written here with lancelet's writer (id int64, label utf8, emb fixed_size_list<float32,128>,
// tags list<int32> with nulls) in the system temp directory.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "dataset_bytes.h"
#include "table/dataset_state.h"

using namespace lancelet;

namespace {

constexpr int64_t kGeneratedRows = 100000;

class TakeBenchRows final : public RecordBatchReader {
 public:
  TakeBenchRows() {
    schema_ = std::make_shared<Schema>(std::vector<FieldPtr>{
        Field::Make("id", DataType::Int64()), Field::Make("label", DataType::Utf8()),
        Field::Make("emb", DataType::FixedSizeList(DataType::Float32(), 128)),
        Field::Make("tags", DataType::List(DataType::Int32()))});
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (next_ >= kGeneratedRows) return nullptr;
    const int64_t n = std::min<int64_t>(16384, kGeneratedRows - next_);
    FixedWidthBuilder<int64_t> id(DataType::Int64());
    BinaryBuilder label(DataType::Utf8());
    ListBuilder emb(DataType::FixedSizeList(DataType::Float32(), 128));
    auto& emb_items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
    ListBuilder tags(DataType::List(DataType::Int32()));
    auto& tag_items = static_cast<FixedWidthBuilder<int32_t>&>(tags.item_builder());
    std::uniform_real_distribution<float> unit(-1, 1);
    for (int64_t i = next_; i < next_ + n; ++i) {
      id.Append(i);
      label.Append(fmt::format("label-{}", rng_() % 5000));
      for (int d = 0; d < 128; ++d) emb_items.Append(unit(rng_));
      emb.Append();
      if (rng_() % 20 == 0) {
        tags.AppendNull();
      } else {
        for (uint64_t k = rng_() % 9; k > 0; --k) tag_items.Append(int32_t(rng_() % 1000));
        tags.Append();
      }
    }
    next_ += n;
    return RecordBatch::Make(schema_, {id.Finish(), label.Finish(), emb.Finish(), tags.Finish()});
  }

 private:
  SchemaPtr schema_;
  int64_t next_ = 0;
  std::mt19937_64 rng_{5};
};

DatasetPtr BenchDataset() {
  static DatasetPtr dataset = [] {
    if (const char* path = std::getenv("LANCELET_TAKE_DATASET")) return Dataset::Open(path);
    const std::string path = (std::filesystem::temp_directory_path() / "lancelet_take_bytes_bench.lance").string();
    TakeBenchRows rows;
    WriteOptions options;
    options.mode = WriteMode::kOverwrite;
    options.file_version = "2.2";
    return Dataset::Write(path, rows, options);
  }();
  return dataset;
}

// `sets` draws of `count` distinct random offsets below `rows`. Iterations cycle through
// them, so that the few decoded chunks a page reader keeps (for scans whose batches split a
// chunk) rarely hold the next take's rows.
std::vector<std::vector<uint64_t>> RandomOffsets(uint64_t count, uint64_t rows, size_t sets) {
  std::mt19937_64 rng(11);
  std::vector<std::vector<uint64_t>> out(sets);
  for (auto& offsets : out) {
    std::set<uint64_t> seen;
    while (offsets.size() < std::min(count, rows)) {
      const uint64_t row = rng() % rows;
      if (seen.insert(row).second) offsets.push_back(row);
    }
  }
  return out;
}

// Bytes read and read calls per iteration, and the data size they compare with.
void ReportIo(benchmark::State& state, const Dataset& ds, uint64_t bytes, uint64_t calls) {
  const double iterations = double(state.iterations());
  const double data_bytes = double(bench::DataFileBytes(ds));
  state.counters["bytes_read"] = double(bytes) / iterations;
  state.counters["read_calls"] = double(calls) / iterations;
  state.counters["data_bytes"] = data_bytes;
  state.counters["fraction_read"] = double(bytes) / iterations / data_bytes;
}

void BM_TakeBytes(benchmark::State& state) {
  const DatasetPtr ds = BenchDataset();
  const auto offsets = RandomOffsets(uint64_t(state.range(0)), ds->CountRows(), 256);
  benchmark::DoNotOptimize(ds->Take(offsets.back()));  // opens the file and its page metadata
  const io::IoStats& io = table::StateOf(ds).store->stats();
  const uint64_t bytes0 = io.bytes_read, calls0 = io.read_calls;
  size_t next = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ds->Take(offsets[next]));
    next = (next + 1) % offsets.size();
  }
  ReportIo(state, *ds, io.bytes_read - bytes0, io.read_calls - calls0);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(offsets[0].size()));
}
BENCHMARK(BM_TakeBytes)->Arg(1)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_ScanBytes(benchmark::State& state) {
  const DatasetPtr ds = BenchDataset();
  const io::IoStats& io = table::StateOf(ds).store->stats();
  const uint64_t bytes0 = io.bytes_read, calls0 = io.read_calls;
  int64_t rows = 0;
  for (auto _ : state) {
    auto reader = ds->NewScan().BatchSize(65536).Open();
    while (auto batch = reader->Next()) rows += batch->num_rows();
  }
  ReportIo(state, *ds, io.bytes_read - bytes0, io.read_calls - calls0);
  state.SetItemsProcessed(rows);
}
BENCHMARK(BM_ScanBytes)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
