// Correlated subqueries: a subquery that names columns of the query around it (its
// outer query) has a value per outer row. Two ways to compute it:
//  - hashed: when the subquery meets the outer query only through equalities in its
//    WHERE (inner = outer, ANDed with the rest), it runs once, with those equalities
//    dropped and their inner sides added as keys, and each outer row looks its keys up
//    (EXISTS becomes a semi join, IN a per-key value set, a scalar subquery a per-key
//    value, an aggregate's value over no rows standing in for a missing key);
//  - repeated: any other subquery runs once per distinct combination of the outer values
//    it names, with those values in place as literals.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "sql/ast.h"
#include "sql/exec.h"

namespace lancelet::sql {

// One planned correlated subquery: `Values` computes it for a batch of outer rows from
// the values of the outer expressions its marker carries.
class CorrelatedSubquery {
 public:
  virtual ~CorrelatedSubquery() = default;
  // Called once, before Values, with the types of the marker's outer expressions; runs
  // what can run once and fixes the result type.
  virtual void Prepare(const std::vector<TypePtr>& outer_types) = 0;
  virtual TypePtr type() const = 0;
  virtual ArrayPtr Values(const std::vector<ArrayPtr>& outer, int64_t rows) = 0;
  // How it runs, for EXPLAIN.
  virtual std::string Describe() const = 0;

  // A hashed subquery whose table outgrew half the memory budget in Prepare has its rows
  // split by key hash into kSpillPartitions files instead. Then the outer rows are split
  // the same way (PartitionsOf: a partition per row), and each partition's are looked up
  // after Load(p).
  virtual bool partitioned() const { return false; }
  virtual std::vector<size_t> PartitionsOf(const std::vector<ArrayPtr>& outer, int64_t rows) const {
    (void)outer;
    return std::vector<size_t>(size_t(rows), 0);
  }
  virtual void Load(size_t /*partition*/) {}
};
using Correlations = std::vector<std::unique_ptr<CorrelatedSubquery>>;

// `stmt` with each correlated subquery of its WHERE, select list and ORDER BY replaced
// by a marker, a call __correlated(k, outer expressions...) standing for subquery k of
// `out`. Uncorrelated subqueries are left in place. A correlated subquery anywhere else
// (GROUP BY, HAVING, JOIN ... ON) is an error.
SelectStmt MarkCorrelated(const Context& ctx, const SelectStmt& stmt, Correlations& out);
bool HasCorrelatedMarker(const ExprPtr& e);
// The name of the column AppendCorrelated adds for subquery k.
std::string CorrelatedColumnName(size_t k);
bool IsCorrelatedColumnName(const std::string& name);

// `input` with a column per correlated subquery (CorrelatedColumnName), computed batch by
// batch (or, for a partitioned one, partition by partition: the rows then come out in
// partition order). The markers in `exprs` are replaced by references to those columns; their outer
// expressions are first mapped by `resolve` (the statement's column renaming) and bound
// to the input's columns.
std::unique_ptr<RecordBatchReader> AppendCorrelated(std::unique_ptr<RecordBatchReader> input, Correlations plans,
                                                    const std::function<ExprPtr(const ExprPtr&)>& resolve,
                                                    const std::vector<ExprPtr*>& exprs);

}  // namespace lancelet::sql
