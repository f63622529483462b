// The checks on cells a writer sets over a fragment's rows, made before anything is
// written: one set of rules for OverlayWriter::Set and the commit of MERGE and UPDATE's
// row and column changes (merge_commit.cc). Messages start with `who` ("overlay on",
// "merge into").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/array.h"
#include "table.pb.h"
#include "table/dataset_state.h"

namespace lancelet::table {

// The index in the schema of the top-level `column` that `values` set at `offsets` of
// `fragment` (id `fragment_id`). Throws InvalidArgument for a column the schema lacks, a
// blob column (its values live outside the data file), values of another type or count,
// and offsets not strictly increasing or past the fragment's physical rows.
size_t CheckCells(const DatasetState& state, std::string_view who, uint64_t fragment_id,
                  const lance::table::DataFragment& fragment, const std::string& column,
                  const std::vector<uint32_t>& offsets, const ArrayPtr& values);

// Throws NotSupported when `fragment` has a data file in the legacy Lance file format
// (0.1/0.2), which takes no overlays.
void CheckTakesOverlays(const DatasetState& state, std::string_view who, const lance::table::DataFragment& fragment);

}  // namespace lancelet::table
