// Choosing a writer by format, and draining a reader into one.
#include "lancelet/text.h"

namespace lancelet {

std::unique_ptr<BatchWriter> MakeBatchWriter(OutputFormat format, std::ostream& out,
                                             SchemaPtr schema) {
  switch (format) {
    case OutputFormat::kJsonLines: return MakeJsonLinesWriter(out, std::move(schema));
    case OutputFormat::kCsv: return MakeCsvWriter(out, std::move(schema));
    case OutputFormat::kTable: return MakeTableWriter(out, std::move(schema));
  }
  return MakeJsonLinesWriter(out, std::move(schema));
}

void WriteAll(RecordBatchReader& reader, BatchWriter& writer) {
  while (RecordBatchPtr batch = reader.Next()) writer.Write(*batch);
  writer.Finish();
}

}  // namespace lancelet
