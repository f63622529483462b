// The one place where a fragment's pieces meet: base data files, deletions, row ids (and,
// with the overlay issue, overlays). Scan and take both read through it.
//
// Offsets here are physical: 0 .. physical_rows-1, deleted rows included.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "format/lance_file.h"
#include "format/roaring_bitmap.h"
#include "overlay/fragment_overlays.h"
#include "overlay/resolution.h"
#include "table/dataset_state.h"

namespace lancelet::table {

// Fragments read at once from a store whose requests are costly (a take, an UPDATE's
// moved rows): each has its own FragmentReader, so their requests overlap.
inline constexpr int kConcurrentFragmentReads = 16;

class FragmentReader {
 public:
  FragmentReader(const DatasetState& state, const lance::table::DataFragment& fragment);
  ~FragmentReader();

  uint64_t fragment_id() const { return fragment_.id(); }
  uint64_t physical_rows() const { return fragment_.physical_rows(); }
  const lance::table::DataFragment& fragment() const { return fragment_; }
  uint64_t num_deleted() const;
  // Deleted physical offsets (loaded on first use, then cached).
  const format::RoaringBitmap& deletions() const;

  // Values of top-level schema fields (indices into the dataset schema) over a range
  // of physical rows. A field no data file holds reads as NULL.
  std::vector<ArrayPtr> ReadRange(const std::vector<size_t>& fields, uint64_t start, uint64_t count) const;
  // Says that ReadRange will be asked for the rows that follow each range, in order, to
  // the fragment's end (a scan without a limit): overlaid fields may then be read ahead.
  void ReadAhead() { read_ahead_ = true; }
  // Opens every data file and reads the deletion file now rather than at first use, and
  // prefetches the pages that hold rows [start, start + count) of `fields` (dataset field
  // indices) that no overlay covers, up to kPrefetchBytes per data file
  // (LanceFileReader::PrefetchFields): a scan opening fragments ahead on an object store
  // then fetches their first pages in the same round trips.
  void OpenAll(const std::vector<size_t>& fields, uint64_t start, uint64_t count) const;
  // The same for the first rows `rows` (ascending) of a filtered scan: rows that are few
  // (under kDenseTakeMinRows) or sparse (under 1 in kDenseTakeSpan) have only their
  // pages' small buffers prefetched (PrefetchPagesOf), not every buffer of the pages
  // around them.
  void OpenAll(const std::vector<size_t>& fields, std::span<const uint64_t> rows) const;
  // The 16 fragments a scan opens ahead (ScanPlan::Cursor::kOpenAhead) then fill at most
  // an eighth of an S3 store's read cache (64 MiB).
  static constexpr uint64_t kPrefetchBytes = 512 << 10;
  // A take of at most kPrefetchTakeRows rows from an object store first fetches, file by
  // file and in one go, the page buffers of at most kPrefetchPageBufferBytes that hold its
  // rows (LanceFileReader::PrefetchPagesOf): the fields' takes then start from them
  // together instead of each asking for its own. (Larger takes read most pages' buffers
  // anyway, and find them with PrefetchRows.)
  static constexpr size_t kPrefetchTakeRows = 1024;
  static constexpr uint64_t kPrefetchPageBufferBytes = 64 << 10;
  void PrefetchPagesOf(const std::vector<size_t>& fields, std::span<const uint64_t> rows) const;
  // The fetch of the bytes that hold rows [start, start + count) of `fields` that no
  // overlay covers (LanceFileReader::PrefetchRows; only a store with costly requests acts
  // on it), to call now or on another thread while this reader reads on: the call
  // touches only the data files, which serve threads concurrently.
  std::function<void()> RowsFetch(const std::vector<size_t>& fields, uint64_t start, uint64_t count) const;
  // Bytes per physical row that the pages of `fields` no overlay covers hold, on average
  // (LanceFileReader::StoredBytes); 0 when the files cannot tell.
  uint64_t StoredRowBytes(const std::vector<size_t>& fields) const;
  // The same at arbitrary physical offsets (any order), reading only the overlay values
  // these offsets need.
  std::vector<ArrayPtr> Take(const std::vector<size_t>& fields, std::span<const uint64_t> offsets) const;
  // The same for a scan (the rows of a batch that survive deletions or a filter): a scan
  // visits the whole fragment, so small overlays are read whole once, as in ReadRange,
  // instead of a read of each overlay file per batch.
  std::vector<ArrayPtr> ReadRows(const std::vector<size_t>& fields, std::span<const uint64_t> offsets) const;

  // The fragment's overlays (decoded on first use).
  const overlay::FragmentOverlays& overlays() const;

