#include "sql/spill.h"

namespace lancelet::sql {

size_t SpillPartitionOf(uint64_t hash, int depth) {
  return size_t(((hash | 1) * (0x9E3779B97F4A7C15ull + 2 * uint64_t(depth))) >> 60) % kSpillPartitions;
}

SpillFile::SpillFile(const Schema& schema, std::string what) : file_(std::move(what)) {
  writer_ = std::make_unique<IpcStreamWriter>(file_.out());
  writer_->WriteSchema(schema);
}

void SpillFile::Write(const RecordBatch& batch) {
  writer_->WriteBatch(batch);
}

std::unique_ptr<RecordBatchReader> SpillFile::Read() {
  writer_->Close();
  io::MappedBytes mapped = file_.MapWritten();
  return ReadIpc(std::move(mapped.owner), mapped.bytes, file_.what(), std::move(mapped.release));
}

}  // namespace lancelet::sql
