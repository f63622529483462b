// The manifest's indexes: the IndexSection stored in the manifest file (at the offset
// Manifest.index_section names: a u32 little-endian length, then the message), and what
// each committed operation does to it. Every commit must carry every index forward, or
// it would silently drop indexes (the reference's, or ones it cannot query).
//
// The rules follow the reference's manifest builder:
// - Overwrite starts with no index.
// - Append and DataOverlay keep the list as it is: new fragments are not in any index's
//   fragment_bitmap (a reader scans them flat), and an overlay newer than an index is
//   excluded from its answers by committed_version, not by a change to the index.
// - CreateIndex removes its removed_indices and adds its new_indices (both by uuid).
// - Delete and Update keep the list, then drop what no longer applies (RetainRelevant):
//   an index whose fields are not all in the new schema goes; of several segments with
//   one name, those covering none of the remaining fragments go, the oldest staying if
//   all are empty. A fragment bitmap is never rewritten here: a removed fragment simply
//   stops counting.
// - lancelet's overlay-carrying Update (REWRITE_ROWS) prunes no fragment from an index on
//   the fields it changed (the overlays' committed_version marks the changed cells stale
//   instead). An Update with REWRITE_COLUMNS (an overlay fold) removes its updated
//   fragments from every index on a modified field.
// - Rewrite removes its old fragments from every index; with stable row ids an index
//   that covered a whole group, and is not older than an overlay the group folded on its
//   fields, covers the group's new fragments instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "format/roaring_bitmap.h"

#include "io/object_store.h"
#include "table.pb.h"
#include "transaction.pb.h"

namespace lancelet::table {

// The IndexSection of the manifest `manifest` read from `manifest_path`; empty when it
// has none. Throws Corrupt when the section lies outside the file or does not parse.
lance::table::IndexSection ReadIndexSection(const io::ObjectStore& store, const std::string& manifest_path,
                                            const lance::table::Manifest& manifest);
// The same from the manifest file's bytes, read already.
lance::table::IndexSection ParseIndexSection(const std::string& manifest_path, std::string_view file,
                                             const lance::table::Manifest& manifest);

// The indexes of `next`, the manifest `transaction` builds from `base` (null: none),
// whose indexes were `before`.
lance::table::IndexSection CarryIndexes(const lance::table::IndexSection& before, const lance::table::Manifest* base,
                                        const lance::table::Manifest& next,
                                        const lance::table::Transaction& transaction);

// The fragments a segment covers (its fragment_bitmap), or nullopt when it has none: then
// it covers every fragment. Throws Corrupt naming the index when the bitmap does not parse.
std::optional<format::RoaringBitmap> IndexFragments(const lance::table::IndexMetadata& index);

// An index UUID's 16 bytes as its directory name (8-4-4-4-12 lower-case hex) and back.
// UuidBytes throws Invalid for text of another shape.
std::string UuidText(const std::string& bytes);
std::string UuidBytes(const std::string& text);

}  // namespace lancelet::table