  // For index queries: the cells of the node at `path` that are stale for an index built
  // from `version` (table/index_staleness.h), with the values the overlays that changed
  // them hold for it. A cell changed by
  // several such overlays is listed once per overlay: the current value is among them.
  // Reads those overlays' value columns only, never the base.
  struct ChangedValues {
    std::vector<ArrayPtr> values;                 // per overlay read: the node's values...
    std::vector<std::vector<uint32_t>> offsets;   // ...at these offsets
    format::RoaringBitmap unreadable;  // changed cells whose new value is in no column lancelet reads
  };
  ChangedValues ChangedCells(const format::StructPath& path, uint64_t version) const;

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
  // The fields no overlay covers, as field indices of the data files holding them.
  std::map<const format::LanceFileReader*, std::vector<size_t>> PlainFieldsByFile(
      const std::vector<size_t>& fields) const;
  // Reads one field of a data file: ReadField or TakeField over the rows wanted.
  using ReadFileField = std::function<ArrayPtr(const format::LanceFileReader&, size_t field_index)>;
  // The field's values in its data file as the dataset's schema has them (NULLs, `rows`
  // of them, when no file holds it), before any overlay.
  ArrayPtr BaseValues(const FieldSource& src, size_t field, uint64_t rows, const ReadFileField& read) const;
  // Fills `out` (one entry per field) with the base values of the fields no overlay
  // covers, those being final; returns the positions of the others, left null. On a store
  // whose requests are costly the fields are read concurrently, so that their pages cost
  // one round trip rather than one each.
  std::vector<size_t> ReadPlainFields(const std::vector<size_t>& fields, uint64_t rows, const ReadFileField& read,
                                      std::vector<ArrayPtr>& out) const;
  const format::LanceFileReader& OpenFile(size_t data_file) const;
  // `whole_if_small`: read a file of at most kReadWholeOverlayFileBytes whole (a scan
  // reads all of it); else just its tail (a take reads a few pages).
  const format::LanceFileReader& OpenOverlayFile(size_t overlay, bool whole_if_small) const;
  // Throws Corrupt unless `file`, overlay `overlay`'s data file, has every field the
  // overlay lists, each with one value per covered cell (see the definition).
  void CheckOverlayFile(size_t overlay, const format::LanceFileReader& file) const;
  void CheckOverlayFile(size_t overlay, const SessionCaches::FieldRows& file) const;
  static SessionCaches::FieldRows FieldRowsOf(const format::LanceFileReader& file);
  // The `values` an overlay's column holds for its `field`-th field against its coverage.
  void CheckOverlayValues(size_t index, size_t field, uint64_t values) const;
  // The column of `field_id` in `file`, overlay `overlay`'s data file.
  size_t OverlayColumn(const format::LanceFileReader& file, size_t overlay, int32_t field_id) const;
  // The field's overlays in this fragment as coverage bitmaps, or null when none covers
  // it. The first call of a reader counts one read of the field (MergedLayersOf).
  const overlay::CoverageLayers* CoverageOf(size_t field) const;
  // The field's layers with their cells listed (kept by the dataset), or null when no
  // overlay covers it: what a merge starts from.
  const overlay::FieldLayers* LayersOf(size_t field) const;
  // The field's layers merged into one (kept by the dataset), once an earlier reader of
  // this version has read the field too and it has at least kMergeFromLayers layers: a
  // version read again pays one layer per batch, however many overlays it has, and a
  // version read once pays no merge. Null otherwise, or when MergeLayers declines.
  const overlay::FieldLayers* MergedLayersOf(size_t field) const;
  // LayersOf(field) merged, with the values; null when an overlay's column is too large
  // to hold (WholeOverlayColumn) or the values would pass kMergedValueBytes.
  std::shared_ptr<const overlay::FieldLayers> MergeLayers(const overlay::FieldLayers& layers, size_t field) const;
  // Throws Corrupt unless overlay `overlay`'s values of `field` have the schema's type.
  void CheckOverlayType(size_t field, size_t overlay, const ArrayData& values) const;
  // The read's values: the base (from read_base(), or from the overlay that covers every
  // wanted row) with the patches' cells swapped in, reading only the ranks they name.
  ArrayPtr Overlaid(size_t field, overlay::Resolution resolution, bool in_scan,
                    const std::function<ArrayPtr()>& read_base) const;
  // Overlay `overlay`'s values of `field_id` at ranks [first_rank, first_rank + count), or
  // at `ranks` when not empty, as (column, first): the k-th value is column[first + k].
  // A file within kTailBytes gives its whole column, kept (WholeOverlayColumn); a larger
  // one the ranks alone, opened whole when `in_scan` and within kReadWholeOverlayFileBytes.
  std::pair<ArrayPtr, int64_t> OverlayValues(int32_t field_id, size_t overlay, uint64_t first_rank, uint64_t count,
                                             std::span<const uint64_t> ranks, bool in_scan) const;
  // Overlay `overlay`'s whole value column of `field_id`, read once and kept by the
  // dataset, when its file holds at most kWholeOverlayBytes; else null. For tiny files,
  // merges and an index's changed cells, which need every value.
  ArrayPtr WholeOverlayColumn(size_t overlay, int32_t field_id) const;
  // Take and ReadRows; `in_scan` opens overlay files whole (OpenOverlayFile).
  std::vector<ArrayPtr> ReadOffsets(const std::vector<size_t>& fields, std::span<const uint64_t> offsets,
                                    bool in_scan) const;
  static constexpr uint64_t kWholeOverlayBytes = 4 << 20;
  // A take decodes a small overlay column whole when it wants at least 1 in this many of
  // its values (OverlayValues).
  static constexpr uint64_t kWholeForTakeShare = 8;
  static constexpr size_t kMergeFromLayers = 3;
  // One field over a range, resolved and patched.
  ArrayPtr ReadFieldRange(size_t field, uint64_t start, uint64_t count) const;
  // Read ahead (ReadAhead): an overlaid fixed-width field is read, resolved and patched
  // kChunkBytes of values at a time and handed out as views, so that each layer costs a
  // resolution and a patch per chunk rather than per batch.
  static constexpr uint64_t kChunkBytes = 256 << 10;
  uint64_t ChunkRows(size_t field) const;  // 0: read batch by batch
  ArrayPtr FromChunk(size_t field, uint64_t start, uint64_t count, uint64_t chunk_rows) const;
  // A scan's passing rows of a chunked field, taken from the resolved chunk: each layer
  // then costs a patch per chunk, not a coverage lookup per row. From the chunk held, or
  // from a new one when there are kDenseTakeMinRows or more and they are at least 1 in
  // kDenseTakeSpan of the rows they span. Null when the rows are too sparse or few or not
  // ascending, or span more than a chunk.
  static constexpr uint64_t kDenseTakeSpan = 16, kDenseTakeMinRows = 64;
  ArrayPtr TakeFromChunk(size_t field, std::span<const uint64_t> offsets) const;
  struct Chunk {
    uint64_t start = 0;
    ArrayPtr values;
    bool Holds(uint64_t first, uint64_t count) const {
      return values && first >= start && first + count <= start + uint64_t(values->length);
    }
  };
  // The field's chunk holding rows [start, start + count), read from `start` when the
  // one kept does not.
  const Chunk& ChunkHolding(size_t field, uint64_t start, uint64_t count, uint64_t chunk_rows) const;
  bool read_ahead_ = false;
  mutable std::map<size_t, Chunk> chunks_;  // by field
  static constexpr uint64_t kMergedValueBytes = DatasetState::kOverlayCacheBytes / 8;
  // An overlay file up to this size is read in one go when a scan opens it (it decodes
  // all of it). A take opens it by its tail and reads the pages its ranks fall in: a
  // fresh process taking 100 rows read 1.5 MB of such files whole before.
  static constexpr uint64_t kReadWholeOverlayFileBytes = 256 << 10;

