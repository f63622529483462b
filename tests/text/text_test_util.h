// Helpers for the text tests: one-column batches from scalars, and writer output.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"
#include "lancelet/text.h"
#include "support/test_env.h"

namespace lancelet::text_test {

inline Scalar S(TypePtr type, Scalar::Payload value) { return Scalar{std::move(type), std::move(value)}; }
inline Scalar Null(TypePtr type) { return Scalar::Null(std::move(type)); }

// A batch with one column "v" of the given type and values (payloads; monostate = NULL).
inline RecordBatchPtr OneColumn(const TypePtr& type, const std::vector<Scalar::Payload>& values,
                                const std::string& name = "v") {
  std::vector<Scalar> scalars;
  for (const auto& v : values) scalars.push_back(Scalar{type, v});
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make(name, type)});
  return RecordBatch::Make(schema, {MakeArray(type, scalars)});
}

inline std::string Write(OutputFormat format, const RecordBatch& batch) {
  std::ostringstream out;
  auto writer = MakeBatchWriter(format, out, batch.schema());
  writer->Write(batch);
  writer->Finish();
  return out.str();
}

inline std::string Jsonl(const RecordBatch& batch) { return Write(OutputFormat::kJsonLines, batch); }
inline std::string Csv(const RecordBatch& batch) { return Write(OutputFormat::kCsv, batch); }
inline std::string Table(const RecordBatch& batch) { return Write(OutputFormat::kTable, batch); }

// Every batch of a reader concatenated into one, with the number of batches seen.
struct ReadResult {
  SchemaPtr schema;
  RecordBatchPtr batch;
  int batches = 0;
};
inline ReadResult ReadAll(RecordBatchReader& reader) {
  ReadResult result;
  result.schema = reader.schema();
  std::vector<RecordBatchPtr> batches;
  while (auto b = reader.Next()) batches.push_back(b);
  result.batches = static_cast<int>(batches.size());
  result.batch = RecordBatch::Concatenate(result.schema, batches);
  return result;
}

inline std::unique_ptr<std::istream> Input(const std::string& text) {
  return std::make_unique<std::istringstream>(text);
}

inline ReadResult ReadCsvText(const std::string& text, TextReadOptions options = {}) {
  auto reader = ReadCsv(Input(text), "in.csv", options);
  return ReadAll(*reader);
}
inline ReadResult ReadJsonText(const std::string& text, TextReadOptions options = {}) {
  auto reader = ReadJsonLines(Input(text), "in.jsonl", options);
  return ReadAll(*reader);
}

// The rows of `reader` (made at 2 threads) and the sum of its first column (int64), read
// with the thread count dropped to one after the first batch, as SQL's SET threads may do
// while a reader is open; the thread count is unset at the end.
inline std::pair<int64_t, int64_t> RowsAndSumWhileThreadsDrop(RecordBatchReader& reader) {
  int64_t rows = 0, sum = 0;
  for (RecordBatchPtr batch; (batch = reader.Next());) {
    SetReadAheadThreads(1);
    for (int64_t r = 0; r < batch->num_rows(); ++r) sum += std::get<int64_t>(GetScalar(*batch->column(0), r).value);
    rows += batch->num_rows();
  }
  SetReadAheadThreads(0);
  return {rows, sum};
}

// The message of the lancelet::Error `fn` throws, or "" if it does not throw.
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  std::optional<Error> error = testing::ThrownError(fn);
  return error ? error->what() : "";
}

}  // namespace lancelet::text_test
