// range([start,] stop [, step]) and generate_series(...) as DuckDB has them: the int64s
// from start (0 by default) by step (1 by default) up to stop, which range leaves out
// and generate_series includes, as one column named after the function.
#include <fmt/format.h>

#include "lancelet/builder.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

constexpr int64_t kBatchRows = 64 * 1024;

class SeriesReader final : public RecordBatchReader {
 public:
  SeriesReader(SchemaPtr schema, int64_t start, int64_t step, __int128 count)
      : schema_(std::move(schema)), next_(start), step_(step), left_(count) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (left_ <= 0) return nullptr;
    const int64_t rows = int64_t(std::min<__int128>(left_, kBatchRows));
    FixedWidthBuilder<int64_t> values(DataType::Int64());
    for (int64_t i = 0; i < rows; ++i, next_ += step_) values.Append(int64_t(next_));
    left_ -= rows;
    return std::make_shared<RecordBatch>(schema_, std::vector<ArrayPtr>{values.Finish()}, rows);
  }

 private:
  SchemaPtr schema_;
  __int128 next_;  // wider than int64: the value after the last may not fit
  int64_t step_;
  __int128 left_;
};

}  // namespace

std::unique_ptr<RecordBatchReader> OpenSeries(const Context& ctx, const TableRef& ref) {
  std::vector<int64_t> args;
  for (const auto& e : ref.series_args) {
    Scalar v;
    try {
      v = EvaluateConstant(*e, DataType::Int64());
    } catch (const Error& error) {
      ctx.Fail(e->position, fmt::format("{}() takes integers: {}", ref.name, error.what()));
    }
    if (v.is_null()) ctx.Fail(e->position, fmt::format("{}() takes integers, not NULL", ref.name));
    args.push_back(v.as_int());
  }
  const int64_t start = args.size() > 1 ? args[0] : 0;
  const int64_t stop = args.size() > 1 ? args[1] : args[0];
  const int64_t step = args.size() > 2 ? args[2] : 1;
  if (step == 0) ctx.Fail(ref.series_args[2]->position, fmt::format("{}()'s step must not be 0", ref.name));
  // The count of start + k step on the near side of stop (or reaching it, for generate_series).
  const bool inclusive = ref.name == "generate_series";
  const __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
  const __int128 stride = step > 0 ? __int128(step) : -__int128(step);
  __int128 count = 0;
  if (span > 0 || (inclusive && span == 0)) count = inclusive ? span / stride + 1 : (span + stride - 1) / stride;
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make(ref.name, DataType::Int64())});
  return std::make_unique<SeriesReader>(std::move(schema), start, step, count);
}

}  // namespace lancelet::sql
