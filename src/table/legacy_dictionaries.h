// A legacy (0.1) dataset keeps the values of each dictionary field in its manifest file,
// before the manifest message; its data files hold only the keys. Field.dictionary gives
// where they start in that file (`offset`) and how many there are (`length`):
//   - fixed-width values: `length` plain little-endian values at `offset`;
//   - strings and binary: the value bytes, then length + 1 int64 positions of them in the
//     manifest file; `offset` points at the positions. A nullable field reads an empty
//     value as NULL, as the reference does.
// Every new manifest of such a dataset carries the values again, since its offsets point
// into its own file.
#pragma once

#include <string>

#include "format/lance_schema.h"
#include "io/object_store.h"
#include "table.pb.h"

namespace lancelet::table {

// Reads the dictionary values of the manifest's fields (those whose Field.dictionary
// is set) from the manifest file at `manifest_path` into `schema`'s nodes.
void LoadLegacyDictionaries(const io::ObjectStore& store, const std::string& manifest_path,
                            const lance::table::Manifest& manifest, format::LanceSchema& schema);

// Gives `to`'s dictionary fields the legacy dictionary values `from` holds for the same
// field ids.
void CopyLegacyDictionaries(const format::LanceSchema& from, format::LanceSchema& to);

// Appends the values `schema` holds for each of the manifest's dictionary fields to
// `out`, a manifest file being written, and points the fields at them. Throws Invalid
// for a dictionary field whose values `schema` does not hold.
void AppendLegacyDictionaries(const format::LanceSchema& schema, lance::table::Manifest& manifest, std::string& out);

// Whether any of the manifest's fields keeps its dictionary in the manifest file.
bool HasLegacyDictionaries(const lance::table::Manifest& manifest);

}  // namespace lancelet::table
