// MERGE INTO target USING source ON cond WHEN [NOT] MATCHED ...: a join of the target's
// live rows with the source, a per-row choice of the first clause whose condition holds,
// then one combined commit (table/merge_commit.h): matched updates as one overlay per
// fragment (sparse when different rows set different columns), matched deletes as
// deletion files, not-matched inserts as an appended fragment; target rows no source row
// matches (WHEN NOT MATCHED BY SOURCE) are deleted or updated in the same commit.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "sql/aggregate.h"
#include "sql/exec.h"
#include "table/commit.h"
#include "table/compaction.h"
#include "table/merge_commit.h"
#include "table/update_modes.h"

namespace lancelet::sql {

namespace {

constexpr const char* kRowAddr = "_rowaddr";

// Column names of a batch, without the pseudo-column.
std::vector<std::string> ColumnNames(const Schema& schema) {
  std::vector<std::string> names;
  for (const auto& f : schema.fields())
    if (f->name != kRowAddr) names.push_back(f->name);
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Columns of the joined rows are named "<qualifier>.<column>"; expressions are rewritten
// to use those names.
struct Scope {
  const Context* ctx;
  std::string target_q, source_q, target_name;
  std::vector<std::string> target_columns, source_columns;
  std::vector<std::string> target_columns_read;  // those a joined batch holds
  SchemaPtr target_schema;                       // every column of the target

  ExprPtr Resolve(const ExprPtr& expr) const {
    return MapColumns(expr, [&](const Expr& c) -> ExprPtr {
      const auto& p = c.path;
      if (p.size() >= 2 && (p[0] == target_q || p[0] == target_name) && Has(target_columns, p[1]))
        return Renamed(c, target_q, 1);
      if (p.size() >= 2 && p[0] == source_q && Has(source_columns, p[1])) return Renamed(c, source_q, 1);
      if (p.size() >= 2 && (p[0] == target_q || p[0] == target_name || p[0] == source_q))
        ctx->Fail(c.position, fmt::format("'{}' has no column '{}'", p[0], p[1]));
      bool in_target = Has(target_columns, p[0]), in_source = Has(source_columns, p[0]);
      if (in_target && in_source)
        ctx->Fail(c.position, fmt::format("column reference '{}' is ambiguous: write {}.{} or {}.{}", p[0], target_q,
                                          p[0], source_q, p[0]));
      if (in_target) return Renamed(c, target_q, 0);
      if (in_source) return Renamed(c, source_q, 0);
      return nullptr;  // the binder reports the unknown column
    });
  }

  // A WHEN NOT MATCHED BY SOURCE expression: there is no source row, so a bare name is a
  // target column and a source-qualified one is refused.
  ExprPtr ResolveBySource(const ExprPtr& expr) const {
    Scope target_only = *this;
    target_only.source_columns.clear();
    MapColumns(expr, [&](const Expr& c) -> ExprPtr {
      if (c.path.size() >= 2 && c.path[0] == source_q)
        ctx->Fail(c.position, fmt::format("WHEN NOT MATCHED BY SOURCE has no source row: '{}.{}' cannot be read there",
                                          c.path[0], c.path[1]));
      return nullptr;
    });
    return target_only.Resolve(expr);
  }

  // Resolve or ResolveBySource, as the clause needs.
  ExprPtr ResolveIn(const MergeClause& clause, const ExprPtr& expr) const {
    return clause.by_source ? ResolveBySource(expr) : Resolve(expr);
  }

  static ExprPtr Renamed(const Expr& c, const std::string& q, size_t skip) {
    std::vector<std::string> path = {q + "." + c.path[skip]};
    path.insert(path.end(), c.path.begin() + long(skip) + 1, c.path.end());
    return RenamedColumn(c, std::move(path));
  }
};

// Target and source columns side by side for the given row pairs (a null list leaves
// that side out).
RecordBatchPtr JoinRows(const Scope& scope, const RecordBatch& target, const RecordBatch& source,
                        const std::vector<int64_t>* target_rows, const std::vector<int64_t>* source_rows) {
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  int64_t n = int64_t(source_rows ? source_rows->size() : target_rows->size());
  if (target_rows) {
    for (const auto& name : scope.target_columns_read) {
      const auto& col = target.column(name);
      fields.push_back(Field::Make(scope.target_q + "." + name, col->type));
      columns.push_back(Take(*col, *target_rows));
    }
  }
  if (source_rows) {
    for (const auto& name : scope.source_columns) {
      const auto& col = source.column(name);
      fields.push_back(Field::Make(scope.source_q + "." + name, col->type));
      columns.push_back(Take(*col, *source_rows));
    }
  }
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, n);
}

// An equality target.col = source.col (one term of the ON clause), usable as a hash-join key.
void EquiKey(const ExprPtr& e, const Scope& scope, std::vector<std::pair<std::string, std::string>>& keys) {
  if (e->kind != ExprKind::kBinary || e->binary_op != BinaryOp::kEq) return;
  const auto& l = e->args[0];
  const auto& r = e->args[1];
  if (l->kind != ExprKind::kColumn || r->kind != ExprKind::kColumn || l->path.size() != 1 || r->path.size() != 1)
    return;
  std::string tp = scope.target_q + ".", sp = scope.source_q + ".";
  auto strip = [](const std::string& s, const std::string& prefix) { return s.substr(prefix.size()); };
  if (l->path[0].rfind(tp, 0) == 0 && r->path[0].rfind(sp, 0) == 0)
    keys.push_back({strip(l->path[0], tp), strip(r->path[0], sp)});
  else if (l->path[0].rfind(sp, 0) == 0 && r->path[0].rfind(tp, 0) == 0)
    keys.push_back({strip(r->path[0], tp), strip(l->path[0], sp)});
}

// Whether equal values of these types have equal keys (AppendKey in the form chosen below).
bool HashableTogether(const DataType& a, const DataType& b) {
  return a.Equals(b) || (a.is_integer() && b.is_integer()) || (a.is_string() && b.is_string());
}

// Types of the source columns that meet a target column: compared with it (ON, WHEN
// conditions) or assigned to it (SET, INSERT VALUES). A file source reads those columns
// as the target's types, so that its text is read against the target's schema; its
// other columns are inferred. The first meeting wins.
SchemaPtr SourceColumnTypes(const MergeStmt& stmt, const Schema& target) {
  const std::string tq = stmt.target.qualifier(), sq = stmt.source.qualifier();
  std::vector<FieldPtr> fields;
  auto add = [&](const std::string& name, const Field* to) {
    if (name.empty() || !to) return;
    for (const auto& f : fields)
      if (f->name == name) return;
    fields.push_back(Field::Make(name, to->type));
  };
  // The source column `e` names: qualified by the source, or bare and not a target column.
  auto source_column = [&](const ExprPtr& e) -> std::string {
    if (!e || e->kind != ExprKind::kColumn) return "";
    const auto& p = e->path;
    if (p.size() == 2 && p[0] == sq) return p[1];
    if (p.size() == 1 && target.FieldIndex(p[0]) < 0) return p[0];
    return "";
  };
  auto target_field = [&](const std::string& name) -> const Field* {
    int i = target.FieldIndex(name);
    return i < 0 ? nullptr : target.field(size_t(i)).get();
  };
  auto target_column = [&](const ExprPtr& e) -> const Field* {
    if (!e || e->kind != ExprKind::kColumn) return nullptr;
    const auto& p = e->path;
    if (p.size() == 2 && (p[0] == tq || p[0] == stmt.target.name)) return target_field(p[1]);
    return p.size() == 1 ? target_field(p[0]) : nullptr;
  };
  std::function<void(const ExprPtr&)> comparisons = [&](const ExprPtr& e) {
    if (!e) return;
    if (e->kind == ExprKind::kBinary && IsComparison(e->binary_op)) {
      add(source_column(e->args[0]), target_column(e->args[1]));
      add(source_column(e->args[1]), target_column(e->args[0]));
    }
    for (const auto& a : e->args) comparisons(a);
  };
  comparisons(stmt.on);
  for (const auto& clause : stmt.clauses) {
    comparisons(clause.condition);
    for (const auto& s : clause.set) add(source_column(s.expr), target_field(s.column));
    for (size_t i = 0; i < clause.values.size(); ++i) {
      const Field* to = clause.columns.empty() ? (i < target.num_fields() ? target.field(i).get() : nullptr)
                        : i < clause.columns.size() ? target_field(clause.columns[i])
                                                    : nullptr;
      add(source_column(clause.values[i]), to);
    }
  }
  return std::make_shared<Schema>(std::move(fields));
}

// The target's top-level columns that `e` (resolved) reads.
void TargetColumnsRead(const ExprPtr& e, const Scope& scope, std::set<std::string>& out) {
  if (!e) return;
  const std::string prefix = scope.target_q + ".";
  if (e->kind == ExprKind::kColumn && !e->path.empty() && e->path[0].starts_with(prefix))
    out.insert(e->path[0].substr(prefix.size()));
  for (const auto& a : e->args) TargetColumnsRead(a, scope, out);
}

// The scope of a MERGE's expressions: the target's columns and the source's, each under
// its qualifier (the two qualifiers must differ).
Scope MergeScope(const Context& ctx, const MergeStmt& stmt, const SchemaPtr& target, const Schema& source) {
  Scope scope;
  scope.ctx = &ctx;
  scope.target_q = stmt.target.qualifier();
  scope.target_name = stmt.target.name;
  scope.source_q = stmt.source.qualifier();
  if (scope.target_q == scope.source_q)
    ctx.Fail(stmt.source.position, fmt::format("the source needs an alias other than '{}' (USING ... AS s)", scope.source_q));
  scope.target_columns = ColumnNames(*target);
  scope.source_columns = ColumnNames(source);
  scope.target_schema = target;
  return scope;
}

// The target columns the matching and the matched clauses read, in the target's order.
std::vector<std::string> TargetColumnsToRead(const MergeStmt& stmt, const Scope& scope, const ExprPtr& on) {
  std::set<std::string> read;
  TargetColumnsRead(on, scope, read);
  for (const auto& clause : stmt.clauses) {
    if (!clause.matched && !clause.by_source) continue;
    TargetColumnsRead(scope.ResolveIn(clause, clause.condition), scope, read);
    for (const auto& s : clause.set) TargetColumnsRead(scope.ResolveIn(clause, s.expr), scope, read);
  }
  std::vector<std::string> read_columns;
  for (const auto& name : scope.target_columns)
    if (read.count(name)) read_columns.push_back(name);
  return read_columns;
}

// The ON clause's equalities usable as hash keys: (target column, source column) pairs
// and the form each is keyed in. No keys: every pair is a candidate.
class MatchKeys {
 public:
  MatchKeys(const ExprPtr& on, const Scope& scope, const Schema& target_read, const RecordBatch& source) {
    for (const auto& term : Conjuncts(on)) EquiKey(term, scope, keys_);
    keys_.erase(std::remove_if(keys_.begin(), keys_.end(),
                               [&](const auto& k) {
                                 return !HashableTogether(*target_read.field(size_t(target_read.FieldIndex(k.first)))->type,
                                                          *source.column(k.second)->type);
                               }),
                keys_.end());
    // Integers key by their value widened (int32 meets int64), strings by their bytes,
    // floats as doubles with -0.0 as 0.0: keys equal where the ON clause's = holds.
    for (const auto& k : keys_) {
      const DataType& t = *target_read.field(size_t(target_read.FieldIndex(k.first)))->type;
      forms_.push_back(t.is_integer() ? KeyForm::kBits : t.is_string() ? KeyForm::kBytes : KeyFormOf(t));
    }
  }

