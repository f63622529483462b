#include "sql/profile.h"

#include <cmath>

#include "lancelet/builder.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

class ProfiledReader final : public RecordBatchReader {
 public:
  ProfiledReader(std::shared_ptr<OperatorProfile> op, std::unique_ptr<RecordBatchReader> input)
      : op_(std::move(op)), input_(std::move(input)) {}
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    const auto start = std::chrono::steady_clock::now();
    RecordBatchPtr batch = input_->Next();
    op_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (batch) {
      op_->rows += batch->num_rows();
      ++op_->batches;
    }
    return batch;
  }

 private:
  std::shared_ptr<OperatorProfile> op_;
  std::unique_ptr<RecordBatchReader> input_;
};

}  // namespace

std::shared_ptr<OperatorProfile> Profile::Add(std::string name) {
  operators.push_back(std::make_shared<OperatorProfile>());
  operators.back()->name = std::move(name);
  return operators.back();
}

std::unique_ptr<RecordBatchReader> Profiled(const Context& ctx, const OperatorName& name,
                                            std::unique_ptr<RecordBatchReader> input) {
  if (!ctx.profile) return input;
  return Profiled(ctx.profile->Add(name()), std::move(input));
}

std::unique_ptr<RecordBatchReader> Profiled(std::shared_ptr<OperatorProfile> op,
                                            std::unique_ptr<RecordBatchReader> input) {
  if (!op) return input;
  return std::make_unique<ProfiledReader>(std::move(op), std::move(input));
}

ProfileTimer::ProfileTimer(const Context& ctx, const OperatorName& name) : start_(std::chrono::steady_clock::now()) {
  if (ctx.profile) op_ = ctx.profile->Add(name());
}

ProfileTimer::~ProfileTimer() {
  if (op_) op_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

RecordBatchPtr RunExplainAnalyze(const Context& ctx, const SelectStmt& stmt) {
  Context profiled = ctx;
  profiled.profile = std::make_shared<Profile>();
  const auto start = std::chrono::steady_clock::now();
  int64_t rows = 0;
  {
    auto reader = OpenSelect(profiled, stmt);
    while (auto batch = reader->Next()) rows += batch->num_rows();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> names = {"query"};
  FixedWidthBuilder<int64_t> row_counts(DataType::Int64());
  FixedWidthBuilder<double> times(DataType::Float64());
  auto microseconds = [](double s) { return std::round(s * 1e6) / 1e6; };
  row_counts.Append(rows);
  times.Append(microseconds(seconds));
  const auto& ops = profiled.profile->operators;
  for (auto op = ops.rbegin(); op != ops.rend(); ++op) {
    names.push_back("  " + (*op)->name);
    row_counts.Append((*op)->rows);
    times.Append(microseconds((*op)->seconds));
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("operator", DataType::Utf8()),
                                                               Field::Make("rows", DataType::Int64()),
                                                               Field::Make("seconds", DataType::Float64())});
  const auto n = int64_t(names.size());
  return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{Strings(names), row_counts.Finish(), times.Finish()},
                                       n);
}

}  // namespace lancelet::sql
