// The one place where a fragment's pieces meet: base data files, deletions, row ids (and,
// with the overlay issue, overlays). Scan and take both read through it.
//
// Offsets here are physical: 0 .. physical_rows-1, deleted rows included.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "format/lance_file.h"
#include "format/roaring_bitmap.h"
#include "overlay/fragment_overlays.h"
#include "overlay/resolution.h"
#include "table/dataset_state.h"

namespace lancelet::table {

class FragmentReader {
 public:
  FragmentReader(const DatasetState& state, const lance::table::DataFragment& fragment);
  ~FragmentReader();

  uint64_t fragment_id() const { return fragment_.id(); }
  uint64_t physical_rows() const { return fragment_.physical_rows(); }
  uint64_t num_deleted() const;
  // Deleted physical offsets (loaded on first use, then cached).
  const format::RoaringBitmap& deletions() const;

  // Values of top-level schema fields (indices into the dataset schema) over a range
  // of physical rows. A field no data file holds reads as NULL.
  std::vector<ArrayPtr> ReadRange(const std::vector<size_t>& fields, uint64_t start, uint64_t count) const;
  // The same at arbitrary physical offsets (any order), reading only the overlay values
  // these offsets need.
  std::vector<ArrayPtr> Take(const std::vector<size_t>& fields, std::span<const uint64_t> offsets) const;
  // The same for a scan (the rows of a batch that survive deletions or a filter): a scan
  // visits the whole fragment, so small overlays come from the resolved column, as in
  // ReadRange, instead of a read of each overlay file per batch.
  std::vector<ArrayPtr> ReadRows(const std::vector<size_t>& fields, std::span<const uint64_t> offsets) const;

  // The fragment's overlays (decoded on first use).
  const overlay::FragmentOverlays& overlays() const;

  // Row addresses: (fragment id << 32) | offset.
  ArrayPtr RowAddresses(std::span<const uint64_t> offsets) const;
  // Stable row ids when the dataset has them, else row addresses.
  ArrayPtr RowIds(std::span<const uint64_t> offsets) const;

 private:
  struct FieldSource {
    const format::LanceFileReader* file = nullptr;  // null: no file holds the field
    size_t field_index = 0;                          // within the file's schema
  };
  FieldSource Locate(size_t field) const;
  const format::LanceFileReader& OpenFile(size_t data_file) const;
  const format::LanceFileReader& OpenOverlayFile(size_t overlay) const;
  // The column of `field_id` in overlay `overlay`'s data file.
  size_t OverlayColumn(size_t overlay, int32_t field_id) const;
  // Base values with the newest overlay value of every covered cell swapped in, reading
  // only the ranks the patches name.
  ArrayPtr ApplyOverlays(size_t field, ArrayPtr base, const std::vector<overlay::OverlayPatch>& patches) const;
  // For a range read: all of the field's overlay cells, merged (none when no overlay
  // covers the field), when the overlay files supplying them total at most
  // kWholeOverlayBytes: a scan walks the fragment in order and will need every value
  // they hold, so reading each column whole, once, is cheapest. Otherwise null (the
  // bound keeps memory and a short scan's reads small), and each batch reads just its
  // ranks.
  const overlay::ResolvedColumn* ResolvedColumnOf(size_t field) const;
  // Take and ReadRows; `in_scan` allows the resolved column.
  std::vector<ArrayPtr> ReadOffsets(const std::vector<size_t>& fields, std::span<const uint64_t> offsets,
                                    bool in_scan) const;
  // What ResolvedColumnOf caches: the merged column, an empty one, or null.
  std::shared_ptr<const overlay::ResolvedColumn> ResolveColumn(size_t field) const;
  static constexpr uint64_t kWholeOverlayBytes = 4 << 20;

  const DatasetState& state_;
  const lance::table::DataFragment& fragment_;
  mutable std::map<size_t, std::shared_ptr<const format::LanceFileReader>> files_;
  mutable std::unique_ptr<format::RoaringBitmap> deletions_;
  mutable std::unique_ptr<std::vector<uint64_t>> row_ids_;
  mutable std::shared_ptr<const overlay::FragmentOverlays> overlays_;
  mutable std::map<size_t, std::shared_ptr<const format::LanceFileReader>> overlay_files_;
  // By field id, from the dataset's cache; null when the field's overlays are too large
  // to read whole.
  mutable std::map<int32_t, std::shared_ptr<const overlay::ResolvedColumn>> resolved_columns_;
};

}  // namespace lancelet::table
