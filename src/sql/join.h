// A FROM clause with joins as one stream. Its columns are named "<qualifier>.<column>"
// (u.id), so that columns of the same name on two sides stay apart; Resolve rewrites a
// statement's column references to those names.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "sql/exec.h"

namespace lancelet::sql {

class JoinedSource {
 public:
  // Opens every side of stmt.from and stmt.joins. Each table reads only the columns the
  // statement names (all of them under SELECT *), and the WHERE's terms that read that
  // table alone are pushed into its scan where the join kinds allow. `plan_only`: the
  // sides are planned (for EXPLAIN) but no rows are read.
  JoinedSource(const Context& ctx, const SelectStmt& stmt, bool plan_only = false);

  // The joined rows: the first side streams, each later side is held (hash join) or,
  // past a quarter of the memory budget, partitioned on disk with the rows before it.
  std::unique_ptr<RecordBatchReader> TakeRows() { return std::move(rows_); }
  // `e` with column references renamed to the joined columns: q.col names side q's
  // column, a bare name the one side that has it (a USING column: the left side's, or under a
  // RIGHT or FULL join the first non-NULL of the sides').
  // `keep` are bare names left alone (output aliases).
  ExprPtr Resolve(const ExprPtr& e, const std::vector<std::string>& keep = {}) const;
  // SELECT *: each joined column with its output name (the column's own name). A
  // USING column appears once.
  const std::vector<std::pair<std::string, std::string>>& star() const { return star_; }
  // q.*: every column of side q, a USING column included, named by its own name.
  // `position` places the error when q is no side.
  std::vector<std::pair<std::string, std::string>> star(const std::string& q, int position) const;
  // A line per side: its source, how it is joined, the filter pushed into its scan, the
  // columns it reads.
  const std::vector<std::string>& plan() const { return plan_; }

 private:
  struct Side {
    std::string qualifier;
    std::vector<std::string> columns;  // every column of the side, read or not
    std::vector<std::string> read;     // the columns its reader gives
  };

  struct Sources;  // join.cc

  // The steps of the constructor, in order.
  void OpenSides(Sources& sources);
  void OrderCommaJoins(const SelectStmt& stmt, Sources& sources);
  void OpenScans(const SelectStmt& stmt, Sources& sources, bool plan_only);
  void ListStarColumns(const SelectStmt& stmt, const Sources& sources);
  void JoinLeftToRight(const SelectStmt& stmt, Sources& sources);
  // The WHERE terms pushed into each side's scan.
  std::vector<std::vector<ExprPtr>> PushedTerms(const SelectStmt& stmt, const Sources& sources) const;
  // The sides whose columns `e` reads.
  std::set<size_t> SidesRead(const ExprPtr& e) const;
  bool HasSideEquality(const JoinClause& join, size_t s) const;
  // Whether `term` is `x = y` with x over side s alone and y over earlier sides alone.
  bool JoinsSideToEarlier(const ExprPtr& term, size_t s) const;
  // FROM a, b WHERE a.k = b.k: the WHERE's equalities that join side s to earlier sides,
  // ANDed (null when none), when every join is INNER or CROSS; they become the join's
  // keys, so that it hashes instead of crossing every pair.
  ExprPtr WhereKeys(const SelectStmt& stmt, size_t s) const;

  const Context& ctx_;
  std::vector<Side> sides_;
  std::vector<std::string> using_columns_;
  std::vector<std::string> coalesced_;  // USING columns of RIGHT and FULL joins
  std::vector<std::pair<std::string, std::string>> star_;
  std::unique_ptr<RecordBatchReader> rows_;
  std::vector<std::string> plan_;
};

}  // namespace lancelet::sql
