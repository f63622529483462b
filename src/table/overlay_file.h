// Writing one overlay value file and describing it as a DataOverlayFile; shared by
// OverlayWriter (DataOverlay commits) and the SQL MERGE commit.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lancelet/array.h"
#include "lancelet/dataset.h"
#include "table.pb.h"
#include "table/attempt_files.h"
#include "table/dataset_state.h"
#include "table/read_set.h"

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

// An UPDATE evaluated on one version: the rows where the predicate holds and their new
// values, fragment by fragment, and what the evaluation read (for the commit's check that
// no concurrent commit changed it).
struct UpdateValues {
  std::map<uint64_t, std::vector<uint32_t>> offsets;     // fragment id -> changed physical offsets
  std::map<uint64_t, std::vector<ArrayPtr>> values;      // fragment id -> one array per SET clause
  std::vector<size_t> set_fields;                        // schema index of each SET column
  std::shared_ptr<ReadSet> read_set;
  uint64_t rows() const;
};
// Evaluates `set` where `predicate` holds (null: every row) on `state`, on the fragments
// in `fragments` alone when given (the read set still lists every fragment of the
// version: the predicate was meant for all of them). Throws InvalidArgument for an
// unknown column or a value that does not convert exactly.
UpdateValues EvaluateUpdate(const std::shared_ptr<const DatasetState>& state,
                            const std::vector<Dataset::SetExpression>& set, const ExprPtr& predicate,
                            const std::optional<std::set<uint64_t>>& fragments = std::nullopt);

}  // namespace lancelet::table
