// Nearest-neighbour queries in SQL: `SELECT ... FROM t [WHERE ...] ORDER BY
// l2_distance(emb, [..]) LIMIT n` answered through the column's vector index, as
// Dataset::Search answers a query, when the index ranks by the function's metric.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/record_batch.h"
#include "lancelet/vector_search.h"
#include "sql/ast.h"

namespace lancelet::sql {

// The values of an expression that reads no column and holds a list of finite numbers
// (a constant vector such as [0.1, 0.2]); nullopt for any other expression.
std::optional<std::vector<double>> ConstantVector(const ExprPtr& e);

struct NearestPlan {
  VectorQuery query;  // column, vector, metric, k = OFFSET + LIMIT, the WHERE as prefilter
  VectorIndexUse index;
  std::string order_key;  // the ORDER BY key, as written
  // The table's columns the statement reads once the WHERE has chosen its rows (nullopt:
  // every one); the prefilter reads its own.
  std::optional<std::vector<std::string>> columns;
};

// The plan when `stmt` (`where`: its WHERE, table qualifiers stripped) selects from one
// table, without GROUP BY, aggregates, windows, DISTINCT or correlated subqueries, under
// a LIMIT, ordered by one key nearest first: l2_distance / list_distance / array_distance
// ascending (l2), cosine_distance ascending or cosine_similarity descending (cosine),
// negative_inner_product ascending or inner_product descending (dot), NULLs last (the default),
// of a vector column and a constant vector of its dimension; and the column has a vector
// index ranking by that metric. Nullopt otherwise: the query then runs exactly. The index
// holds no NULL vector, so a served query returns only rows with one; its rows are then
// ordered by the key computed exactly, like any other rows.
std::optional<NearestPlan> PlanNearest(const SelectStmt& stmt, const ExprPtr& where, const Dataset& ds);

// The rows of the plan's search, with the plan's columns and the pseudo-columns asked
// for, in distance order.
std::unique_ptr<RecordBatchReader> OpenNearest(const NearestPlan& plan, const Dataset& ds, bool row_id, bool row_addr);

// EXPLAIN's lines for a served query: the search's, then the exact ordering over them.
std::string ExplainNearest(const NearestPlan& plan, const SelectStmt& stmt, const Dataset& ds);

}  // namespace lancelet::sql