  const DatasetState& state_;
  const lance::table::DataFragment& fragment_;
  mutable std::map<size_t, std::shared_ptr<const format::LanceFileReader>> files_;
  mutable std::unique_ptr<format::RoaringBitmap> deletions_;
  mutable std::unique_ptr<std::vector<uint64_t>> row_ids_;
  mutable std::shared_ptr<const overlay::FragmentOverlays> overlays_;
  mutable std::map<size_t, std::shared_ptr<const format::LanceFileReader>> overlay_files_;
  // A few entries by field id, searched in order: a read touches a handful of fields,
  // and an index lookup makes a reader per query, for which a map node per field costs
  // an allocation each.
  template <typename T>
  class ByFieldId {
   public:
    const T* Find(int32_t id) const {
      for (const auto& [key, value] : entries_)
        if (key == id) return &value;
      return nullptr;
    }
    const T& Add(int32_t id, T value) { return entries_.emplace_back(id, std::move(value)).second; }

   private:
    std::vector<std::pair<int32_t, T>> entries_;
  };
  // By field id, from the dataset's caches (null: no overlay lists the field).
  mutable ByFieldId<std::shared_ptr<const overlay::CoverageLayers>> coverage_;
  mutable std::map<int32_t, std::shared_ptr<const overlay::FieldLayers>> layers_;
  // By schema field: where ranges of its unmerged layers stand (a scan walks in order).
  mutable std::map<size_t, std::vector<overlay::RangeCursor>> range_cursors_;
  // By field id: MergedLayersOf's merges (null: read the unmerged layers).
  mutable ByFieldId<std::shared_ptr<const overlay::FieldLayers>> merged_;
  // By (overlay, field id): WholeOverlayColumn's answers (null: read ranks instead).
  mutable std::map<std::pair<size_t, int32_t>, ArrayPtr> whole_columns_;
};

}  // namespace lancelet::table
