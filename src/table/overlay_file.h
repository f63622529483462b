// Writing one overlay value file and describing it as a DataOverlayFile; shared by
// OverlayWriter (DataOverlay commits) and the SQL MERGE commit.
#pragma once

#include <string>
#include <vector>

#include "lancelet/array.h"
#include "table.pb.h"
#include "table/attempt_files.h"
#include "table/dataset_state.h"

namespace lancelet::table {

struct OverlayColumn {
  size_t field;                          // index in the dataset schema
  const std::vector<uint32_t>* offsets;  // strictly increasing physical offsets
  ArrayPtr values;                       // one value per offset
};

// Writes `columns` (possibly of different lengths) into a new file under data/ and
// returns its DataOverlayFile: dense (one shared bitmap) when every column covers the
// same offsets, else sparse (one bitmap per entry of data_file.fields). committed_version
// is left 0 for the commit to stamp. The file is recorded in `attempt`.
lance::table::DataOverlayFile WriteOverlay(const DatasetState& state, const std::vector<OverlayColumn>& columns,
                                           AttemptFiles& attempt);

}  // namespace lancelet::table
