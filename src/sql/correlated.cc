#include "sql/correlated.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/scalar.h"
#include "expr/cast.h"
#include "expr/type_rules.h"
#include "sql/aggregate.h"
#include "sql/spill.h"

namespace lancelet::sql {

namespace {

constexpr const char* kMarker = "__correlated";
constexpr const char* kColumnPrefix = "__subquery";

// The sources of a FROM clause, where column names resolve. A source with an alias is
// qualified by the alias only: `FROM s t` hides the name s, which an outer s may take.
struct ScopeSource {
  std::string qualifier;
  std::set<std::string> columns;
};
using Scope = std::vector<ScopeSource>;

Scope ScopeOf(const Context& ctx, const SelectStmt& stmt) {
  Scope scope;
  auto add = [&](const TableRef& ref) {
    ScopeSource source{ref.qualifier(), {}};
    const SchemaPtr schema = ref.kind == TableRef::Kind::kTable ? OpenTable(ctx, ref)->schema()
                                                                : OpenSource(ctx, ref, false, false)->schema();
    for (const auto& f : schema->fields()) source.columns.insert(f->name);
    if (ref.kind == TableRef::Kind::kTable) source.columns.insert({"_rowid", "_rowaddr"});
    scope.push_back(std::move(source));
  };
  if (stmt.from) add(*stmt.from);
  for (const auto& j : stmt.joins) add(j.table);
  return scope;
}

bool Resolves(const Scope& scope, const std::vector<std::string>& path) {
  return std::any_of(scope.begin(), scope.end(), [&](const ScopeSource& s) {
    return (path.size() >= 2 && path[0] == s.qualifier) || s.columns.count(path[0]) > 0;
  });
}

std::string PathText(const std::vector<std::string>& path) { return fmt::format("{}", fmt::join(path, ".")); }

const Expr* SubqueryOf(const Expr& e) {
  if (e.kind == ExprKind::kSubquery) return &e;
  if (e.kind == ExprKind::kIn && e.args.size() == 2 && e.args[1]->kind == ExprKind::kSubquery) return e.args[1].get();
  return nullptr;
}

const SelectStmt& StatementOf(const Expr& subquery) { return *static_cast<const SelectStmt*>(subquery.subquery.get()); }

// Tells which column references of one subquery name its outer query: those that
// resolve in none of the subquery's own sources (nor its output aliases) but in the
// outer query's. The outer sources are opened only when a name needs them.
class OuterNames {
 public:
  OuterNames(const Context& ctx, const SelectStmt& outer, std::optional<Scope>& outer_scope, const SelectStmt& inner)
      : ctx_(ctx), outer_(outer), outer_scope_(outer_scope), inner_(ScopeOf(ctx, inner)) {
    for (const auto& i : inner.items)
      if (!i.alias.empty()) aliases_.insert(i.alias);
  }
  bool IsOuter(const std::vector<std::string>& path) {
    if (Resolves(inner_, path) || aliases_.count(path[0])) return false;
    if (!outer_scope_) outer_scope_ = ScopeOf(ctx_, outer_);
    return Resolves(*outer_scope_, path);
  }
  // The outer references in `e`, each path once (not looking into nested subqueries,
  // which resolve their own names when they run).
  void Collect(const ExprPtr& e, std::vector<ExprPtr>& out) {
    if (!e) return;
    if (e->kind == ExprKind::kColumn) {
      if (!IsOuter(e->path)) return;
      const std::string text = PathText(e->path);
      for (const auto& seen : out)
        if (PathText(seen->path) == text) return;
      out.push_back(e);
      return;
    }
    for (const auto& a : e->args) Collect(a, out);
  }
  // Column references of `e` that are not outer.
  bool HasInner(const ExprPtr& e) {
    if (!e) return false;
    if (e->kind == ExprKind::kColumn) return !IsOuter(e->path);
    return std::any_of(e->args.begin(), e->args.end(), [&](const ExprPtr& a) { return HasInner(a); });
  }
  // Outer references anywhere in the statement but its WHERE.
  void CollectOutsideWhere(const SelectStmt& s, std::vector<ExprPtr>& out) {
    for (const auto& i : s.items) Collect(i.expr, out);
    for (const auto& g : s.group_by) Collect(g, out);
    Collect(s.having, out);
    Collect(s.qualify, out);
    for (const auto& o : s.order_by) Collect(o.expr, out);
    for (const auto& j : s.joins) Collect(j.on, out);
  }

