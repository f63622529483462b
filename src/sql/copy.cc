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

// Writes every row in the statement's format; returns how many.
uint64_t WriteRows(const CopyStmt& stmt, RecordBatchReader& rows, std::ostream& out) {
  uint64_t count = 0;
  if (stmt.format == "arrow") {
    IpcStreamWriter writer(out);
    writer.WriteSchema(*rows.schema());
    for (RecordBatchPtr batch; (batch = rows.Next()); count += uint64_t(batch->num_rows())) writer.WriteBatch(*batch);
    writer.Close();
    return count;
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
  for (RecordBatchPtr batch; (batch = rows.Next()); count += uint64_t(batch->num_rows())) writer->Write(*batch);
  writer->Finish();
  return count;
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
  const uint64_t count = WriteRows(stmt, *rows, out);
  out.Finish();
  return fmt::format("COPY {}", RowCount(count));
}

}  // namespace lancelet::sql
