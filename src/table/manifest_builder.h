// The manifest of the next version: the base manifest (or a fresh one when creating)
// with one transaction applied, one builder per operation.
#pragma once

#include "table.pb.h"
#include "transaction.pb.h"

namespace lancelet::table {

struct CommitOptions;

// The id the next new fragment of `base` gets: one past max_fragment_id, or, when the
// manifest leaves it out (writers before lance 0.2x omitted a zero), one past the highest
// id among its fragments, as the reference reads it; 0 for a manifest with neither.
uint64_t NextFragmentId(const lance::table::Manifest& base);

// The manifest of the version after `base` (null: the first version) once `transaction`
// is applied. Throws RetryableConflict when the transaction names a fragment `base` does
// not have (a concurrent commit removed it). Exposed for tests.
lance::table::Manifest BuildManifest(const lance::table::Manifest* base, const lance::table::Transaction& transaction,
                                     const CommitOptions& options);

// The manifest a Restore commits on top of `latest`: `old`'s content (schema, fragments,
// config, feature flags; its index section is carried by the caller) as the next version,
// as the reference restores. Ids stay unused once given: max_fragment_id and next_row_id
// are the larger of the two manifests', so a later append reuses neither a fragment id
// nor a row id that a version after `old` gave out.
lance::table::Manifest RestoredManifest(const lance::table::Manifest& latest, const lance::table::Manifest& old,
                                        const CommitOptions& options);

}  // namespace lancelet::table