 private:
  const Context& ctx_;
  const SelectStmt& outer_;
  std::optional<Scope>& outer_scope_;
  Scope inner_;
  std::set<std::string> aliases_;
};

// `stmt` with the columns named in `values` (by path) replaced by those values.
SelectStmt Substituted(const SelectStmt& stmt, const std::map<std::string, Scalar>& values) {
  auto put = [&](const ExprPtr& e) {
    return MapColumns(e, [&](const Expr& c) -> ExprPtr {
      const auto it = values.find(PathText(c.path));
      return it == values.end() ? nullptr : LiteralAt(c, it->second);
    });
  };
  SelectStmt out = stmt;
  for (auto& i : out.items) i.expr = put(i.expr);
  out.where = put(out.where);
  for (auto& g : out.group_by) g = put(g);
  out.having = put(out.having);
  out.qualify = put(out.qualify);
  for (auto& o : out.order_by) o.expr = put(o.expr);
  for (auto& j : out.joins) j.on = put(j.on);
  for (auto& part : out.union_parts) part = std::make_shared<const SelectStmt>(Substituted(*part, values));
  return out;
}

ExprPtr WithStatement(const Expr& subquery, SelectStmt stmt) {
  auto copy = std::make_shared<Expr>(subquery);
  copy->subquery = std::make_shared<const SelectStmt>(std::move(stmt));
  return copy;
}

bool Aggregates(const SelectStmt& s) {
  return !s.group_by.empty() || s.having ||
         std::any_of(s.items.begin(), s.items.end(), [](const SelectItem& i) { return ContainsAggregate(i.expr); });
}

// The key columns of a row (all valid) as one hash key, each cast to its common type.
class TupleKeys {
 public:
  void SetTypes(std::vector<TypePtr> types) {
    types_ = std::move(types);
    forms_.clear();
    for (const auto& t : types_) forms_.push_back(KeyFormOf(*t));
  }
  std::vector<ArrayPtr> Cast(const std::vector<ArrayPtr>& columns, size_t first) const {
    std::vector<ArrayPtr> out;
    for (size_t i = 0; i < types_.size(); ++i) {
      const ArrayPtr& c = columns[first + i];
      out.push_back(c->type->Equals(*types_[i]) ? c : CastArray(*c, types_[i]));
    }
    return out;
  }
  // Row r's key; false when a key is NULL (no equality holds then).
  bool Of(const std::vector<ArrayPtr>& keys, int64_t r, std::string& out) const {
    out.clear();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i]->IsNull(r)) return false;
      AppendKey(out, *keys[i], r, forms_[i]);
    }
    return true;
  }

 private:
  std::vector<TypePtr> types_;
  std::vector<KeyForm> forms_;
};

// A subquery correlated only by equalities in its WHERE, run once as `derived`: its rows
// carry the value (IN and scalar subqueries: column 0) and the inner keys after it.
class HashedSubquery final : public CorrelatedSubquery {
 public:
  enum class Kind { kExists, kIn, kValue };
  // `residual` (kExists only; null when none): what an inner row of a key must also hold
  // for with an outer row, over the derived rows' __in<j> columns (after the keys) and the
  // marker's last `residual_outer` values as __out<j>.
  HashedSubquery(const Context& ctx, const Expr& node, Kind kind, SelectStmt derived, size_t keys,
                 std::optional<SelectStmt> over_no_rows, std::string equalities, ExprPtr residual = nullptr,
                 size_t residual_inner = 0, size_t residual_outer = 0, std::string residual_text = "")
      : ctx_(ctx), position_(node.position), negated_(node.negated), kind_(kind), derived_(std::move(derived)),
        keys_(keys), over_no_rows_(std::move(over_no_rows)), equalities_(std::move(equalities)),
        residual_(std::move(residual)), residual_inner_(residual_inner), residual_outer_(residual_outer),
        residual_text_(std::move(residual_text)) {}

  std::string Describe() const override {
    return fmt::format("runs once, its rows hashed on {} ({}); each outer row looks its key up", equalities_,
                       kind_ == Kind::kExists ? (residual_ ? "a semi join, each pair of a key also checked for " +
                                                                 residual_text_
                                                           : std::string("a semi join"))
                       : kind_ == Kind::kIn   ? "a value set per key"
                                              : "a value per key");
  }

  TypePtr type() const override { return type_; }

  void Prepare(const std::vector<TypePtr>& outer_types) override {
    auto rows = OpenSelect(ctx_, derived_);
    const Schema& schema = *rows->schema();
    first_key_ = kind_ == Kind::kExists ? 0 : 1;
    if (residual_) {
      std::vector<FieldPtr> pair;
      for (size_t j = 0; j < residual_inner_; ++j) pair.push_back(Field::Make(fmt::format("__in{}", j), schema.field(keys_ + j)->type));
      for (size_t j = 0; j < residual_outer_; ++j)
        pair.push_back(Field::Make(fmt::format("__out{}", j), outer_types[outer_types.size() - residual_outer_ + j]));
      pair_schema_ = std::make_shared<Schema>(pair);
      residual_bound_ = Bind(*residual_, *pair_schema_);
    }
    if (schema.num_fields() != first_key_ + keys_ + residual_inner_)
      ctx_.Fail(position_, fmt::format("a subquery used as a value returns one column, not {}",
                                       schema.num_fields() - keys_));
    derived_schema_ = rows->schema();
    std::vector<TypePtr> key_types;
    for (size_t i = 0; i < keys_; ++i) key_types.push_back(Common(schema.field(first_key_ + i)->type, outer_types[i]));
    keys_of_.SetTypes(key_types);
    type_ = kind_ == Kind::kValue ? schema.field(0)->type : DataType::Bool();
    if (kind_ == Kind::kIn) {
      value_type_ = Common(schema.field(0)->type, outer_types[keys_]);
      value_form_ = KeyFormOf(*value_type_);
    }
    if (kind_ == Kind::kValue) {
      // The value of a key no inner row has: the aggregate over no rows, else NULL.
      missing_ = MakeNullArray(type_, 1);
      if (over_no_rows_) {
        // Over sources that give no rows: its FROM is never read (a join of its tables
        // with a false WHERE would still pair every row).
        Context no_rows = ctx_;
        no_rows.schema_only = true;
        const RecordBatchPtr none = RunSelect(no_rows, *over_no_rows_);
        if (none->num_rows() == 1)
          missing_ = none->column(0)->type->Equals(*type_) ? none->column(0) : CastArray(*none->column(0), type_);
      }
    }
    const uint64_t budget = uint64_t(std::max<int64_t>(ctx_.memory_budget, 1)) / 2;
    while (auto batch = rows->Next()) {
      AddRows(batch);
      if (held_bytes_ > budget) {
        Partition(std::move(rows));
        return;
      }
    }
    FinishTables();
  }