  bool empty() const { return keys_.empty(); }

  // Row r's key into `out`; false when a key column is NULL (NULL never equals anything).
  bool KeyOf(const RecordBatch& b, bool is_target, int64_t r, std::string& out) const {
    out.clear();
    for (size_t i = 0; i < keys_.size(); ++i) {
      const auto& col = b.column(is_target ? keys_[i].first : keys_[i].second);
      if (col->IsNull(r)) return false;
      AppendKey(out, *col, r, forms_[i]);
    }
    return true;
  }

 private:
  std::vector<std::pair<std::string, std::string>> keys_;
  std::vector<KeyForm> forms_;
};

// The target rows the ON clause matches, a row per match (`target`), paired with their
// source rows: match i is row match_t[i] of `target` and row match_s[i] of the source.
struct Matches {
  RecordBatchPtr target;
  std::vector<int64_t> match_t, match_s;
  std::vector<bool> source_matched;  // per source row
  // The target rows no source row matches (a NULL key matches nothing), kept only when a
  // WHEN NOT MATCHED BY SOURCE clause wants them.
  RecordBatchPtr unmatched_target;
};

bool HasBySourceClause(const MergeStmt& stmt) {
  return std::any_of(stmt.clauses.begin(), stmt.clauses.end(), [](const auto& c) { return c.by_source; });
}

// Matches, batch by batch: candidate pairs by hash on the ON clause's equalities (else
// every pair), then the ON clause over them. A target row matching twice is refused.
Matches FindMatches(const Context& ctx, const MergeStmt& stmt, const Scope& scope, const ExprPtr& on,
                    RecordBatchReader& reader, const RecordBatch& source) {
  const MatchKeys keys(on, scope, *reader.schema(), source);
  std::unordered_multimap<std::string, int64_t> by_key;
  std::string key;
  for (int64_t s = 0; s < source.num_rows() && !keys.empty(); ++s)
    if (keys.KeyOf(source, false, s, key)) by_key.emplace(key, s);
  BoundExprPtr on_bound;
  std::vector<RecordBatchPtr> matched_parts;  // the matched target rows, a row per match
  std::vector<RecordBatchPtr> unmatched_parts;
  const bool keep_unmatched = HasBySourceClause(stmt);
  int64_t matched_rows = 0;
  Matches m;
  m.source_matched.assign(size_t(source.num_rows()), false);
  while (auto batch = reader.Next()) {
    std::vector<bool> t_matched(size_t(batch->num_rows()), false);
    std::vector<int64_t> cand_t, cand_s;
    for (int64_t t = 0; t < batch->num_rows(); ++t) {
      if (keys.empty()) {
        for (int64_t s = 0; s < source.num_rows(); ++s) cand_t.push_back(t), cand_s.push_back(s);
        continue;
      }
      if (!keys.KeyOf(*batch, true, t, key)) continue;
      auto [lo, hi] = by_key.equal_range(key);
      std::vector<int64_t> hits;
      for (auto it = lo; it != hi; ++it) hits.push_back(it->second);
      std::sort(hits.begin(), hits.end());
      for (int64_t s : hits) cand_t.push_back(t), cand_s.push_back(s);
    }
    if (cand_t.empty()) {
      if (keep_unmatched) unmatched_parts.push_back(batch);
      continue;
    }
    auto candidates = JoinRows(scope, *batch, source, &cand_t, &cand_s);
    if (!on_bound) on_bound = Bind(*on, *candidates->schema());
    auto on_true = EvaluatePredicate(*on_bound, *candidates);
    std::vector<int64_t> rows;
    for (size_t i = 0; i < on_true.size(); ++i) {
      if (!on_true[i]) continue;
      if (!rows.empty() && rows.back() == cand_t[i])  // a target row's candidates are adjacent
        ctx.Fail(stmt.on->position, fmt::format("a row of {} matches more than one source row; MERGE needs at most one",
                                                stmt.target.name));
      rows.push_back(cand_t[i]);
      t_matched[size_t(cand_t[i])] = true;
      m.match_t.push_back(matched_rows++);
      m.match_s.push_back(cand_s[i]);
      m.source_matched[size_t(cand_s[i])] = true;
    }
    if (!rows.empty()) matched_parts.push_back(batch->Take(rows));
    if (keep_unmatched) {
      t_matched.flip();
      unmatched_parts.push_back(batch->Filter(t_matched));
    }
  }
  if (!on_bound) {  // no candidate pair: bound anyway, so that mistakes are reported
    std::vector<int64_t> none;
    auto empty = JoinRows(scope, *RecordBatch::Concatenate(reader.schema(), {}), source, &none, &none);
    Bind(*on, *empty->schema());
  }
  m.target = RecordBatch::Concatenate(reader.schema(), matched_parts);
  if (keep_unmatched) m.unmatched_target = RecordBatch::Concatenate(reader.schema(), unmatched_parts);
  return m;
}

// The values UPDATE SET clauses assign, gathered clause by clause: per column, pieces of
// values; per (fragment, column), the cells as (offset, index into the pieces).
struct UpdatedCells {
  std::map<std::string, std::vector<ArrayPtr>> pieces;
  std::map<std::string, int64_t> piece_rows;
  std::map<uint64_t, std::map<std::string, std::vector<std::pair<uint32_t, int64_t>>>> cells;
};

// One UPDATE SET clause over the rows it won: `subset` holds them joined (a row each),
// `addresses` their row addresses; its values evaluated (bound even when there are none,
// so that mistakes are reported).
void CollectUpdate(const Context& ctx, const MergeStmt& stmt, const MergeClause& clause, const Scope& scope,
                   const RecordBatch& subset_batch, const std::vector<uint64_t>& addresses, UpdatedCells& updated) {
  const Schema& target_schema = *scope.target_schema;
  const RecordBatch* subset = &subset_batch;
  std::vector<std::string> seen;
  for (const auto& s : clause.set) {
    int f = target_schema.FieldIndex(s.column);
    if (f < 0) ctx.Fail(s.position, fmt::format("table '{}' has no column '{}'", stmt.target.name, s.column));
    if (Has(seen, s.column)) ctx.Fail(s.position, fmt::format("column '{}' is set twice", s.column));
    seen.push_back(s.column);
    const Field& field = *target_schema.field(size_t(f));
    auto bound = Bind(*Expr::Assign(scope.ResolveIn(clause, s.expr), field.type, field.name), *subset->schema());
    if (addresses.empty()) continue;
    ArrayPtr values = Evaluate(*bound, *subset);
    int64_t base = updated.piece_rows[s.column];
    updated.pieces[s.column].push_back(values);
    updated.piece_rows[s.column] += values->length;
    for (size_t r = 0; r < addresses.size(); ++r) {
      uint64_t a = addresses[r];
      updated.cells[a >> 32][s.column].push_back({uint32_t(a & 0xFFFFFFFFu), base + int64_t(r)});
    }
  }
}

// The gathered cells as each fragment's overlay columns, offsets ascending, fields in
// schema order (as data_file.fields lists them for a base file).
void AddUpdates(UpdatedCells& updated, const Schema& target_schema, table::MergeChanges& changes) {
  std::map<std::string, ArrayPtr> all_values;
  for (auto& [column, parts] : updated.pieces) all_values[column] = Concatenate(parts);
  for (auto& [fragment, by_column] : updated.cells) {
    for (auto& [column, list] : by_column) {
      std::sort(list.begin(), list.end());
      table::MergeChanges::ColumnCells c;
      c.column = column;
      std::vector<int64_t> index;
      for (const auto& [offset, i] : list) {
        c.offsets.push_back(offset);
        index.push_back(i);
      }
      c.values = Take(*all_values[column], index);
      changes.updates[fragment].push_back(std::move(c));
    }
    auto& columns = changes.updates[fragment];
    std::sort(columns.begin(), columns.end(), [&](const auto& a, const auto& b) {
      return target_schema.FieldIndex(a.column) < target_schema.FieldIndex(b.column);
    });
  }
}

// Target rows no source row matched: the first WHEN NOT MATCHED BY SOURCE clause whose
// condition holds deletes or updates the row. Updates join `updated`, so that a fragment
// gets one overlay whichever clauses set its cells.
void ApplyBySourceClauses(const Context& ctx, const MergeStmt& stmt, const Scope& scope, const RecordBatch& source,
                          const Matches& m, table::MergeChanges& changes, MergeCounts& counts,
                          UpdatedCells& updated) {
  if (!m.unmatched_target) return;
  const RecordBatch& lonely_target = *m.unmatched_target;
  const auto& addresses = lonely_target.column(kRowAddr);
  std::vector<int64_t> all(size_t(lonely_target.num_rows()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = int64_t(i);
  auto joined = JoinRows(scope, lonely_target, source, &all, nullptr);
  std::vector<bool> taken(all.size(), false);
  for (const auto& clause : stmt.clauses) {
    if (!clause.by_source) continue;
    std::vector<bool> holds(all.size(), true);
    if (clause.condition)
      holds = EvaluatePredicate(*Bind(*scope.ResolveBySource(clause.condition), *joined->schema()), *joined);
    std::vector<bool> keep(all.size(), false);
    std::vector<uint64_t> row_addresses;
    for (size_t i = 0; i < all.size(); ++i)
      if (!taken[i] && holds[i]) {
        taken[i] = keep[i] = true;
        row_addresses.push_back(addresses->values<uint64_t>()[i]);
      }
    if (clause.action == MergeClause::Action::kDelete) {
      for (uint64_t a : row_addresses) changes.deletes[a >> 32].push_back(uint32_t(a & 0xFFFFFFFFu));
      counts.deleted += row_addresses.size();
      continue;
    }
    CollectUpdate(ctx, stmt, clause, scope, *joined->Filter(keep), row_addresses, updated);
    counts.updated += row_addresses.size();
  }
}

// Matched rows: the first WHEN MATCHED clause whose condition holds wins.
void ApplyMatchedClauses(const Context& ctx, const MergeStmt& stmt, const Scope& scope, const RecordBatch& source,
                         const Matches& m, table::MergeChanges& changes, MergeCounts& counts) {
  const auto& addresses = m.target->column(kRowAddr);
  auto matched = JoinRows(scope, *m.target, source, &m.match_t, &m.match_s);
  std::vector<int> chosen(m.match_t.size(), -1);
  UpdatedCells updated;
  for (size_t k = 0; k < stmt.clauses.size(); ++k) {
    const auto& clause = stmt.clauses[k];
    if (!clause.matched) continue;
    std::vector<bool> holds(m.match_t.size(), true);
    if (clause.condition)
      holds = EvaluatePredicate(*Bind(*scope.Resolve(clause.condition), *matched->schema()), *matched);
    std::vector<int64_t> rows;
    for (size_t i = 0; i < m.match_t.size(); ++i)
      if (chosen[i] < 0 && holds[i]) {
        chosen[i] = int(k);
        rows.push_back(int64_t(i));
      }
    if (rows.empty() && clause.action != MergeClause::Action::kUpdate) continue;
    if (clause.action == MergeClause::Action::kDelete) {
      for (int64_t i : rows) {
        uint64_t a = addresses->values<uint64_t>()[m.match_t[size_t(i)]];
        changes.deletes[a >> 32].push_back(uint32_t(a & 0xFFFFFFFFu));
      }
      counts.deleted += rows.size();
      continue;
    }
    std::vector<int64_t> t_rows, s_rows;
    std::vector<uint64_t> row_addresses;
    for (int64_t i : rows) {
      t_rows.push_back(m.match_t[size_t(i)]);
      s_rows.push_back(m.match_s[size_t(i)]);
      row_addresses.push_back(addresses->values<uint64_t>()[t_rows.back()]);
    }
    CollectUpdate(ctx, stmt, clause, scope, *JoinRows(scope, *m.target, source, &t_rows, &s_rows), row_addresses,
                  updated);
    counts.updated += rows.size();
  }
  ApplyBySourceClauses(ctx, stmt, scope, source, m, changes, counts, updated);
  AddUpdates(updated, *scope.target_schema, changes);
}

// The target columns an INSERT clause fills: those it names, else all in order.
std::vector<int> InsertTargets(const Context& ctx, const MergeStmt& stmt, const MergeClause& clause,
                               const Schema& target_schema) {
  std::vector<int> targets;
  if (clause.columns.empty()) {
    for (size_t i = 0; i < target_schema.num_fields(); ++i) targets.push_back(int(i));
  } else {
    for (const auto& c : clause.columns) {
      int f = target_schema.FieldIndex(c);
      if (f < 0) ctx.Fail(clause.position, fmt::format("table '{}' has no column '{}'", stmt.target.name, c));
      targets.push_back(f);
    }
  }
  if (clause.values.size() != targets.size())
    ctx.Fail(clause.position, fmt::format("INSERT has {} value{} for {} column{}", clause.values.size(),
                                          clause.values.size() == 1 ? "" : "s", targets.size(),
                                          targets.size() == 1 ? "" : "s"));
  return targets;
}

// Source rows that matched nothing: the first WHEN NOT MATCHED clause that holds inserts.
void ApplyNotMatchedClauses(const Context& ctx, const MergeStmt& stmt, const Scope& scope, const RecordBatch& source,
                            const Matches& m, table::MergeChanges& changes, MergeCounts& counts) {
  const Schema& target_schema = *scope.target_schema;
  std::vector<int64_t> unmatched;
  for (int64_t s = 0; s < source.num_rows(); ++s)
    if (!m.source_matched[size_t(s)]) unmatched.push_back(s);
  auto lonely = JoinRows(scope, *m.target, source, nullptr, &unmatched);
  std::vector<int> taken(unmatched.size(), -1);
  for (size_t k = 0; k < stmt.clauses.size(); ++k) {
    const auto& clause = stmt.clauses[k];
    if (clause.matched || clause.by_source) continue;
    std::vector<bool> holds(unmatched.size(), true);
    if (clause.condition)
      holds = EvaluatePredicate(*Bind(*scope.Resolve(clause.condition), *lonely->schema()), *lonely);
    std::vector<bool> keep(unmatched.size(), false);
    for (size_t i = 0; i < unmatched.size(); ++i)
      if (taken[i] < 0 && holds[i]) {
        taken[i] = int(k);
        keep[i] = true;
      }
    auto rows = lonely->Filter(keep);
    const std::vector<int> targets = InsertTargets(ctx, stmt, clause, target_schema);
    std::vector<ArrayPtr> values;
    for (size_t i = 0; i < targets.size(); ++i) {
      const Field& field = *target_schema.field(size_t(targets[i]));
      values.push_back(
          Evaluate(*Bind(*Expr::Assign(scope.Resolve(clause.values[i]), field.type, field.name), *rows->schema()), *rows));
    }
    if (rows->num_rows() == 0) continue;
    changes.inserts.push_back(FillBatch(target_schema, targets, values, rows->num_rows()));
    counts.inserted += uint64_t(rows->num_rows());
  }
}

// Computes the changes of one MERGE against `ds`. The source is held; the target is
// streamed, reading only the columns the statement names, and only its matched rows are
// kept.
table::MergeChanges PlanMerge(const Context& ctx, const MergeStmt& stmt, const DatasetPtr& ds,
                              const RecordBatchPtr& given_source, MergeCounts& counts) {
  auto source = given_source ? given_source
                             : ReadSource(ctx, stmt.source, false, false, nullptr, SourceColumnTypes(stmt, *ds->schema()));
  Scope scope = MergeScope(ctx, stmt, ds->schema(), *source->schema());
  ExprPtr on = scope.Resolve(stmt.on);
  std::vector<std::string> read_columns = TargetColumnsToRead(stmt, scope, on);
  auto reader = ds->NewScan().Columns(read_columns).WithRowAddress().Open();
  scope.target_columns_read = read_columns;

  const Matches matches = FindMatches(ctx, stmt, scope, on, *reader, *source);
  table::MergeChanges changes;
  ApplyMatchedClauses(ctx, stmt, scope, *source, matches, changes, counts);
  ApplyNotMatchedClauses(ctx, stmt, scope, *source, matches, changes, counts);
  return changes;
}

}  // namespace

MergeOutcome MergeInto(const Context& ctx, const MergeStmt& stmt, const DatasetPtr& target,
                       const RecordBatchPtr& source) {
  auto state = table::StatePtrOf(target);
  MergeOutcome out;
  // Someone changed what we read or a fragment we touch: plan again on the latest version.
  auto committed = table::UntilCommitted(state, "MERGE", [&](const std::shared_ptr<const table::DatasetState>& s) {
    auto ds = table::MakeDataset(s);
    out.counts = MergeCounts{};
    table::MergeChanges changes = PlanMerge(ctx, stmt, ds, source, out.counts);
    // A table whose overlays are not enabled (one another writer made) gets moved rows.
    out.overlays_off = !changes.updates.empty() && !table::OverlaysEnabled(s->manifest);
    auto next = table::CommitMerge(ds, out.overlays_off ? table::WithoutOverlays(*s, changes) : changes);
    return next->version() == s->version() ? nullptr : table::StatePtrOf(next);
  });
  if (!committed) {
    out.dataset = target;
    return out;
  }
  out.committed = true;
  out.dataset = table::BoundOverlayLayers(table::MakeDataset(committed), &out.layers);
  return out;
}

std::string RunMerge(const Context& ctx, const MergeStmt& stmt) {
  auto target = OpenTable(ctx, stmt.target);
  const MergeOutcome out = MergeInto(ctx, stmt, target, nullptr);
  const MergeCounts& counts = out.counts;
  if (!out.committed)
    return fmt::format("MERGE {} updated, {} deleted, {} inserted; {} unchanged at version {}",
                       RowCount(counts.updated), counts.deleted, counts.inserted, stmt.target.name, target->version());
  const auto& next = out.dataset;
  std::string notice = FirstOverlayNotice(*target, *next, stmt.target.name);
  if (out.overlays_off)
    notice = OverlaysOffNotice(*target, UpdateMode::kAuto, UpdateMode::kRows, target->uri());
  return fmt::format("MERGE {} updated, {} deleted, {} inserted; {} is now at version {}{}{}", RowCount(counts.updated),
                     counts.deleted, counts.inserted, stmt.target.name, next->version(), LayerMergeNote(out.layers),
                     notice.empty() ? "" : "\n" + notice);
}

}  // namespace lancelet::sql
