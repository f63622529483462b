// An order-keeping parallel map over a stream of batches: the work of each batch (a
// join's probe, say) runs on several threads while the batches still come out in the
// source's order.
#pragma once

#include <functional>
#include <memory>

#include "lancelet/record_batch.h"

namespace lancelet {

// The batches map(b) for the batches b of `source`, in order (a null or empty result is
// skipped), computed on up to `threads` threads: the caller's, and threads that pull the
// next batch from `source` (one at a time, under a lock) while earlier ones are mapped.
// At most 2 * threads batches are pulled past the one the caller is at. An error of
// `source` or `map` is thrown by Next() at its batch's turn. `map` must be safe to call
// from several threads at once. With `threads` below 2 it is a plain, inline map.
// Unread, it may be read as a SharedSource instead (array/shared_source.h): each thread
// maps a piece of `source` itself (decoding it too, when `source` is shared in turn).
std::unique_ptr<RecordBatchReader> ParallelMap(std::unique_ptr<RecordBatchReader> source, SchemaPtr schema,
                                               std::function<RecordBatchPtr(const RecordBatchPtr&)> map,
                                               int threads);

// One batch's work, handed out in order by a task source (see ParallelTasks).
using BatchTask = std::function<RecordBatchPtr()>;

// The batches the tasks of `next_task` compute, in the tasks' order (a null or empty
// result is skipped). `next_task` is called one call at a time, in order, until it
// returns an empty task; the tasks run on up to `threads` threads as ParallelMap's maps
// do (ParallelMap is a task per source batch), at most 2 * threads past the caller's.
// Unread, it may be read as a SharedSource: a piece is a task, run by the thread that
// took it.
std::unique_ptr<RecordBatchReader> ParallelTasks(std::function<BatchTask()> next_task, SchemaPtr schema, int threads);

}  // namespace lancelet