  bool partitioned() const override { return !partitions_.empty(); }

  std::vector<size_t> PartitionsOf(const std::vector<ArrayPtr>& outer, int64_t rows) const override {
    const auto keys = keys_of_.Cast(outer, 0);  // the keys come first; an IN's x after them is not read
    std::vector<size_t> partitions(size_t(rows), 0);  // a NULL key matches nothing: any partition
    std::string key;
    for (int64_t r = 0; r < rows; ++r)
      if (keys_of_.Of(keys, r, key)) partitions[size_t(r)] = SpillPartitionOf(std::hash<std::string_view>{}(key), 0);
    return partitions;
  }

  void Load(size_t partition) override {
    ClearTables();
    auto rows = partitions_[partition]->Read();
    while (auto batch = rows->Next()) AddRows(batch);
    FinishTables();
  }

  ArrayPtr Values(const std::vector<ArrayPtr>& outer, int64_t rows) override {
    if (residual_) return ExistsWithResidual(outer, rows);
    const auto keys = keys_of_.Cast(outer, 0);
    std::string key;
    if (kind_ == Kind::kValue) {
      const int64_t missing = values_->length - 1;
      std::vector<int64_t> take(size_t(rows), missing);
      for (int64_t r = 0; r < rows; ++r) {
        if (!keys_of_.Of(keys, r, key)) continue;
        const auto group = groups_.Find(key);
        if (!group) continue;
        if (row_of_group_[*group] == kMany)
          ctx_.Fail(position_, "a subquery used as a value returned more than one row for an outer row; it may "
                               "return at most one");
        take[size_t(r)] = row_of_group_[*group];
      }
      return Take(*values_, take);
    }
    BoolBuilder out(DataType::Bool());
    ArrayPtr x;
    if (kind_ == Kind::kIn) x = outer[keys_]->type->Equals(*value_type_) ? outer[keys_] : CastArray(*outer[keys_], value_type_);
    for (int64_t r = 0; r < rows; ++r) {
      const std::optional<uint32_t> group = keys_of_.Of(keys, r, key) ? groups_.Find(key) : std::nullopt;
      if (kind_ == Kind::kExists) {
        out.Append(group.has_value());
        continue;
      }
      // x IN (the group's values): false for no values, NULL for a NULL x or when only a
      // NULL value could equal it.
      std::optional<bool> in = false;
      if (group) {
        if (x->IsNull(r)) in.reset();
        else if (members_.Find(MemberKey(*group, *x, r))) in = true;
        else if (group_has_null_[*group]) in.reset();
      }
      if (!in) out.AppendNull();
      else out.Append(*in != negated_);
    }
    return out.Finish();
  }

 private:
  static constexpr int64_t kMany = -1;

  // EXISTS with a residual: true for an outer row when an inner row of its key holds the
  // residual with it; the pairs of a batch are checked at once.
  ArrayPtr ExistsWithResidual(const std::vector<ArrayPtr>& outer, int64_t rows) {
    const auto keys = keys_of_.Cast(outer, 0);
    std::string key;
    std::vector<int64_t> inner_rows, outer_rows;
    for (int64_t r = 0; r < rows; ++r) {
      const std::optional<uint32_t> group = keys_of_.Of(keys, r, key) ? groups_.Find(key) : std::nullopt;
      if (!group) continue;
      for (const int64_t i : rows_of_group_[*group]) {
        inner_rows.push_back(i);
        outer_rows.push_back(r);
      }
    }
    std::vector<bool> found(size_t(rows), false);
    if (!inner_rows.empty()) {
      std::vector<ArrayPtr> columns;
      for (size_t j = 0; j < residual_inner_; ++j) columns.push_back(Take(*held_->column(keys_ + j), inner_rows));
      for (size_t j = 0; j < residual_outer_; ++j) {
        const ArrayPtr& o = outer[outer.size() - residual_outer_ + j];
        columns.push_back(Take(*o, outer_rows));
      }
      const RecordBatch pairs(pair_schema_, std::move(columns), int64_t(inner_rows.size()));
      for (const int64_t p : EvaluateSelection(*residual_bound_, pairs)) found[size_t(outer_rows[size_t(p)])] = true;
    }
    BoolBuilder out(DataType::Bool());
    for (int64_t r = 0; r < rows; ++r) out.Append(found[size_t(r)]);
    return out.Finish();
  }

