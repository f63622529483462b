// A scan's check of the rows an index answer named against their values.
//
// A segment's hit for a leaf, in a fragment the segment covers, is a row it saw with a
// value making the leaf TRUE. While no overlay has changed the row since (it is not
// stale) and it is not deleted, the row's current value is that value. So a hit whose
// current value does not make its leaf TRUE proves the segment's files damaged: an id or
// a value in them is not the dataset's (one flipped bit in an id names another row, and
// the row it replaced is then missing from the answer). A search cannot see this; the
// scan, which reads the values to evaluate the filter anyway, can.
//
// Which rows need it: those the filter did not pass. A row passing an AND passes each of
// its leaves, so a filter without OR costs nothing while the index is sound; under an
// OR a row may pass through another leaf, so every candidate is checked.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lancelet/record_batch.h"
#include "table/dataset_state.h"
#include "table/index_answers.h"

namespace lancelet::table {

// `offsets`: the candidate rows of `fragment` the filter was evaluated at; `filter_rows`:
// the filter's columns at them; `passed`: the positions (ascending) where it was TRUE.
// Throws Corrupt naming the index, the file and the entry when a checked hit's value
// does not make its leaf TRUE.
void CheckIndexHits(const DatasetState& state, const IndexAnswers& answers,
                    const lance::table::DataFragment& fragment, std::span<const uint64_t> offsets,
                    const RecordBatch& filter_rows, const std::vector<int64_t>& passed);

}  // namespace lancelet::table
