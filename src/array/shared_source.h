// A source of batches that several threads read at once, each on its own thread: the
// shape of DuckDB's pipelines (morsel-driven parallelism). A consumer that splits its work
// over threads (GROUP BY's parts) has each thread claim the next piece of the source,
// decode it and consume it, with no thread handing batches to another.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lancelet/record_batch.h"

namespace lancelet {

// Batches of a piece, each with its position: positions increase in the source's order
// (a reader's Next() would give the batches by increasing position), so a consumer that
// needs that order (first appearance of a group) recovers it.
struct SharedPiece {
  uint64_t first_position = 0;  // at or below its batches' positions; set before it is read
  std::vector<uint64_t> positions;
  std::vector<RecordBatchPtr> batches;
};

class SharedSource {
 public:
  virtual ~SharedSource() = default;
  // Thread-safe. Claims the next piece and reads it on the calling thread into `piece`
  // (which may be left without batches: its rows were all filtered out); false, with
  // `piece` left empty, when none is left. An error is thrown to the thread that claimed the piece, after
  // piece.first_position was set.
  virtual bool NextPiece(SharedPiece& piece) = 0;
};

// A RecordBatchReader that can be read as a SharedSource.
class ShareableReader {
 public:
  virtual ~ShareableReader() = default;
  // The source to read instead of Next(), or null when the reader is not worth sharing or
  // was read already. Once it returned a source the reader is read only through that.
  virtual SharedSource* Shared() = 0;
};

// The pieces of `source` with map(batch) in place of each batch, computed on the thread
// that read the piece; null or empty results are dropped. For readers that transform
// their input batch by batch (a rename, a join's probe) and so may share its pieces.
class MappedPieces final : public SharedSource {
 public:
  using Map = std::function<RecordBatchPtr(const RecordBatchPtr&)>;
  MappedPieces(SharedSource& source, Map map) : source_(source), map_(std::move(map)) {}
  bool NextPiece(SharedPiece& piece) override;

 private:
  SharedSource& source_;
  Map map_;
};

// `reader` as a SharedSource (see ShareableReader::Shared), or null.
inline SharedSource* SharedSourceOf(RecordBatchReader& reader) {
  auto* shareable = dynamic_cast<ShareableReader*>(&reader);
  return shareable ? shareable->Shared() : nullptr;
}

}  // namespace lancelet
