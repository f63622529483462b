// Small record batches that several test programs build datasets from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/record_batch.h"

namespace lancelet::testing {

// id int64, name utf8.
SchemaPtr IdNameSchema();
// Rows id = start..start+n-1, name = "n<id>" (NULL when id % 7 == 3).
RecordBatchPtr IdNameBatch(int64_t start, int64_t n);

// The int64 column "id" of the dataset's rows, in scan order.
std::vector<int64_t> ScanIds(const DatasetPtr& ds);
// a, a + 1, ..., b - 1.
std::vector<int64_t> IdRange(int64_t a, int64_t b);

// n rows of int64 columns: id = 0..n-1, a = id % 10, b = id.
RecordBatchPtr IdABBatch(int64_t n);

// Columns of the given values; nullopt is NULL.
ArrayPtr Int64s(const std::vector<std::optional<int64_t>>& values);
ArrayPtr Strings(const std::vector<std::optional<std::string>>& values);

// Every batch of an Arrow IPC file or stream, as one batch.
RecordBatchPtr ReadArrowFile(const std::string& path);
// Values of column `c` of `source` at `rows`.
ArrayPtr PickRows(const RecordBatch& source, size_t c, const std::vector<uint32_t>& rows);

}  // namespace lancelet::testing