  // Adds the derived rows of `batch` to the tables.
  void AddRows(const RecordBatchPtr& batch) {
    const auto keys = keys_of_.Cast(batch->columns(), first_key_);
    ArrayPtr value = kind_ == Kind::kExists ? nullptr : batch->column(0);
    if (kind_ == Kind::kIn && !value->type->Equals(*value_type_)) value = CastArray(*value, value_type_);
    std::string key;
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      if (!keys_of_.Of(keys, r, key)) continue;
      const auto [group, fresh] = groups_.Number(key);
      // A key's slots in the numbering (at most half full) and its bytes.
      if (fresh) held_bytes_ += 2 * sizeof(uint64_t) * 2 + key.size() + 8;
      if (residual_) {
        if (fresh) rows_of_group_.emplace_back();
        rows_of_group_[group].push_back(held_rows_ + r);
        held_bytes_ += sizeof(int64_t);
      } else if (kind_ == Kind::kValue) {
        if (fresh) row_of_group_.push_back(held_rows_ + r);
        else row_of_group_[group] = kMany;
      } else if (kind_ == Kind::kIn) {
        if (fresh) group_has_null_.push_back(false);
        if (value->IsNull(r)) {
          group_has_null_[group] = true;
          continue;
        }
        const std::string member = MemberKey(group, *value, r);
        if (members_.Number(member).second) held_bytes_ += 32 + member.size();
      }
    }
    if (kind_ == Kind::kValue) {
      values_parts_.push_back(value);
      held_bytes_ += BufferBytes(*batch) / (keys_ + 1);  // about the value column's share
    }
    if (residual_) {
      held_parts_.push_back(batch);
      held_bytes_ += BufferBytes(*batch);
    }
    held_rows_ += batch->num_rows();
  }
  void FinishTables() {
    if (residual_) {
      held_ = held_parts_.empty() ? nullptr : RecordBatch::Concatenate(derived_schema_, held_parts_);
      held_parts_.clear();
    }
    if (kind_ != Kind::kValue) return;
    values_parts_.push_back(missing_);
    values_ = Concatenate(values_parts_);
    values_parts_.clear();
  }
  void ClearTables() {
    groups_ = KeyNumbering();
    members_ = KeyNumbering();
    row_of_group_.clear();
    rows_of_group_.clear();
    held_parts_.clear();
    held_.reset();
    group_has_null_.clear();
    values_parts_.clear();
    values_.reset();
    held_rows_ = 0;
    held_bytes_ = 0;
  }
  // Past the budget: every derived row, from the first, goes to the partition of its key
  // (rows with a NULL key match nothing and are dropped).
  void Partition(std::unique_ptr<RecordBatchReader> rest) {
    ClearTables();
    for (size_t p = 0; p < kSpillPartitions; ++p)
      partitions_.push_back(std::make_unique<SpillFile>(*derived_schema_, "a correlated subquery's rows"));
    rest.reset();
    auto rows = OpenSelect(ctx_, derived_);
    std::string key;
    while (auto batch = rows->Next()) {
      const auto keys = keys_of_.Cast(batch->columns(), first_key_);
      std::vector<std::vector<int64_t>> of(kSpillPartitions);
      for (int64_t r = 0; r < batch->num_rows(); ++r)
        if (keys_of_.Of(keys, r, key)) of[SpillPartitionOf(std::hash<std::string_view>{}(key), 0)].push_back(r);
      for (size_t p = 0; p < kSpillPartitions; ++p)
        if (!of[p].empty()) partitions_[p]->Write(*batch->Take(of[p]));
    }
  }

  TypePtr Common(const TypePtr& inner, const TypePtr& outer) const {
    TypePtr common = CommonType(inner, outer);
    if (!common)
      ctx_.Fail(position_, fmt::format("a correlated subquery compares {} with {}", inner->ToString(), outer->ToString()));
    return common;
  }
  std::string MemberKey(uint32_t group, const ArrayData& value, int64_t r) const {
    std::string key(reinterpret_cast<const char*>(&group), sizeof group);
    AppendKey(key, value, r, value_form_);
    return key;
  }

  const Context& ctx_;
  int position_;
  bool negated_;
  Kind kind_;
  SelectStmt derived_;
  size_t keys_;
  std::optional<SelectStmt> over_no_rows_;
  std::string equalities_;  // the correlation, as written
  TypePtr type_, value_type_;
  KeyForm value_form_ = KeyForm::kText;
  TupleKeys keys_of_;
  size_t first_key_ = 0;                // the derived rows' first key column
  SchemaPtr derived_schema_;
  KeyNumbering groups_;                 // the inner key tuples
  std::vector<int64_t> row_of_group_;   // kValue: the group's row of values_, or kMany
  std::vector<ArrayPtr> values_parts_;  // kValue: the values read so far
  ArrayPtr values_;                     // kValue: every row's value, then the missing key's
  ArrayPtr missing_;                    // kValue: the value of a key without rows
  std::vector<bool> group_has_null_;    // kIn
  KeyNumbering members_;                // kIn: (group, value) pairs
  int64_t held_rows_ = 0;
  uint64_t held_bytes_ = 0;             // about what the tables take
  std::vector<std::unique_ptr<SpillFile>> partitions_;  // past the budget
  ExprPtr residual_;                    // EXISTS: what a key's inner row must also hold for
  size_t residual_inner_, residual_outer_;
  std::string residual_text_;           // as written
  SchemaPtr pair_schema_;               // __in<j> then __out<j>
  BoundExprPtr residual_bound_;
  std::vector<std::vector<int64_t>> rows_of_group_;  // with a residual: each key's rows of held_
  std::vector<RecordBatchPtr> held_parts_;
  RecordBatchPtr held_;                 // with a residual: every derived row
};

