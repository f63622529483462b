// The part of a scan filter that scalar indexes can answer, as a tree of leaves.
//
// A leaf is one comparison of an indexed column with literals (=, <, <=, >, >=, BETWEEN,
// IN, IS NULL), possibly negated. NOT is pushed down to the leaves (De Morgan holds in
// SQL's three-valued logic, and NOT of a leaf is TRUE exactly where the leaf is FALSE).
// Anything else becomes kAny: "every row may match", which an AND ignores and an OR
// spreads. Answering the tree therefore gives a superset of the rows where the filter is
// TRUE; the scan still evaluates the whole filter on those rows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lancelet/expr.h"

namespace lancelet::index {

struct IndexLeaf {
  enum class Op { kEq, kLt, kLe, kGt, kGe, kBetween, kIn, kIsNull };
  std::string column;
  Op op = Op::kEq;
  bool negated = false;
  std::vector<ExprPtr> literals;  // 1 for comparisons, 2 for BETWEEN, the list for IN

  // The leaf as a predicate over a column named `as_column` (an index file's own name
  // for the values, such as "values" or "keys").
  ExprPtr ToExpr(const std::string& as_column) const;
  ExprPtr AsFilter() const;       // over its column as the filter names it
  std::string ToString() const;  // as the filter wrote it (a struct path unquoted: a.b)
  // The rows of a column of `type` values where the leaf is TRUE (bound once, reusable).
  std::function<std::vector<int64_t>(const ArrayData&)> Selector(const TypePtr& type) const;

 private:
  ExprPtr Over(const ExprPtr& column) const;  // the leaf with `column` as its operand
};

// `operand IS NULL`, or IS NOT NULL when `negated`.
ExprPtr IsNullExpr(ExprPtr operand, bool negated);

struct IndexQuery {
  enum class Kind { kLeaf, kAnd, kOr, kAny };
  Kind kind = Kind::kAny;
  IndexLeaf leaf;                    // kLeaf
  std::vector<IndexQuery> children;  // kAnd, kOr

  // `indexed(column)`: whether some index may answer leaves on that column (a struct
  // path joined with ".", as IndexLeaf::column holds it).
  static IndexQuery FromFilter(const Expr& filter, const std::function<bool(const std::string&)>& indexed);
  // Every leaf, in tree order.
  void Leaves(std::vector<const IndexLeaf*>& out) const;
};

}  // namespace lancelet::index
