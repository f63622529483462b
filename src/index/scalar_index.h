// Scalar index files in the reference's layouts (lance 12.0.0), one directory
// `_indices/<uuid>/` per index segment:
//
// BTree: page_data.lance holds every indexed row as (values: T nullable, ids: uint64),
//   sorted by value with nulls first; page p is rows [p * batch_size, (p + 1) *
//   batch_size). page_lookup.lance has one row per page (min: T, max: T, null_count:
//   uint32, page_idx: uint32), min and max being the page's first and last value (null
//   when the page starts with nulls), and schema metadata batch_size="4096",
//   range_partitioned="false".
// Bitmap: bitmap_page_lookup.lance has one row per distinct value (keys: T nullable,
//   bitmaps: binary), each bitmap a serialized RowAddrMap of the rows holding that value;
//   schema metadata lance:index_stats={"num_bitmaps":N}. lancelet writes the null key
//   first and the others ascending, as the reference's first build does; the
//   reference's optimize writes them in hash order.
//
// `ids` are row addresses (fragment << 32 | offset), or stable row ids when the dataset
// has them. Index files use the dataset's Lance file version.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format/lance_file.h"
#include "index/id_bounds.h"
#include "index/index.h"
#include "index/index_query.h"
#include "index/row_addr_map.h"
#include "io/object_store.h"
#include "lancelet/array.h"

namespace lancelet::index {

inline constexpr const char* kBTreeDataFile = "page_data.lance";
inline constexpr const char* kBTreeLookupFile = "page_lookup.lance";
inline constexpr const char* kBitmapLookupFile = "bitmap_page_lookup.lance";
inline constexpr int64_t kBTreePageRows = 4096;  // written; read from batch_size when present

// Whether lancelet can build an index over values of `type`.
bool CanIndex(const DataType& type);

// What the dataset knows about a segment, for checking its files as they are read.
struct IndexSource {
  std::string name;                               // the index's name, for messages
  std::map<std::string, uint64_t> file_sizes;     // IndexMetadata.files: name -> bytes (not listed: not recorded)
  IdBounds ids;                                   // what an id in it may be
};

class ScalarIndex : public Index {
 public:
  // Opens the segment in directory `dir`. Throws Corrupt naming the index and the file
  // when a file is missing, not of its recorded size, or not in the layout above.
  static std::unique_ptr<ScalarIndex> Open(const io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                           const IndexSource& source = {});

  // The ids of the rows whose indexed value makes `leaf` TRUE. The files are checked as
  // they are read (btree_pages.h; a Bitmap's keys are distinct, and its bitmaps parse
  // exactly and share no row), and so are the ids returned: each at most once and
  // within the source's IdBounds. A violation throws Corrupt naming the index, the file
  // and the page or key row, and nothing is returned.
  virtual RowAddrMap Search(const IndexLeaf& leaf) const = 0;
  // Where the files list `id` among the hits of `leaf` ("'<file>' page 3 (file row
  // 12290), row 2"; "rows added in memory" for those), for a message naming a damaged
  // entry: an error path, which searches again.
  virtual std::vector<std::string> Locate(const IndexLeaf& leaf, uint64_t id) const = 0;
};

struct WrittenFile {
  std::string name;
  uint64_t size = 0;
};

// Writes a segment's files into `dir` from every indexed row's value and id, in any
// order (index/index_builder.h; spilling sorted runs past `memory_budget` bytes).
// Returns the files written, for IndexMetadata.files.
std::vector<WrittenFile> WriteIndex(io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                    format::FileVersion version, const ArrayData& values,
                                    const std::vector<uint64_t>& ids, uint64_t memory_budget = 64 << 20);

// Every indexed (value, id) of the segment in `dir` (lancelet's or the reference's files),
// a batch at a time: a BTree's sorted rows; a Bitmap's keys, each repeated for the ids
// its bitmap lists (a fragment it lists whole expands to `fragment_rows(fragment)`
// offsets). For rebuilding segments as one (a distributed build's merge).
void ForEachSegmentRow(const io::ObjectStore& store, const std::string& dir, IndexKind kind,
                       const std::function<uint64_t(uint32_t fragment)>& fragment_rows,
                       const std::function<void(const ArrayPtr& values, std::span<const uint64_t> ids)>& fn);

// A BTree over `values` and their `ids` held in memory, in pages of `page_rows`: searched
// exactly as a segment's files are.
std::unique_ptr<ScalarIndex> InMemoryBTree(const ArrayData& values, std::span<const uint64_t> ids,
                                           int64_t page_rows);
// `index` and `more` (an InMemoryBTree) searched as one: a search returns the hits of
// both. A BTree of the same value type shares one page lookup with `more`, so the page
// predicate is evaluated once (table/index_plan's changed cells use this).
std::shared_ptr<const ScalarIndex> WithRows(std::shared_ptr<const ScalarIndex> index,
                                            std::shared_ptr<const ScalarIndex> more);

// Row order sorting `values` ascending, nulls first, ties in input order. Floats order
// NaN above every number and -0.0 equal to 0.0, as the filter's comparisons do.
std::vector<int64_t> SortedOrder(const ArrayData& values);
// `values` in SortedOrder, and `ids` in the same order.
std::pair<ArrayPtr, std::vector<uint64_t>> SortedRows(const ArrayData& values, std::span<const uint64_t> ids);

}  // namespace lancelet::index