// Any other correlated subquery: run for each distinct combination of the outer values
// it names (the marker's expressions: the outer column references, then an IN's left
// side), with those values as literals.
class RepeatedSubquery final : public CorrelatedSubquery {
 public:
  RepeatedSubquery(const Context& ctx, ExprPtr node, std::vector<std::string> paths)
      : ctx_(ctx), node_(std::move(node)), paths_(std::move(paths)) {}

  TypePtr type() const override { return type_; }

  std::string Describe() const override {
    return fmt::format("runs once per distinct value of {}", fmt::join(paths_, ", "));
  }

  void Prepare(const std::vector<TypePtr>& outer_types) override {
    for (const auto& t : outer_types) forms_.push_back(KeyFormOf(*t));
    if (node_->kind != ExprKind::kSubquery || node_->function == "exists") {
      type_ = DataType::Bool();
      return;
    }
    // The result's type, from the statement planned with NULLs of the outer types.
    std::map<std::string, Scalar> nulls;
    for (size_t i = 0; i < paths_.size(); ++i) nulls[paths_[i]] = Scalar::Null(outer_types[i]);
    const SchemaPtr schema = OpenSelect(ctx_, Substituted(StatementOf(*node_), nulls))->schema();
    if (schema->num_fields() != 1)
      ctx_.Fail(node_->position, fmt::format("a subquery used as a value returns one column, not {}",
                                             schema->num_fields()));
    type_ = schema->field(0)->type;
  }

  ArrayPtr Values(const std::vector<ArrayPtr>& outer, int64_t rows) override {
    auto out = ArrayBuilder::Make(type_);
    std::string key;
    for (int64_t r = 0; r < rows; ++r) {
      key.clear();
      for (size_t i = 0; i < outer.size(); ++i) AppendKey(key, *outer[i], r, forms_[i]);
      const auto [number, fresh] = seen_.Number(key);
      if (fresh) results_.push_back(Compute(outer, r));
      out->AppendScalar(results_[number]);
    }
    return out->Finish();
  }

 private:
  Scalar Compute(const std::vector<ArrayPtr>& outer, int64_t r) const {
    std::map<std::string, Scalar> values;
    for (size_t i = 0; i < paths_.size(); ++i) values[paths_[i]] = GetScalar(*outer[i], r);
    ExprPtr node;
    if (node_->kind == ExprKind::kSubquery) {
      node = WithStatement(*node_, Substituted(StatementOf(*node_), values));
    } else {  // x IN (subquery): x's value is the last outer value
      auto in = std::make_shared<Expr>(*node_);
      in->args = {LiteralAt(*node_->args[0], GetScalar(*outer.back(), r)),
                  WithStatement(*node_->args[1], Substituted(StatementOf(*node_->args[1]), values))};
      node = in;
    }
    return GetScalar(*EvaluateOn(WithSubqueryValues(ctx_, node), *EmptyRowsBatch(1)), 0);
  }

  const Context& ctx_;
  ExprPtr node_;
  std::vector<std::string> paths_;
  std::vector<KeyForm> forms_;
  TypePtr type_;
  KeyNumbering seen_;
  std::vector<Scalar> results_;  // by the number seen_ gives the outer values
};

ExprPtr Marker(const Expr& at, size_t k, const std::vector<ExprPtr>& outer) {
  auto node = std::make_shared<Expr>();
  node->kind = ExprKind::kCall;
  node->function = kMarker;
  node->position = at.position;
  node->source = at.source;
  node->args.push_back(Expr::Literal(Scalar{DataType::Int64(), int64_t(k)}));
  node->args.insert(node->args.end(), outer.begin(), outer.end());
  return node;
}

