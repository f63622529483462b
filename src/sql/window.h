// Window functions: f(...) OVER ([PARTITION BY ...] [ORDER BY ...] [frame]). Each call
// sorts its input by its partition and order keys (Sorter, which spills past the memory
// budget) and reads one partition at a time, so memory holds the largest partition; a
// call whose value at a row needs only the rows up to it (ranking, running frames) gives
// a partition in chunks that end at a peer group's end instead. Rows come out partition
// by partition, in window order.
//
// Functions: row_number, rank, dense_rank, percent_rank, cume_dist, ntile(n);
// lag / lead (x [, offset [, default]]), first_value, last_value, nth_value(x, n); and
// the aggregates: count, sum, avg, min and max over any frame, any other aggregate over
// a whole partition.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "sql/exec.h"

namespace lancelet::sql {

// `input` with one more column per call, named `names[k]`: calls[k] over its window.
// The calls' expressions are bound to the input's columns.
std::unique_ptr<RecordBatchReader> OpenWindows(const Context& ctx, std::unique_ptr<RecordBatchReader> input,
                                               const std::vector<ExprPtr>& calls,
                                               const std::vector<std::string>& names);

}  // namespace lancelet::sql
