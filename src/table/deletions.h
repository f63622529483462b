// A fragment's deletion file: the table-level glue between DataFragment.deletion_file
// and the deletion-file codec (format/deletion_file.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "format/roaring_bitmap.h"
#include "io/object_store.h"
#include "lancelet/expr.h"
#include "table/attempt_files.h"
#include "table.pb.h"

namespace lancelet::table {

// The name of the deletion file a fragment's DeletionFile message points at.
std::string DeletionFileName(uint64_t fragment_id, const lance::table::DeletionFile& file);
// Its path in the _deletions/ of the dataset at `uri` (where lancelet writes them).
std::string DeletionFilePath(const std::string& uri, uint64_t fragment_id, const lance::table::DeletionFile& file);
// Reads and checks the deletion file at `path` (DatasetState::DeletionFilePath resolves
// base paths) of a fragment with `physical_rows` rows: offsets in range, and as many as
// the manifest's num_deleted_rows when that is set. Anything else is Corrupt, naming the
// file and the fragment.
format::RoaringBitmap ReadDeletionFile(const io::ObjectStore& store, const std::string& path, uint64_t fragment_id,
                                       uint64_t physical_rows, const lance::table::DeletionFile& file);
// Writes `deleted` as a new deletion file (the kind the reference picks for its size),
// recorded in `attempt`.
lance::table::DeletionFile WriteDeletionFile(io::ObjectStore& store, AttemptFiles& attempt, const std::string& uri,
                                             uint64_t fragment_id, uint64_t read_version,
                                             const format::RoaringBitmap& deleted);

struct DatasetState;

// The physical offsets, per fragment, of the rows of `state` where `predicate` is TRUE
// (on `fragments` alone when given): what a DELETE removes.
std::map<uint64_t, std::vector<uint32_t>> OffsetsWhere(const std::shared_ptr<const DatasetState>& state,
                                                       const ExprPtr& predicate,
                                                       const std::optional<std::set<uint64_t>>& fragments = {});

// `fragment`'s deletions plus `offsets`, written as a new deletion file (recorded in
// `attempt`, read_version `state`'s); nullopt, writing nothing, when no row is left.
std::optional<lance::table::DeletionFile> DeletionFileWith(const DatasetState& state,
                                                           const lance::table::DataFragment& fragment,
                                                           std::span<const uint32_t> offsets, AttemptFiles& attempt);

// The rows fragment `now` of `after` has deleted that the same fragment, `then` of
// `before`, had not; empty, reading nothing, when its deletion file is the same.
format::RoaringBitmap NewlyDeleted(const DatasetState& before, const lance::table::DataFragment& then,
                                   const DatasetState& after, const lance::table::DataFragment& now);

}  // namespace lancelet::table