// `term` over __in<j> and __out<j> columns in place of its inner and outer column
// references, which are added to `inner` and `outer` (each text once).
ExprPtr ResidualTerm(const ExprPtr& term, OuterNames& names, std::vector<ExprPtr>& inner,
                     std::vector<ExprPtr>& outer) {
  auto slot = [](std::vector<ExprPtr>& list, const Expr& c, const char* prefix) {
    const std::string text = PathText(c.path);
    size_t j = 0;
    while (j < list.size() && PathText(list[j]->path) != text) ++j;
    if (j == list.size()) list.push_back(std::make_shared<Expr>(c));
    return Expr::Column(fmt::format("{}{}", prefix, j));
  };
  return MapColumns(term, [&](const Expr& c) -> ExprPtr {
    return names.IsOuter(c.path) ? slot(outer, c, "__out") : slot(inner, c, "__in");
  });
}

// Plans `node` (a subquery, or x IN a subquery) when it is correlated: the marker that
// stands for it, or null when it names no outer column.
ExprPtr PlanCorrelated(const Context& ctx, const SelectStmt& outer, std::optional<Scope>& outer_scope,
                       const ExprPtr& node, Correlations& out) {
  const Expr& sub = *SubqueryOf(*node);
  const SelectStmt& q = StatementOf(sub);
  std::vector<ExprPtr> refs, outside;
  std::vector<std::pair<ExprPtr, ExprPtr>> equalities;  // (inner, outer)
  std::vector<ExprPtr> rest;                            // the WHERE's other terms
  // Terms that mix inner and outer columns otherwise (l2.s <> l1.s), rewritten over
  // __in<j> (residual_inner[j]) and __out<j> (residual_outer[j]).
  std::vector<ExprPtr> residual, residual_inner, residual_outer;
  std::vector<std::string> residual_written;
  bool hashable = q.union_parts.empty() && !q.limit && q.offset == 0;
  // A UNION's parts each resolve their own names.
  std::vector<const SelectStmt*> parts = {&q};
  if (!q.union_parts.empty()) {
    parts.clear();
    for (const auto& p : q.union_parts) parts.push_back(p.get());
  }
  for (const SelectStmt* part : parts) {
    OuterNames names(ctx, outer, outer_scope, *part);
    names.CollectOutsideWhere(*part, outside);
    for (const auto& term : Conjuncts(part->where)) {
      std::vector<ExprPtr> in_term;
      names.Collect(term, in_term);
      for (const auto& r : in_term) names.Collect(r, refs);
      if (in_term.empty()) {
        rest.push_back(term);
        continue;
      }
      const bool eq = term->kind == ExprKind::kBinary && term->binary_op == BinaryOp::kEq;
      auto pure_outer = [&](const ExprPtr& e) {
        std::vector<ExprPtr> o;
        names.Collect(e, o);
        return !o.empty() && !names.HasInner(e);
      };
      auto pure_inner = [&](const ExprPtr& e) {
        std::vector<ExprPtr> o;
        names.Collect(e, o);
        return o.empty() && names.HasInner(e);
      };
      if (eq && pure_inner(term->args[0]) && pure_outer(term->args[1])) {
        equalities.push_back({term->args[0], term->args[1]});
      } else if (eq && pure_outer(term->args[0]) && pure_inner(term->args[1])) {
        equalities.push_back({term->args[1], term->args[0]});
      } else if (parts.size() == 1) {
        // Evaluated per pair of an outer row and an inner row of its key (EXISTS only).
        residual.push_back(ResidualTerm(term, names, residual_inner, residual_outer));
        residual_written.push_back(ToString(*term));
      } else {
        hashable = false;
      }
    }
    for (const auto& r : outside) names.Collect(r, refs);
  }
  if (refs.empty() && outside.empty()) return nullptr;
  hashable &= outside.empty();

  const size_t k = out.size();
  const bool in = node->kind == ExprKind::kIn;
  const bool exists = !in && sub.function == "exists";
  // A residual needs a key to narrow the pairs, and an EXISTS to ask of them.
  if (!residual.empty() && (!exists || equalities.empty() || Aggregates(q))) hashable = false;
  if (hashable && !((exists || in) && Aggregates(q)) && !(Aggregates(q) && q.group_by.empty() && q.having)) {
    SelectStmt derived = q;
    derived.where = nullptr;
    for (const auto& t : rest) AndOnto(derived.where, t);
    derived.order_by.clear();
    std::vector<SelectItem> keys;
    std::vector<ExprPtr> outer_sides;
    for (size_t i = 0; i < equalities.size(); ++i) {
      keys.push_back({equalities[i].first, fmt::format("__key{}", i)});
      outer_sides.push_back(equalities[i].second);
    }
    std::optional<SelectStmt> over_no_rows;
    if (exists) {  // the key table keeps each key once, so the rows need no DISTINCT
      derived.items = keys;
      for (size_t j = 0; j < residual_inner.size(); ++j)  // the inner values the residual reads
        derived.items.push_back({residual_inner[j], fmt::format("__in{}", j)});
    } else {
      derived.items.insert(derived.items.end(), keys.begin(), keys.end());
      if (Aggregates(q)) {
        if (q.group_by.empty()) {  // one row per key, and a key without rows gets the empty aggregate
          SelectStmt none = q;
          none.where = Expr::Literal(Scalar{DataType::Bool(), false});
          over_no_rows = std::move(none);
        }
        for (const auto& key : keys) derived.group_by.push_back(key.expr);
      }
    }
    if (in) outer_sides.push_back(node->args[0]);
    outer_sides.insert(outer_sides.end(), residual_outer.begin(), residual_outer.end());
    const auto kind = exists ? HashedSubquery::Kind::kExists : in ? HashedSubquery::Kind::kIn : HashedSubquery::Kind::kValue;
    std::vector<std::string> written;
    for (const auto& [inner, outer_side] : equalities)
      written.push_back(fmt::format("{} = {}", ToString(*inner), ToString(*outer_side)));
    ExprPtr checked;
    for (const auto& t : residual) AndOnto(checked, t);
    out.push_back(std::make_unique<HashedSubquery>(ctx, *node, kind, std::move(derived), equalities.size(),
                                                   std::move(over_no_rows), fmt::format("{}", fmt::join(written, " AND ")),
                                                   std::move(checked), residual_inner.size(), residual_outer.size(),
                                                   fmt::format("{}", fmt::join(residual_written, " AND "))));
    return Marker(*node, k, outer_sides);
  }
  std::vector<std::string> paths;
  for (const auto& r : refs) paths.push_back(PathText(r->path));
  std::vector<ExprPtr> marker_args = refs;
  if (in) marker_args.push_back(node->args[0]);
  out.push_back(std::make_unique<RepeatedSubquery>(ctx, node, std::move(paths)));
  return Marker(*node, k, marker_args);
}

