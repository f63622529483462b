// Hash aggregation over a stream of batches: the state of each group's aggregates is
// kept, the input rows are not. Groups come out in order of first appearance.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"
#include "sql/exec.h"

namespace lancelet::sql {

bool IsAggregateName(const std::string& function);

// Hash keys for grouping and joins: equal values give equal keys. Integers, dates and
// timestamps are keyed by their bits (KeyedByBits), other values by ValueKey.
bool KeyedByBits(const DataType& type);
// Appends row r's key for one column. Each form is prefix-free (a NULL is one byte; a
// value starts with another byte and has a fixed width or a terminating 0), so the keys
// of several columns concatenate unambiguously.
void AppendKey(std::string& key, const ArrayData& a, int64_t r, bool by_bits);
// The names IsAggregateName accepts, sorted.
const std::vector<std::string>& AggregateNames();

// One aggregate call of a query. `argument` is bound to the input schema (null for
// count(*)); `type` is the result type.
struct AggregateCall {
  ExprPtr call;
  BoundExprPtr argument;
  TypePtr type;
};

// Checks the call's arguments and binds them against `input` (errors point into the
// statement).
AggregateCall BindAggregate(const Context& ctx, const ExprPtr& call, const Schema& input);

// Per-group state of one aggregate; see aggregate.cc for the kinds.
class Accumulator {
 public:
  virtual ~Accumulator() = default;
  // Row r of `argument` (null for count(*)) belongs to group groups[r]; groups below
  // `group_count` exist.
  virtual void Add(const ArrayData* argument, const std::vector<uint32_t>& groups, size_t group_count) = 0;
  // One value per group, of the call's result type.
  virtual ArrayPtr Finish(size_t group_count) = 0;
};

class HashAggregate {
 public:
  // `keys`: the GROUP BY expressions bound to the input schema. Without keys every row
  // falls in one group, which exists even when no row arrives (count(*) of nothing is 0).
  HashAggregate(const Context& ctx, std::vector<BoundExprPtr> keys, std::vector<AggregateCall> aggregates);
  ~HashAggregate();

  void Add(const RecordBatch& batch);
  // A batch with columns __grp<j> (the keys) then __agg<i> (the aggregates), a row per
  // group.
  RecordBatchPtr Finish();

 private:
  const Context& ctx_;
  std::vector<BoundExprPtr> keys_;
  std::vector<AggregateCall> aggregates_;
  std::vector<std::unique_ptr<Accumulator>> accumulators_;
  std::unordered_map<std::string, uint32_t> group_of_;
  std::vector<std::vector<Scalar>> key_values_;  // [key][group]: the group's key values
  size_t groups_ = 0;
  std::vector<uint32_t> row_groups_;  // scratch: the group of each row of a batch
  std::string key_;                   // scratch
};

}  // namespace lancelet::sql
