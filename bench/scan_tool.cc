// Benchmark driver: makes the benchmark datasets with lancelet and times lancelet's work.
//   scan_tool gen DIR --rows N --dim D [--version 2.0] [--fragments F] [--shape scan|wide|narrow]
//   scan_tool scan DIR [--repeat R] [--columns a,b]
//   scan_tool take DIR (--count K | --offsets FILE) [--repeat R] [--columns a,b]
//   scan_tool update DIR --set "col = expr" --where PRED
//   scan_tool feed DIR --at V [--repeat R]: the change feed of version V (changes after V-1)
//     against a full scan of version V: rows, median seconds and bytes read of each
// Each prints one JSON line: rows, the median seconds over R warm runs, rows/s. take also
// prints the bytes and read calls of its first (cold: file metadata included) and of a warm
// run, and the size of the dataset's data files. --offsets FILE (one offset per line) takes
// the same rows every run, the rows bench/reference_take.mjs takes.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <tuple>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "dataset_bytes.h"
#include "table/dataset_state.h"

using namespace lancelet;

namespace {

std::string Arg(int argc, char** argv, const char* name, const std::string& fallback) {
  for (int i = 0; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

// Streams the benchmark rows. Shapes:
//   scan:   id int64 (sequential), score float32, label utf8, emb fsl<float32,dim>
//   wide:   id int64, val int32, emb fsl<float32,dim>   (the overlay update benchmark)
//   narrow: id int64, val int32
class GenReader final : public RecordBatchReader {
 public:
  GenReader(int64_t rows, int32_t dim, std::string shape) : rows_(rows), dim_(dim), shape_(std::move(shape)) {
    std::vector<FieldPtr> fields = {Field::Make("id", DataType::Int64())};
    if (shape_ == "scan") {
      fields.push_back(Field::Make("score", DataType::Float32()));
      fields.push_back(Field::Make("label", DataType::Utf8()));
    } else {
      fields.push_back(Field::Make("val", DataType::Int32()));
    }
    if (shape_ != "narrow") fields.push_back(Field::Make("emb", DataType::FixedSizeList(DataType::Float32(), dim)));
    schema_ = std::make_shared<Schema>(fields);
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (next_ >= rows_) return nullptr;
    // Batches of about 16 MB (65536 narrow rows), as a streaming source would hand them over:
    // the writer's memory, not the generator's, is what the memory benchmarks measure.
    const int64_t batch_rows = std::clamp<int64_t>((int64_t(16) << 20) / (16 + 4 * int64_t(dim_)), 1024, 65536);
    int64_t n = std::min<int64_t>(batch_rows, rows_ - next_);
    FixedWidthBuilder<int64_t> id(DataType::Int64());
    FixedWidthBuilder<float> score(DataType::Float32());
    FixedWidthBuilder<int32_t> val(DataType::Int32());
    BinaryBuilder label(DataType::Utf8());
    ListBuilder emb(DataType::FixedSizeList(DataType::Float32(), dim_));
    auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = next_; i < next_ + n; ++i) {
      id.Append(i);
      if (shape_ == "scan") {
        score.Append(u(rng_));
        label.Append(fmt::format("label-{}", rng_() % 1000));
      } else {
        val.Append(int32_t(rng_() % 1000));
      }
      if (shape_ != "narrow") {
        for (int32_t d = 0; d < dim_; ++d) items.Append(u(rng_));
        emb.Append();
      }
    }
    next_ += n;
    std::vector<ArrayPtr> columns = {id.Finish()};
    if (shape_ == "scan") {
      columns.push_back(score.Finish());
      columns.push_back(label.Finish());
    } else {
      columns.push_back(val.Finish());
    }
    if (shape_ != "narrow") columns.push_back(emb.Finish());
    return RecordBatch::Make(schema_, columns);
  }

 private:
  int64_t rows_, next_ = 0;
  int32_t dim_;
  std::string shape_;
  SchemaPtr schema_;
  std::mt19937_64 rng_{42};
};

std::vector<std::string> Columns(int argc, char** argv) {
  std::vector<std::string> out;
  std::string list = Arg(argc, argv, "--columns", "");
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<uint64_t> ReadOffsets(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open offsets file " + path);
  std::vector<uint64_t> out;
  for (uint64_t v; in >> v;) out.push_back(v);
  return out;
}

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
      GenReader reader(rows, dim, Arg(argc, argv, "--shape", "scan"));
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
        auto builder = ds->NewScan().BatchSize(65536);
        if (auto cols = Columns(argc, argv); !cols.empty()) builder.Columns(cols);
        auto reader = builder.Open();
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
    if (cmd == "take") {
      int repeat = std::stoi(Arg(argc, argv, "--repeat", "5"));
      const std::string offsets_file = Arg(argc, argv, "--offsets", "");
      int64_t count = std::stoll(Arg(argc, argv, "--count", "100"));
      auto ds = Dataset::Open(dir);
      uint64_t total = ds->CountRows();
      std::vector<uint64_t> fixed;
      if (!offsets_file.empty()) {
        fixed = ReadOffsets(offsets_file);
        count = int64_t(fixed.size());
      }
      const auto columns = Columns(argc, argv);
      const io::IoStats& io = table::StateOf(ds).store->stats();
      uint64_t first_bytes = 0, first_calls = 0, warm_bytes = 0, warm_calls = 0;
      std::mt19937_64 rng(7);
      std::vector<double> seconds;
      for (int r = 0; r < repeat + 1; ++r) {  // the first run opens the file and warms the page cache
        std::vector<uint64_t> rows = fixed;
        if (offsets_file.empty())
          for (int64_t i = 0; i < count; ++i) rows.push_back(rng() % total);
        const uint64_t bytes0 = io.bytes_read, calls0 = io.read_calls;
        auto start = std::chrono::steady_clock::now();
        auto batch = ds->Take(rows, columns);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (batch->num_rows() != count) throw std::runtime_error("take returned a wrong number of rows");
        const uint64_t bytes = io.bytes_read - bytes0, calls = io.read_calls - calls0;
        if (r == 0) {
          first_bytes = bytes;
          first_calls = calls;
        } else {
          seconds.push_back(s);
          warm_bytes = bytes;
          warm_calls = calls;
        }
      }
      std::sort(seconds.begin(), seconds.end());
      double median = seconds[seconds.size() / 2];
      std::cout << fmt::format(
          "{{\"rows\":{},\"median_s\":{:.5f},\"rows_per_s\":{:.0f},\"first_bytes_read\":{},\"first_read_calls\":{},"
          "\"bytes_read\":{},\"read_calls\":{},\"data_bytes\":{}}}\n",
          count, median, double(count) / median, first_bytes, first_calls, warm_bytes, warm_calls, bench::DataFileBytes(*ds));
      return 0;
    }
    if (cmd == "feed") {
      int repeat = std::stoi(Arg(argc, argv, "--repeat", "5"));
      const uint64_t at = std::stoull(Arg(argc, argv, "--at", "2"));
      auto ds = Dataset::Open(dir, at);
      const io::IoStats& io = table::StateOf(ds).store->stats();
      // One read, warm (the first run of each warms the page cache): rows, seconds, bytes.
      auto measure = [&](const std::function<std::unique_ptr<RecordBatchReader>()>& open) {
        std::vector<double> seconds;
        int64_t rows = 0;
        uint64_t bytes = 0;
        for (int r = 0; r < repeat + 1; ++r) {
          const uint64_t bytes0 = io.bytes_read;
          auto start = std::chrono::steady_clock::now();
          auto reader = open();
          rows = 0;
          while (auto b = reader->Next()) rows += b->num_rows();
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          bytes = io.bytes_read - bytes0;
          if (r > 0) seconds.push_back(s);
        }
        std::sort(seconds.begin(), seconds.end());
        return std::make_tuple(rows, seconds[seconds.size() / 2], bytes);
      };
      ChangesOptions options;
      options.to_version = at;
      auto [feed_rows, feed_s, feed_bytes] = measure([&] { return ds->Changes(at - 1, options); });
      auto [scan_rows, scan_s, scan_bytes] = measure([&] { return ds->NewScan().BatchSize(65536).Open(); });
      std::cout << fmt::format(
          "{{\"feed_rows\":{},\"feed_s\":{:.4f},\"feed_bytes\":{},\"scan_rows\":{},\"scan_s\":{:.4f},"
          "\"scan_bytes\":{},\"time_ratio\":{:.4f},\"bytes_ratio\":{:.4f}}}\n",
          feed_rows, feed_s, feed_bytes, scan_rows, scan_s, scan_bytes, feed_s / scan_s,
          double(feed_bytes) / double(scan_bytes));
      return 0;
    }
    if (cmd == "update") {
      std::string set = Arg(argc, argv, "--set", "");
      std::string where = Arg(argc, argv, "--where", "");
      size_t eq = set.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--set needs 'column = expression'");
      std::string column = set.substr(0, eq);
      column.erase(column.find_last_not_of(' ') + 1);
      auto ds = Dataset::Open(dir);
      auto start = std::chrono::steady_clock::now();
      // The overlay UPDATE benchmark measures overlays, whatever the cost model would pick.
      auto next = ds->Update({{column, set.substr(eq + 1)}}, where, nullptr, UpdateMode::kOverlay);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cout << fmt::format("{{\"version\":{},\"seconds\":{:.4f}}}\n", next->version(), s);
      return 0;
    }
    std::cerr << "unknown command " << cmd << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "scan_tool: " << e.what() << "\n";
    return 1;
  }
}