// Replaces each marker in `e` by the column of its subquery, recording its outer
// expressions (mapped by `resolve`) in args[k].
ExprPtr ReplaceMarkers(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& resolve,
                       std::vector<std::optional<std::vector<ExprPtr>>>& args) {
  if (!e) return e;
  if (e->kind == ExprKind::kCall && e->function == kMarker) {
    const size_t k = size_t(e->args[0]->literal.as_int());
    std::vector<ExprPtr> outer;
    for (size_t i = 1; i < e->args.size(); ++i) outer.push_back(resolve(e->args[i]));
    args[k] = std::move(outer);
    auto column = std::make_shared<Expr>(*e);
    column->kind = ExprKind::kColumn;
    column->function.clear();
    column->args.clear();
    column->path = {CorrelatedColumnName(k)};
    return column;
  }
  bool changed = false;
  std::vector<ExprPtr> replaced;
  for (const auto& a : e->args) {
    replaced.push_back(ReplaceMarkers(a, resolve, args));
    changed |= replaced.back() != a;
  }
  if (!changed) return e;
  auto copy = std::make_shared<Expr>(*e);
  copy->args = std::move(replaced);
  return copy;
}

// Appends one correlated subquery's column. In memory, batch by batch; a partitioned
// subquery first has every input row, with its outer values, split to disk by the
// partition of its key, then each partition's rows looked up in turn.
class CorrelatedReader final : public RecordBatchReader {
 public:
  CorrelatedReader(std::unique_ptr<RecordBatchReader> input, std::unique_ptr<CorrelatedSubquery> plan,
                   std::vector<BoundExprPtr> args, SchemaPtr schema)
      : input_(std::move(input)), plan_(std::move(plan)), args_(std::move(args)), schema_(std::move(schema)) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (!plan_->partitioned()) {
      auto batch = input_->Next();
      if (!batch) return nullptr;
      std::vector<ArrayPtr> outer;
      for (const auto& a : args_) outer.push_back(Evaluate(*a, *batch));
      return WithValues(*batch, outer);
    }
    if (outer_parts_.empty()) SplitOuterRows();
    while (part_ < outer_parts_.size()) {
      if (!part_rows_) {
        plan_->Load(part_);
        part_rows_ = outer_parts_[part_]->Read();
      }
      if (auto batch = part_rows_->Next()) {
        // The input's columns, then the outer values.
        const size_t n = input_->schema()->num_fields();
        std::vector<ArrayPtr> outer(batch->columns().begin() + long(n), batch->columns().end());
        std::vector<ArrayPtr> columns(batch->columns().begin(), batch->columns().begin() + long(n));
        return WithValues(RecordBatch(input_->schema(), std::move(columns), batch->num_rows()), outer);
      }
      part_rows_.reset();
      ++part_;
    }
    return nullptr;
  }

 private:
  RecordBatchPtr WithValues(const RecordBatch& batch, const std::vector<ArrayPtr>& outer) {
    std::vector<ArrayPtr> columns = batch.columns();
    columns.push_back(plan_->Values(outer, batch.num_rows()));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), batch.num_rows());
  }

  void SplitOuterRows() {
    std::vector<FieldPtr> fields = input_->schema()->fields();
    for (size_t i = 0; i < args_.size(); ++i) fields.push_back(Field::Make(fmt::format("__outer{}", i), args_[i]->type));
    const Schema spilled(fields);
    for (size_t p = 0; p < kSpillPartitions; ++p)
      outer_parts_.push_back(std::make_unique<SpillFile>(spilled, "the rows before a correlated subquery"));
    const auto schema = std::make_shared<Schema>(fields);
    while (auto batch = input_->Next()) {
      std::vector<ArrayPtr> columns = batch->columns();
      std::vector<ArrayPtr> outer;
      for (const auto& a : args_) outer.push_back(Evaluate(*a, *batch));
      columns.insert(columns.end(), outer.begin(), outer.end());
      const RecordBatch rows(schema, std::move(columns), batch->num_rows());
      std::vector<std::vector<int64_t>> of(kSpillPartitions);
      const std::vector<size_t> partitions = plan_->PartitionsOf(outer, batch->num_rows());
      for (int64_t r = 0; r < batch->num_rows(); ++r) of[partitions[size_t(r)]].push_back(r);
      for (size_t p = 0; p < kSpillPartitions; ++p)
        if (!of[p].empty()) outer_parts_[p]->Write(*rows.Take(of[p]));
    }
  }

  std::unique_ptr<RecordBatchReader> input_;
  std::unique_ptr<CorrelatedSubquery> plan_;
  std::vector<BoundExprPtr> args_;
  SchemaPtr schema_;
  std::vector<std::unique_ptr<SpillFile>> outer_parts_;  // partitioned: the input rows
  size_t part_ = 0;
  std::unique_ptr<RecordBatchReader> part_rows_;
};

}  // namespace

