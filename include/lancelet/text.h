// Text interchange: reading CSV / JSON Lines into record batches, and writing record
// batches as JSON Lines, CSV or an aligned table.
//
// Text spellings of values (shared by every reader and writer):
//   bool            true / false (CSV input also accepts 1 / 0, any letter case)
//   integers        decimal, exact at every width (JSON never goes through double)
//   float16/32/64   shortest decimal that round-trips at the column's width; -0.0 is "-0";
//                   NaN / Infinity / -Infinity (JSON: as strings; CSV: bare words).
//                   Readers also accept nan, inf, infinity in any letter case.
//   utf8            JSON string (invalid UTF-8 bytes are written as U+FFFD); CSV raw text
//   binary kinds    standard base64 with padding (RFC 4648, "+/")
//   date32          YYYY-MM-DD
//   date64          YYYY-MM-DDTHH:MM:SS.mmm (readers also accept a bare date)
//   timestamp       YYYY-MM-DDTHH:MM:SS plus 0/3/6/9 fraction digits for s/ms/us/ns, and "Z"
//                   when the type has a time zone. Readers accept "T" or " " between date
//                   and time, an optional fraction, and an optional Z / +HH:MM / -HH:MM
//                   offset (converted to UTC).
//                   JSON input also takes an integer: the raw count in the type's unit
//                   (days for date32, milliseconds for date64).
//   list, struct    JSON arrays / objects (in a CSV cell: compact JSON text, always quoted);
//                   struct keys missing from a JSON object are NULL, extra keys are ignored
//   NULL            JSON null; an empty unquoted CSV cell; "NULL" in the table format
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "lancelet/progress.h"
#include "lancelet/record_batch.h"
#include "lancelet/storage_options.h"

