// Small record batches that several test programs build datasets from.
#pragma once

#include <cstdint>

#include "lancelet/record_batch.h"

namespace lancelet::testing {

// id int64, name utf8.
SchemaPtr IdNameSchema();
// Rows id = start..start+n-1, name = "n<id>" (NULL when id % 7 == 3).
RecordBatchPtr IdNameBatch(int64_t start, int64_t n);

}  // namespace lancelet::testing
