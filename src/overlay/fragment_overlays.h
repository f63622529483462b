// A fragment's data overlay files, decoded once and shared: which (offset, field) cells
// each overlay covers, in precedence order.
//
// Invariants after Load:
// - overlays() is ordered oldest to newest, as DataFragment.overlays stores them: every
//   committed_version lies in [1, the manifest's version] and none is below the one
//   before it (a commit stamps its version and appends), so among equal versions a later
//   position is newer. An overlay lists at least one field, and no field id but the
//   tombstone twice.
// - a coverage bitmap is parsed at most once, when a read first needs it (a scan of one
//   column pays for that column's bitmaps only); dense overlays share one bitmap between
//   their fields. A bitmap that does not parse, or covers an offset past the fragment's
//   rows, is refused then, with the overlay and field named.
// - a field id of -2 (tombstone) covers nothing.
// Which overlay wins a cell is resolution's business (overlay/resolution.h), decided
// per field when a read first needs that field.
#pragma once

#include <cstdint>
#include <functional>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "format/roaring_bitmap.h"
#include "table.pb.h"

namespace lancelet::overlay {

inline constexpr int32_t kTombstoneFieldId = -2;

struct Overlay {
  const lance::table::DataOverlayFile* proto = nullptr;
  uint64_t committed_version = 0;
  int position = 0;  // index in DataFragment.overlays
  bool dense = false;
  std::vector<int32_t> field_ids;  // data_file.fields

  // The coverage of field_ids[i], parsed on first use (thread-safe). Throws Corrupt for a
  // bitmap that does not parse or covers an offset past the fragment's rows.
  const std::shared_ptr<const format::RoaringBitmap>& Coverage(size_t i) const;
  // The coverage of `field_id`, or null when this overlay does not cover it.
  const format::RoaringBitmap* CoverageOf(int32_t field_id) const;
  // Index of `field_id` among field_ids, or -1.
  int FieldIndex(int32_t field_id) const;
  // The union of the coverage of every field id `pick` accepts.
  format::RoaringBitmap CoverageWhere(const std::function<bool(int32_t)>& pick) const;

 private:
  friend class FragmentOverlays;
  // Set once, under the fragment's mutex (std::call_once is not used: with libstdc++ a
  // call after one that threw hangs, and a corrupt bitmap throws on every try).
  struct Slot {
    std::atomic<bool> parsed{false};
    std::shared_ptr<const format::RoaringBitmap> bitmap;
  };
  std::unique_ptr<Slot[]> slots_;         // one per field, or one a dense overlay's fields share
  const std::string* context_ = nullptr;  // names the dataset and fragment in errors
  std::mutex* parse_mutex_ = nullptr;
  uint64_t physical_rows_ = 0;
};

class FragmentOverlays {
 public:
  // Validates and decodes `fragment.overlays()`, of the manifest of `version`. `context`
  // names the dataset and fragment in errors. Throws Corrupt for a missing data file or
  // coverage, a bitmap count that differs from the field count, a committed_version out
  // of order or outside [1, version], no field, or a field listed twice.
  static std::shared_ptr<const FragmentOverlays> Load(const lance::table::DataFragment& fragment, uint64_t version,
                                                      const std::string& context);

  const std::vector<Overlay>& overlays() const { return overlays_; }  // oldest first
  bool empty() const { return overlays_.empty(); }
  // Bytes the bitmaps hold once parsed, about their serialized size (for cache accounting).
  uint64_t MemoryBytes() const;
  // True when any overlay covers `field_id` at all.
  bool Covers(int32_t field_id) const;

 private:
  std::string context_;
  std::mutex parse_mutex_;
  std::vector<Overlay> overlays_;
};

// Checks that `overlays` is stored newest-last; throws InvalidArgument
// "overlay files must be stored newest-last, but committed_version X precedes Y".
void CheckNewestLast(const google::protobuf::RepeatedPtrField<lance::table::DataOverlayFile>& overlays);

}  // namespace lancelet::overlay
