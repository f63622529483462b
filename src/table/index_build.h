// Building one scalar index segment (BTree or Bitmap) over some fragments of a version:
// the piece Dataset::CreateIndex, OptimizeIndices and a distributed build (IndexTask)
// share.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "lancelet/dataset.h"
#include "table.pb.h"
#include "table/attempt_files.h"
#include "table/dataset_state.h"

namespace lancelet::table {

// Writes a segment of index `name` on `column` (a top-level column or a struct field
// "a.b") over the live rows of `fragments`, every row's current value with its address or
// stable row id, under _indices/<uuid>/ (recorded in `attempt`), and returns its metadata.
// NotFound for a missing column, NotSupported for a type or IndexType a scalar index does
// not hold.
lance::table::IndexMetadata BuildScalarSegment(const std::shared_ptr<const DatasetState>& state,
                                               const std::string& column, IndexType type, const std::string& name,
                                               const std::set<uint64_t>& fragments, AttemptFiles& attempt);

}  // namespace lancelet::table