std::string CorrelatedColumnName(size_t k) { return fmt::format("{}{}", kColumnPrefix, k); }
bool IsCorrelatedColumnName(const std::string& name) { return name.rfind(kColumnPrefix, 0) == 0; }

bool HasCorrelatedMarker(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::kCall && e->function == kMarker) return true;
  return std::any_of(e->args.begin(), e->args.end(), HasCorrelatedMarker);
}

SelectStmt MarkCorrelated(const Context& ctx, const SelectStmt& stmt, Correlations& out) {
  std::optional<Scope> outer_scope;
  std::function<ExprPtr(const ExprPtr&)> mark = [&](const ExprPtr& e) -> ExprPtr {
    if (!e) return e;
    if (SubqueryOf(*e))
      if (ExprPtr marker = PlanCorrelated(ctx, stmt, outer_scope, e, out)) return marker;
    if (e->kind == ExprKind::kSubquery) return e;
    bool changed = false;
    std::vector<ExprPtr> args;
    for (const auto& a : e->args) {
      const bool in_list = e->kind == ExprKind::kIn && a->kind == ExprKind::kSubquery;  // uncorrelated, planned above
      args.push_back(in_list ? a : mark(a));
      changed |= args.back() != a;
    }
    if (!changed) return e;
    auto copy = std::make_shared<Expr>(*e);
    copy->args = std::move(args);
    return copy;
  };
  SelectStmt marked = stmt;
  marked.where = mark(stmt.where);
  for (auto& i : marked.items) i.expr = mark(i.expr);
  for (auto& o : marked.order_by) o.expr = mark(o.expr);
  // Elsewhere a correlated subquery is refused, in words rather than as an unknown column.
  auto refuse = [&](const ExprPtr& e, const char* where) {
    const size_t before = out.size();
    if (HasCorrelatedMarker(mark(e))) {
      out.resize(before);
      ctx.Fail(e->position, fmt::format("a correlated subquery is allowed in WHERE, the select list and ORDER BY, "
                                        "not in {}", where));
    }
  };
  for (const auto& g : stmt.group_by) refuse(g, "GROUP BY");
  if (stmt.having) refuse(stmt.having, "HAVING");
  if (stmt.qualify) refuse(stmt.qualify, "QUALIFY");
  for (const auto& j : stmt.joins)
    if (j.on) refuse(j.on, "JOIN ... ON");
  return marked;
}

std::unique_ptr<RecordBatchReader> AppendCorrelated(std::unique_ptr<RecordBatchReader> input, Correlations plans,
                                                    const std::function<ExprPtr(const ExprPtr&)>& resolve,
                                                    const std::vector<ExprPtr*>& exprs) {
  std::vector<std::optional<std::vector<ExprPtr>>> args(plans.size());
  for (ExprPtr* e : exprs) *e = ReplaceMarkers(*e, resolve, args);
  for (size_t k = 0; k < plans.size(); ++k) {
    std::vector<BoundExprPtr> bound;
    std::vector<TypePtr> types;
    for (const auto& a : args[k].value()) {
      bound.push_back(Bind(*a, *input->schema()));
      types.push_back(bound.back()->type);
    }
    plans[k]->Prepare(types);
    std::vector<FieldPtr> fields = input->schema()->fields();
    fields.push_back(Field::Make(CorrelatedColumnName(k), plans[k]->type()));
    input = std::make_unique<CorrelatedReader>(std::move(input), std::move(plans[k]), std::move(bound),
                                               std::make_shared<Schema>(std::move(fields)));
  }
  return input;
}

}  // namespace lancelet::sql
