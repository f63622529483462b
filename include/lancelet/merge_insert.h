// MergeInsert: pylance's merge_insert on a dataset, with rows held in memory as the
// source. Target rows and source rows pair up where every key column is equal (a NULL
// key pairs with nothing); then, in ONE commit:
//   - when_matched_update_all: a paired target row takes the source row's values (its
//     cells as a data overlay), where `matched_condition` holds if set;
//   - when_not_matched_insert_all: an unpaired source row is appended;
//   - when_not_matched_by_source_delete: an unpaired target row is deleted, where
//     `by_source_condition` holds if set.
// Conditions are SQL expressions; a matched condition names columns as target.c and
// source.c, a by-source condition only target columns. A target row paired with two
// source rows is refused. A concurrent commit touching what the merge read makes it plan
// again on the latest version. On any failure nothing is committed and no file is left.
//
//   MergeInsertOptions o;
//   o.on = {"id"};
//   o.when_matched_update_all = o.when_not_matched_insert_all = true;
//   auto r = MergeInsert(ds, batches, o);   // r.dataset at the version written
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/record_batch.h"

namespace lancelet {

struct MergeInsertOptions {
  std::vector<std::string> on;  // key columns, in the dataset and in the source
  bool when_matched_update_all = false;
  std::string matched_condition;  // empty: every paired row
  bool when_not_matched_insert_all = false;
  bool when_not_matched_by_source_delete = false;
  std::string by_source_condition;  // empty: every unpaired target row
};

struct MergeInsertResult {
  DatasetPtr dataset;  // the version written; the target itself when nothing changed
  uint64_t inserted = 0, updated = 0, deleted = 0;
};

// `source`: columns named as the dataset's (a subset of them, keys included), read as
// their types (exact conversions only; any other type refused naming the column).
// Columns the source lacks keep their values on update and are NULL on insert.
MergeInsertResult MergeInsert(const DatasetPtr& target, RecordBatchReader& source, const MergeInsertOptions& options);
MergeInsertResult MergeInsert(const DatasetPtr& target, const std::vector<RecordBatchPtr>& source,
                              const MergeInsertOptions& options);

}  // namespace lancelet
