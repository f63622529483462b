// Fuzz target: deletion files and row id sequences. The first byte picks what the rest
// is: 0 an Arrow-array deletion file (.arrow), 1 a Roaring bitmap deletion file (.bin),
// 2 a serialized RowIdSequence, 3 a version sequence.
// Build with -DLANCELET_FUZZ=ON (clang, libFuzzer); tests/fuzz runs it briefly.
#include "format/deletion_file.h"
#include "format/row_id_sequence.h"
#include "fuzz_support.h"

namespace lancelet::fuzz {
inline int FuzzDeletionFile(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
      case 1: {
        auto type = data[0] % 4 == 0 ? format::DeletionFileType::kArrowArray : format::DeletionFileType::kBitmap;
        auto deletions = format::DeletionVector::Decode(bytes, type, uint64_t{1} << 32, "fuzz deletion file");
        if (deletions.size() <= kMaxRowsRead) (void)deletions.ToVector();
        break;
      }
      case 2: {
        auto ids = format::RowIdSequence::Decode(bytes, "fuzz row ids");
        if (ids.size() <= kMaxRowsRead) (void)ids.ToVector();
        break;
      }
      default:
        (void)format::VersionSequence::Decode(bytes, "fuzz versions");
    }
  } catch (const Error&) {
  }
  return 0;
}
}  // namespace lancelet::fuzz

#ifndef LANCELET_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lancelet::fuzz::FuzzDeletionFile(data, size);
}
#endif
