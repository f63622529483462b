#include "array/shared_source.h"

namespace lancelet {

bool MappedPieces::NextPiece(SharedPiece& piece) {
  if (!source_.NextPiece(piece)) return false;
  size_t kept = 0;
  for (size_t b = 0; b < piece.batches.size(); ++b) {
    RecordBatchPtr out = map_(piece.batches[b]);
    piece.batches[b] = nullptr;  // the input goes as soon as it is mapped
    if (!out || out->num_rows() == 0) continue;
    piece.positions[kept] = piece.positions[b];
    piece.batches[kept++] = std::move(out);
  }
  piece.positions.resize(kept);
  piece.batches.resize(kept);
  return true;
}

}  // namespace lancelet
