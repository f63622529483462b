// Temporary Arrow IPC files for operators that outgrow their memory budget (sort runs,
// aggregation partitions). The file is unlinked as soon as it is made, so nothing outlives
// the process, whatever way it ends; it lives while its descriptor or its mapping does.
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"

namespace lancelet::sql {

class SpillFile {
 public:
  // A new file in TMPDIR (else /tmp) holding `schema`; `what` names it in errors.
  SpillFile(const Schema& schema, std::string what);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  void Write(const RecordBatch& batch);
  // Ends the stream and maps it: batches come back in the order written, a batch in memory
  // at a time. The reader keeps the file alive; the SpillFile may go first.
  std::unique_ptr<RecordBatchReader> Read();

 private:
  class Output;
  int fd_ = -1;
  std::string what_;
  std::unique_ptr<Output> buffer_;
  std::unique_ptr<std::ostream> out_;
  std::unique_ptr<IpcStreamWriter> writer_;
};

}  // namespace lancelet::sql
