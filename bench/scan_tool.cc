// Benchmark driver: makes the benchmark datasets with lancelet and times lancelet's scans.
//   scan_tool gen DIR --rows N --dim D [--version 2.0] [--fragments F]
//   scan_tool scan DIR [--repeat R] [--columns a,b]
// `scan` prints one JSON line: rows, the median seconds over R warm runs, rows/s.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"

using namespace lancelet;

namespace {

std::string Arg(int argc, char** argv, const char* name, const std::string& fallback) {
  for (int i = 0; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

// Streams the benchmark rows: id int64 (sequential), score float32, label utf8, emb fsl<float32,dim>.
class GenReader final : public RecordBatchReader {
 public:
  GenReader(int64_t rows, int32_t dim) : rows_(rows), dim_(dim) {
    schema_ = std::make_shared<Schema>(std::vector<FieldPtr>{
        Field::Make("id", DataType::Int64()), Field::Make("score", DataType::Float32()),
        Field::Make("label", DataType::Utf8()),
        Field::Make("emb", DataType::FixedSizeList(DataType::Float32(), dim))});
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (next_ >= rows_) return nullptr;
    int64_t n = std::min<int64_t>(65536, rows_ - next_);
    FixedWidthBuilder<int64_t> id(DataType::Int64());
    FixedWidthBuilder<float> score(DataType::Float32());
    BinaryBuilder label(DataType::Utf8());
    ListBuilder emb(schema_->field(3)->type);
    auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = next_; i < next_ + n; ++i) {
      id.Append(i);
      score.Append(u(rng_));
      label.Append(fmt::format("label-{}", rng_() % 1000));
      for (int32_t d = 0; d < dim_; ++d) items.Append(u(rng_));
      emb.Append();
    }
    next_ += n;
    return RecordBatch::Make(schema_, {id.Finish(), score.Finish(), label.Finish(), emb.Finish()});
  }

 private:
  int64_t rows_, next_ = 0;
  int32_t dim_;
  SchemaPtr schema_;
  std::mt19937_64 rng_{42};
};

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3) {
      std::cerr << "usage: scan_tool gen|scan DIR [options]\n";
      return 2;
    }
    std::string cmd = argv[1], dir = argv[2];
    if (cmd == "gen") {
      int64_t rows = std::stoll(Arg(argc, argv, "--rows", "1000000"));
      int32_t dim = std::stoi(Arg(argc, argv, "--dim", "128"));
      int64_t fragments = std::stoll(Arg(argc, argv, "--fragments", "1"));
      WriteOptions options;
      options.mode = WriteMode::kOverwrite;
      options.file_version = Arg(argc, argv, "--version", "2.0");
      options.max_rows_per_file = (rows + fragments - 1) / fragments;
      GenReader reader(rows, dim);
      auto ds = Dataset::Write(dir, reader, options);
      std::cout << fmt::format("{{\"rows\":{},\"version\":{}}}\n", ds->CountRows(), ds->version());
      return 0;
    }
    if (cmd == "scan") {
      int repeat = std::stoi(Arg(argc, argv, "--repeat", "5"));
      auto ds = Dataset::Open(dir);
      std::vector<double> seconds;
      int64_t rows = 0;
      for (int r = 0; r < repeat + 1; ++r) {  // the first run warms the page cache
        auto start = std::chrono::steady_clock::now();
        auto reader = ds->NewScan().BatchSize(65536).Open();
        rows = 0;
        while (auto b = reader->Next()) rows += b->num_rows();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r > 0) seconds.push_back(s);
      }
      std::sort(seconds.begin(), seconds.end());
      double median = seconds[seconds.size() / 2];
      std::cout << fmt::format("{{\"rows\":{},\"median_s\":{:.4f},\"rows_per_s\":{:.0f}}}\n", rows, median,
                               double(rows) / median);
      return 0;
    }
    std::cerr << "unknown command " << cmd << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "scan_tool: " << e.what() << "\n";
    return 1;
  }
}
