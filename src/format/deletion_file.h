// Deletion files: the set of deleted row offsets of one fragment, stored beside the
// table as _deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}.
//
// Two encodings (DeletionFile.file_type in table.proto):
// - ARROW_ARRAY (.arrow): an Arrow IPC file with one record batch of one column
//   "row_id": UInt32, not nullable, no metadata. The reference writes the offsets in
//   hash-set order and ZSTD-tags the body; we write them ascending, uncompressed.
// - BITMAP (.bin): a Roaring bitmap in the portable serialization, array and bitmap
//   containers only (the reference never writes run containers).
// The reference starts out with a hash set and switches to a bitmap once it holds more
// than 5000 offsets, or when a single batch of >= 5000 offsets arrives at once; we
// write BITMAP for >= 5000 offsets (see ChooseDeletionFileType).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "format/roaring_bitmap.h"

namespace lancelet::io {
class ObjectStore;
}

namespace lancelet::format {

// Values match DeletionFile.DeletionFileType in table.proto.
enum class DeletionFileType : uint8_t { kArrowArray = 0, kBitmap = 1 };

// Offsets at which the reference stores a bitmap instead of an Arrow array.
inline constexpr uint64_t kDeletionBitmapThreshold = 5000;

// "arrow" or "bin".
std::string_view DeletionFileSuffix(DeletionFileType type);
// "{fragment_id}-{read_version}-{id}.{suffix}": the file's name in _deletions/.
std::string DeletionFileName(uint64_t fragment_id, uint64_t read_version, uint64_t id, DeletionFileType type);
// "_deletions/" + DeletionFileName(...), relative to the table root.
std::string DeletionFilePath(uint64_t fragment_id, uint64_t read_version, uint64_t id,
                             DeletionFileType type);
// kBitmap when count >= kDeletionBitmapThreshold, else kArrowArray.
DeletionFileType ChooseDeletionFileType(uint64_t count);

// Deleted row offsets of one fragment.
class DeletionVector {
 public:
  struct Encoded {
    std::string bytes;
    DeletionFileType type;
  };

  DeletionVector() = default;
  explicit DeletionVector(RoaringBitmap offsets) : offsets_(std::move(offsets)) {}
  static DeletionVector FromOffsets(std::span<const uint32_t> offsets);

  const RoaringBitmap& offsets() const { return offsets_; }
  RoaringBitmap& mutable_offsets() { return offsets_; }
  uint64_t size() const { return offsets_.Cardinality(); }
  bool empty() const { return offsets_.IsEmpty(); }
  bool Contains(uint32_t offset) const { return offsets_.Contains(offset); }
  void Add(uint32_t offset) { offsets_.Add(offset); }
  std::vector<uint32_t> ToVector() const { return offsets_.ToVector(); }

  // Parses and checks the bytes of a deletion file of a fragment with `physical_rows`
  // rows. Invariants (else Corrupt, "{context}: ..."): every offset < physical_rows; an
  // Arrow file has no nulls and no offset twice. Order is not checked: the reference
  // writes its hash set's order.
  static DeletionVector Decode(std::string bytes, DeletionFileType type, uint64_t physical_rows,
                               std::string_view context);
  // Reads and checks the file at `path` (a store path: the table root joined with
  // DeletionFilePath). Corrupt errors start "deletion file '{path}' of fragment {id}".
  static DeletionVector Read(const io::ObjectStore& store, const std::string& path,
                             DeletionFileType type, uint64_t fragment_id, uint64_t physical_rows);

  // The file contents in the given encoding.
  std::string Encode(DeletionFileType type) const;
  // The file contents in the encoding the reference would choose for this many offsets.
  // Throws Invalid when empty: a fragment without deletions has no deletion file.
  Encoded Write() const;

  bool operator==(const DeletionVector& other) const { return offsets_ == other.offsets_; }

 private:
  RoaringBitmap offsets_;
};

}  // namespace lancelet::format
