// A fragment's deletion file: the table-level glue between DataFragment.deletion_file
// and the deletion-file codec (format/deletion_file.h).
#pragma once

#include <string>

#include "format/roaring_bitmap.h"
#include "io/object_store.h"
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

}  // namespace lancelet::table
