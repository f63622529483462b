// Temporary Arrow IPC files for operators that outgrow their memory budget (sort runs,
// aggregation partitions), in io's scratch files: nothing outlives the process.
#pragma once

#include <memory>
#include <string>

#include "io/scratch_file.h"
#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"

namespace lancelet::sql {

// Operators past their budget split their rows by a hash of the key into partitions,
// each handled in turn and split again when still too large.
constexpr size_t kSpillPartitions = 16;
// Past this depth a partition is held whatever its size: its keys have been split 16^3
// ways already, so what is left is many rows of few keys.
constexpr int kMaxSpillDepth = 3;
// The partition of a key's hash at a depth: the top bits of the hash under a multiplier
// of that depth, so that a partition's keys spread again one level down.
size_t SpillPartitionOf(uint64_t hash, int depth);

class SpillFile {
 public:
  // A new file in TMPDIR (else /tmp) holding `schema`; `what` names it in errors.
  SpillFile(const Schema& schema, std::string what);

  void Write(const RecordBatch& batch);
  // Ends the stream and maps it: batches come back in the order written, a batch in memory
  // at a time. The reader keeps the file alive; the SpillFile may go first.
  std::unique_ptr<RecordBatchReader> Read();

 private:
  io::ScratchFile file_;
  std::unique_ptr<IpcStreamWriter> writer_;
};

}  // namespace lancelet::sql