namespace lancelet {

// ---------------------------------------------------------------------------------------
// Readers

enum class InputFormat { kCsv, kJsonLines, kArrowIpc, kUnknown };

struct TextReadOptions {
  // The schema to parse into (a dataset's, to read input against it). Null: inferred from
  // the first `infer_rows` rows. CSV: every schema field must appear in the header (any
  // order) and every header column must be in the schema; without a header the fields
  // are the columns in order. JSON Lines: keys not in the schema are ignored. Arrow IPC:
  // columns are matched by name and assigned (ConformInput).
  SchemaPtr schema = nullptr;
  // Without `schema`: the columns named here take these types, the others are inferred
  // (a MERGE source read against the target columns it meets).
  SchemaPtr column_types = nullptr;
  int64_t batch_rows = 65536;  // rows per batch at most
  int64_t infer_rows = 1000;   // rows looked at for inference
  char delimiter = ',';        // CSV only
  bool header = true;          // CSV only; false: columns are column0, column1, ... or the schema's
  // The input's format; kUnknown: by the path's extension (DetectInputFormat).
  InputFormat format = InputFormat::kUnknown;
  // For the store the path names (a local path, file:// or memory://), as a dataset's.
  StorageOptions storage_options = {};
  // CSV and JSON lines: when set, shows the share of the file's bytes read so far (where
  // the store knows its size); it must outlive the reader.
  ProgressLine* progress = nullptr;
};

// Schema inference looks at the non-null values of each column in the first rows; when
// they do not all fit one rule below, the column is utf8 (also when all are NULL). CSV
// and JSON follow the same rules: a CSV cell counts as the JSON value it spells (blanks
// around it ignored; true / false in any case; numbers incl. nan / inf; "[...]" arrays),
// anything else as a string, and an empty cell (quoted or not) is NULL and decides nothing.
//   integers -> int64 (uint64 if some exceed int64 and none is negative, else float64);
//   numbers with a fraction or exponent among them -> float64 (so do the strings NaN,
//   Infinity, -Infinity); booleans -> bool (1 / 0 are integers);
//   strings: all YYYY-MM-DD -> date32; all ISO date-times -> timestamp<us>, or
//   timestamp<us,UTC> if any has an offset; else utf8;
//   JSON objects -> struct of their keys in first-seen order.
//   Arrays -> list<item rule applied to all items>, except that arrays all of the same
//   length N > 0 holding only numbers, at least one of them not an integer, become
//   fixed_size_list<float32,N> (embeddings). Integer-only arrays stay list<int64>.
// JSON values of another kind read into a utf8 column are kept as their compact JSON text.
// A value that does not fit the schema stops the read with one line naming the file, the
// row (1-based line), the column and the type:
//   "rows.jsonl: row 3, column 'a': 3000000000 does not fit int32"
//   "rows.csv: row 2, column 'd': expected date32, found \"soon\""
// Reading against a schema also converts: integers range-checked to any integer width,
// integral floats to integers, strings to dates and timestamps, arrays to fixed-size lists.
// CSV blank lines are skipped, except in a single-column file, where they are NULLs.
std::unique_ptr<RecordBatchReader> OpenCsv(const std::string& path,
                                           const TextReadOptions& options = {});
std::unique_ptr<RecordBatchReader> OpenJsonLines(const std::string& path,
                                                 const TextReadOptions& options = {});

// The same over an open stream; `name` stands for the file in error messages.
std::unique_ptr<RecordBatchReader> ReadCsv(std::unique_ptr<std::istream> input, std::string name,
                                           const TextReadOptions& options = {});
std::unique_ptr<RecordBatchReader> ReadJsonLines(std::unique_ptr<std::istream> input,
                                                 std::string name,
                                                 const TextReadOptions& options = {});

// By extension (case-insensitive): .csv; .json/.jsonl/.ndjson (all read as JSON Lines, so a
// .json file holding one top-level array is rejected); .arrow/.arrows/.ipc.
InputFormat DetectInputFormat(const std::string& path);


// Reads `input` as `schema`: columns by name (all of the schema's must be there, no
// others), each assigned to its field's type with exact conversions only (CanAssign in
// expr/cast.h); the first value that does not fit stops it with
// "<name>: row <n>, column '<c>': cannot assign ...", n counting records from 1.
// Returns `input` itself when its schema already equals `schema`.
std::unique_ptr<RecordBatchReader> ConformInput(std::unique_ptr<RecordBatchReader> input, SchemaPtr schema,
                                                std::string name);

// Picks the reader by options.format, else by extension; unknown extensions throw
// InvalidArgument. With
// options.schema, every format is read against it (Arrow IPC through ConformInput).
std::unique_ptr<RecordBatchReader> OpenTextInput(const std::string& path,
                                                 const TextReadOptions& options = {});

// ---------------------------------------------------------------------------------------
// Writers

enum class ValueStyle {
  kJson,   // JSON text: strings quoted and escaped, NULL as null
  kCsv,    // a CSV cell before quoting: strings raw, nested as compact JSON, NULL as ""
  kTable,  // for people: NULL, long strings and lists shortened, nested as {a: 1, b: "x"}
};

// The text of element `row` of `array` in the given style.
std::string FormatValue(const ArrayData& array, int64_t row, ValueStyle style);

class BatchWriter {
 public:
  virtual ~BatchWriter() = default;
  virtual void Write(const RecordBatch& batch) = 0;
  // Flushes anything buffered (the table writer's rows and row count). Call once.
  virtual void Finish() = 0;
};

// One JSON object per row, keys in schema order, "\n" after every row.
std::unique_ptr<BatchWriter> MakeJsonLinesWriter(std::ostream& out, SchemaPtr schema);

struct CsvWriteOptions {
  char delimiter = ',';
  bool header = true;
};
// RFC 4180: a cell is quoted when it holds the delimiter, a quote, CR or LF, when it is
// an empty string (to tell it from NULL) or a nested value. Rows end with "\n".
std::unique_ptr<BatchWriter> MakeCsvWriter(std::ostream& out, SchemaPtr schema,
                                           CsvWriteOptions options = {});

struct TableWriteOptions {
  // Rows buffered to size the columns; later rows reuse those widths (wider values just
  // push the row out of line).
  int64_t buffer_rows = 1000;
  // > 0: at most this many rows are shown, the first half and the last half with a row
  // of "…" between, the columns sized over them; the last line says "(N rows, M shown)".
  int64_t max_rows = 0;
  // Framed in box-drawing lines (the shell's `.mode box`), every column padded.
  bool box = false;
};
// Columns separated by " | ", header underlined with "-" joined by "-+-", numbers right
// aligned, and a last line "(N rows)" ("(1 row)" for one).
std::unique_ptr<BatchWriter> MakeTableWriter(std::ostream& out, SchemaPtr schema,
                                             TableWriteOptions options = {});

// The shell's `.mode markdown`: a pipe table, values as the table writer shows them ('|'
// escaped). `.mode line`: each row as "name = value" lines, names right aligned, rows
// separated by a blank line.
std::unique_ptr<BatchWriter> MakeMarkdownWriter(std::ostream& out, SchemaPtr schema);
std::unique_ptr<BatchWriter> MakeLineWriter(std::ostream& out, SchemaPtr schema);

enum class OutputFormat { kJsonLines, kCsv, kTable };
std::unique_ptr<BatchWriter> MakeBatchWriter(OutputFormat format, std::ostream& out,
                                             SchemaPtr schema);

// Writes every batch of `reader`, then calls Finish.
void WriteAll(RecordBatchReader& reader, BatchWriter& writer);

}  // namespace lancelet
