// COPY ... TO: a query's rows written to a file of any store, as CSV, JSON lines or an
// Arrow IPC stream. The file appears whole or not at all (the store publishes it on
// Finish), so a failed COPY leaves no partial file behind.
#include <fmt/format.h>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/text.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

// Counts the rows its input passes on.
class CountingReader final : public RecordBatchReader {
 public:
  explicit CountingReader(RecordBatchReader& input) : input_(input) {}
  SchemaPtr schema() const override { return input_.schema(); }
  RecordBatchPtr Next() override {
    RecordBatchPtr batch = input_.Next();
    if (batch) rows_ += uint64_t(batch->num_rows());
    return batch;
  }
  uint64_t rows() const { return rows_; }

 private:
  RecordBatchReader& input_;
  uint64_t rows_ = 0;
};

void WriteRows(const CopyStmt& stmt, RecordBatchReader& rows, std::ostream& out) {
  if (stmt.format == "arrow") {
    IpcStreamWriter writer(out);
    writer.WriteSchema(*rows.schema());
    while (auto batch = rows.Next()) writer.WriteBatch(*batch);
    writer.Close();
    return;
  }
  std::unique_ptr<BatchWriter> writer;
  if (stmt.format == "json") {
    writer = MakeJsonLinesWriter(out, rows.schema());
  } else {
    CsvWriteOptions csv;
    csv.delimiter = stmt.delimiter;
    csv.header = stmt.header;
    writer = MakeCsvWriter(out, rows.schema(), csv);
  }
  WriteAll(rows, *writer);
}

}  // namespace

std::string RunCopy(const Context& ctx, const CopyStmt& stmt) {
  std::unique_ptr<RecordBatchReader> rows = OpenSelect(ctx, *stmt.query);
  auto [store, path] = io::OpenStore(stmt.path, ctx.storage_options);
  std::unique_ptr<io::WritableFile> file;
  try {
    file = store->OpenWrite(path, /*no_overwrite=*/false);
  } catch (const Error& e) {
    ctx.Fail(stmt.path_position, fmt::format("cannot write '{}': {}", stmt.path, e.what()));
  }
  io::ObjectOutputStream out(std::move(file));
  CountingReader counted(*rows);
  WriteRows(stmt, counted, out);
  out.Finish();
  return fmt::format("COPY {}", RowCount(counted.rows()));
}

}  // namespace lancelet::sql
