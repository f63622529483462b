// Turns a stream of batches into new fragments: one data file per fragment, a new file
// every max_rows_per_file rows. Fragment ids are assigned at commit, not here. Each file
// is recorded in the attempt's AttemptFiles before it is written.
#pragma once

#include <memory>
#include <vector>

#include "format/lance_file.h"
#include "format/lance_schema.h"
#include "io/object_store.h"
#include "lancelet/record_batch.h"
#include "table/attempt_files.h"
#include "table.pb.h"

namespace lancelet::table {

class FragmentWriter {
 public:
  FragmentWriter(io::ObjectStore& store, AttemptFiles& files, std::string uri, format::LanceSchema schema,
                 format::FileVersion version, int64_t max_rows_per_file);
  ~FragmentWriter();

  // The batch's columns must match the schema by name and type (order may differ).
  void Write(const RecordBatch& batch);
  // Finishes the open file. The fragments have id 0 until the commit numbers them.
  std::vector<lance::table::DataFragment> Finish();

 private:
  void CloseFile();

  io::ObjectStore& store_;
  AttemptFiles& files_;
  std::string uri_;
  format::LanceSchema schema_;
  SchemaPtr arrow_schema_;
  format::FileVersion version_;
  int64_t max_rows_per_file_;
  std::unique_ptr<format::LanceFileWriter> file_;
  std::string file_name_;
  int64_t rows_in_file_ = 0;
  std::vector<lance::table::DataFragment> fragments_;
};

// Reorders/validates a batch against the dataset schema; throws InvalidArgument naming
// the first missing, extra or mistyped column.
RecordBatchPtr ConformBatch(const RecordBatch& batch, const SchemaPtr& schema);

// A fresh data file name: "<random>.lance".
std::string NewDataFileName();

// The DataFile entry of a finished file `name` (under data/) of `size` bytes that
// `writer` wrote: its field ids, column indices and format version.
lance::table::DataFile DescribeDataFile(const std::string& name, const format::LanceFileWriter& writer,
                                        format::FileVersion version, uint64_t size);

}  // namespace lancelet::table
