// SELECT as a pipeline over batches: read (with the WHERE pushed into the scan when it
// can be), group and aggregate, project, sort, then OFFSET / LIMIT. Only aggregate state
// and ORDER BY's rows are held; a LIMIT without ORDER BY stops the read.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lancelet/builder.h"
#include "lancelet/scalar.h"
#include "expr/cast.h"
#include "expr/functions.h"
#include "expr/numeric.h"
#include "expr/type_rules.h"
#include "sql/aggregate.h"
#include "sql/correlated.h"
#include "sql/exec.h"
#include "sql/join.h"
#include "sql/nearest.h"
#include "sql/profile.h"
#include "sql/sort.h"
#include "sql/window.h"

namespace lancelet::sql {

namespace {

constexpr const char* kRowId = "_rowid";
constexpr const char* kRowAddr = "_rowaddr";

void CollectColumns(const ExprPtr& e, std::set<std::string>& out) {
  if (!e) return;
  for (const auto& c : ReferencedColumns(*e)) out.insert(c);
}

std::string OutputName(const SelectItem& item) {
  if (!item.alias.empty()) return item.alias;
  if (item.expr->kind == ExprKind::kColumn) return item.expr->path.back();
  return ToString(*item.expr);
}

}  // namespace

// The columns a statement's expressions name, table qualifiers dropped.
std::set<std::string> NamedColumns(const SelectStmt& stmt) {
  std::vector<std::string> qualifiers;
  if (stmt.from) qualifiers = {stmt.from->name, stmt.from->qualifier()};
  std::set<std::string> used;
  auto collect = [&](const ExprPtr& e) { CollectColumns(StripQualifier(e, qualifiers), used); };
  for (const auto& i : stmt.items) collect(i.expr);
  for (const auto& g : stmt.group_by) collect(g);
  for (const auto& o : stmt.order_by) collect(o.expr);
  collect(stmt.where);
  collect(stmt.having);
  collect(stmt.qualify);
  return used;
}

std::optional<std::vector<std::string>> ColumnsRead(const SelectStmt& stmt, const Schema& table) {
  // The table's top-level columns the statement's expressions name (a nested name "s.a"
  // reads s), in table order, so that SELECT sum(qty) reads qty alone. None means every
  // column: SELECT *, or a name that is neither a column nor an output alias, whose error
  // then lists every column.
  std::set<std::string> aliases, wanted;
  for (const auto& i : stmt.items) {
    if (!i.expr) return std::nullopt;
    if (!i.alias.empty()) aliases.insert(i.alias);
  }
  for (const auto& name : NamedColumns(stmt)) {
    if (table.FieldIndex(name) >= 0) {  // even when an output alias has its name too
      wanted.insert(name);
      continue;
    }
    if (name == kRowId || name == kRowAddr || aliases.count(name)) continue;
    const std::string top = name.substr(0, name.find('.'));
    if (top == name || table.FieldIndex(top) < 0) return std::nullopt;
    wanted.insert(top);
  }
  std::vector<std::string> out;
  for (const auto& f : table.fields())
    if (wanted.count(f->name)) out.push_back(f->name);
  return out;
}

namespace {

// Keeps the rows of its input that `predicate` holds for.
class FilterReader final : public RecordBatchReader {
 public:
  FilterReader(std::unique_ptr<RecordBatchReader> input, BoundExprPtr predicate)
      : input_(std::move(input)), predicate_(std::move(predicate)) {}
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    auto batch = input_->Next();
    return batch ? batch->Filter(EvaluatePredicate(*predicate_, *batch)) : nullptr;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  BoundExprPtr predicate_;
};

// Evaluates the select list over each batch, after OFFSET and within LIMIT: rows that
// are skipped are never evaluated, and the input is not read past the limit. Without
// items, the input's columns pass as they are.
class ProjectReader final : public RecordBatchReader {
 public:
  ProjectReader(std::unique_ptr<RecordBatchReader> input, std::vector<BoundExprPtr> items, SchemaPtr schema,
                int64_t offset, std::optional<int64_t> limit)
      : input_(std::move(input)), items_(std::move(items)), schema_(std::move(schema)), skip_(offset), left_(limit) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    while (!left_ || *left_ > 0) {
      auto batch = input_->Next();
      if (!batch) break;
      int64_t start = std::min(skip_, batch->num_rows());
      skip_ -= start;
      int64_t length = batch->num_rows() - start;
      if (left_) length = std::min(length, *left_);
      if (length == 0) continue;
      if (left_) *left_ -= length;
      if (length < batch->num_rows()) batch = batch->Slice(start, length);
      if (items_.empty()) return std::make_shared<RecordBatch>(schema_, batch->columns(), batch->num_rows());
      std::vector<ArrayPtr> columns;
      for (const auto& item : items_) columns.push_back(Evaluate(*item, *batch));
      return std::make_shared<RecordBatch>(schema_, std::move(columns), batch->num_rows());
    }
    return nullptr;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  std::vector<BoundExprPtr> items_;
  SchemaPtr schema_;
  int64_t skip_;
  std::optional<int64_t> left_;
};

// A column node named `name` in place of `e` (keeping its position).
ExprPtr AsColumn(const Expr& e, std::string name) {
  auto column = std::make_shared<Expr>(e);
  column->kind = ExprKind::kColumn;
  column->args.clear();
  column->path = {std::move(name)};
  return column;
}

// Keeps the rows `predicate` holds for; a profiled operator named `name`.
std::unique_ptr<RecordBatchReader> Filtered(const Context& ctx, std::unique_ptr<RecordBatchReader> input,
                                            BoundExprPtr predicate, const OperatorName& name) {
  return Profiled(ctx, name, std::make_unique<FilterReader>(std::move(input), std::move(predicate)));
}

// "filter <e>": a filter's operator name, made when it is profiled.
OperatorName FilterName(const ExprPtr& e) {
  return [e] { return "filter " + ToString(*e); };
}

// The projection's operator name, with its OFFSET / LIMIT.
std::string ProjectName(const SelectStmt& stmt) {
  std::string name = "project";
  if (stmt.limit) name += fmt::format(" LIMIT {}", *stmt.limit);
  if (stmt.offset) name += fmt::format(" OFFSET {}", stmt.offset);
  return name;
}

// The select list, ORDER BY and OFFSET / LIMIT over `input` (the source rows, or one row
// per group). `source_order` holds the ORDER BY keys that are expressions over the input
// (null where a key names an output column, in `output_key`).
std::unique_ptr<RecordBatchReader> Project(const Context& ctx, const SelectStmt& stmt,
                                           std::unique_ptr<RecordBatchReader> input,
                                           const std::vector<SelectItem>& items, const std::vector<std::string>& names,
                                           const std::vector<OrderItem>& order_by) {
  const Schema& in = *input->schema();
  std::vector<BoundExprPtr> bound;
  std::vector<FieldPtr> fields;
  for (size_t k = 0; k < items.size(); ++k) {
    bound.push_back(Bind(*items[k].expr, in));
    fields.push_back(Field::Make(names[k], bound.back()->type));
  }
  auto schema = std::make_shared<Schema>(fields);
  const OperatorName project_name = [&stmt] { return ProjectName(stmt); };
  if (order_by.empty())
    return Profiled(ctx, project_name,
                    std::make_unique<ProjectReader>(std::move(input), std::move(bound), schema, stmt.offset, stmt.limit));

  // Each key is an output position (1-based), an output name, or an expression over the
  // input rows, evaluated beside the select list.
  std::vector<FieldPtr> sort_fields = fields;
  std::vector<BoundExprPtr> sort_exprs = bound;
  for (const auto& o : order_by) {
    const Expr& e = *o.expr;
    int index = -1;
    if (e.kind == ExprKind::kLiteral && !e.literal.is_null() && e.literal.type && e.literal.type->is_integer()) {
      const int64_t n = e.literal.as_int();
      if (n < 1 || n > int64_t(items.size()))
        ctx.Fail(e.position, fmt::format("ORDER BY position {} is not in the select list (1 to {})", n, items.size()));
      index = int(n - 1);
    } else if (e.kind == ExprKind::kColumn && e.path.size() == 1) {
      for (size_t i = 0; i < fields.size(); ++i)
        if (fields[i]->name == e.path[0] && !items[i].alias.empty()) index = int(i);
      if (index < 0 && in.FieldIndex(e.path[0]) < 0)
        for (size_t i = 0; i < fields.size(); ++i)
          if (fields[i]->name == e.path[0]) index = int(i);
    }
    sort_exprs.push_back(index >= 0 ? bound[size_t(index)] : Bind(e, in));
    sort_fields.push_back(Field::Make(fmt::format("__key{}", sort_fields.size()), sort_exprs.back()->type));
  }
  std::optional<int64_t> keep;
  if (stmt.limit) keep = stmt.offset + *stmt.limit;
  Sorter sorter(std::make_shared<Schema>(sort_fields), order_by, keep, ctx.memory_budget);
  std::shared_ptr<OperatorProfile> sorting;
  {
    ProfileTimer timer(ctx, [&] {
      std::vector<std::string> keys;
      for (const auto& o : order_by) keys.push_back(ToString(*o.expr) + (o.descending ? " DESC" : ""));
      return fmt::format("sort {}{}", fmt::join(keys, ", "), keep ? fmt::format(" (top {})", *keep) : "");
    });
    while (auto batch = input->Next()) {
      std::vector<ArrayPtr> columns;
      for (const auto& e : sort_exprs) columns.push_back(Evaluate(*e, *batch));
      sorter.Add(std::make_shared<RecordBatch>(std::make_shared<Schema>(sort_fields), std::move(columns),
                                               batch->num_rows()));
    }
    sorting = timer.op();
  }
  // The sorted rows as they stream, with OFFSET and LIMIT applied as they pass.
  return Profiled(ctx, project_name,
                  std::make_unique<ProjectReader>(Profiled(sorting, sorter.Finish()), std::vector<BoundExprPtr>{},
                                                  schema, stmt.offset, stmt.limit));
}

// The window calls of the select list, ORDER BY and QUALIFY become columns __window<k> of the
// rows `input` gives (the source rows, or one row per group), computed by OpenWindows.
std::unique_ptr<RecordBatchReader> WithWindows(const Context& ctx, std::unique_ptr<RecordBatchReader> input,
                                               std::vector<SelectItem>& items, std::vector<OrderItem>& order_by,
                                               ExprPtr& qualify) {
  std::vector<ExprPtr> calls;
  std::vector<std::string> names, texts;
  std::function<ExprPtr(const ExprPtr&)> lift = [&](const ExprPtr& e) -> ExprPtr {
    if (!e || !ContainsWindow(e)) return e;
    if (e->kind == ExprKind::kCall && e->window) {
      for (const auto& a : e->args)
        if (ContainsWindow(a)) ctx.Fail(a->position, "window functions cannot be nested");
      const std::string text = ToString(*e);  // the same call twice is computed once
      for (size_t k = 0; k < calls.size(); ++k)
        if (texts[k] == text) return AsColumn(*e, names[k]);
      calls.push_back(e);
      texts.push_back(text);
      names.push_back(fmt::format("__window{}", calls.size() - 1));
      return AsColumn(*e, names.back());
    }
    auto copy = std::make_shared<Expr>(*e);
    for (auto& a : copy->args) a = lift(a);
    return copy;
  };
  for (auto& i : items) i.expr = lift(i.expr);
  for (auto& o : order_by) o.expr = lift(o.expr);
  qualify = lift(qualify);
  if (calls.empty()) return input;
  return Profiled(ctx, [&] { return fmt::format("window {}", fmt::join(texts, ", ")); },
                  OpenWindows(ctx, std::move(input), calls, names));
}

bool IsUnnest(const ExprPtr& e) { return e && e->kind == ExprKind::kCall && e->function == "unnest" && !e->window; }

bool ContainsUnnest(const ExprPtr& e) {
  return e && (IsUnnest(e) || std::any_of(e->args.begin(), e->args.end(), ContainsUnnest));
}

// unnest(list) items: each input row once per item of its longest such list (none for
// NULL or empty lists), the lists' items side by side (NULL past a shorter list's end),
// the other columns repeated; as DuckDB's.
class UnnestReader final : public RecordBatchReader {
 public:
  UnnestReader(std::unique_ptr<RecordBatchReader> input, std::vector<BoundExprPtr> lists, SchemaPtr schema)
      : input_(std::move(input)), lists_(std::move(lists)), schema_(std::move(schema)) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    while (auto batch = input_->Next()) {
      std::vector<ArrayPtr> lists;
      for (const auto& l : lists_) lists.push_back(Evaluate(*l, *batch));
      std::vector<int64_t> take;  // the input row of each output row
      std::vector<int64_t> item;  // and its position in the lists
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        int64_t longest = 0;
        for (const auto& l : lists)
          if (l->IsValid(r)) longest = std::max(longest, ListSpan(*l, r).second);
        for (int64_t i = 0; i < longest; ++i) {
          take.push_back(r);
          item.push_back(i);
        }
      }
      if (take.empty()) continue;
      std::vector<ArrayPtr> columns;
      for (const auto& c : batch->columns()) columns.push_back(Take(*c, take));
      for (size_t k = 0; k < lists.size(); ++k) {
        const ArrayData& l = *lists[k];
        auto items = ArrayBuilder::Make(schema_->field(batch->num_columns() + k)->type);
        for (size_t j = 0; j < take.size(); ++j) {
          const int64_t r = take[j];
          const auto [first, count] = l.IsValid(r) ? ListSpan(l, r) : std::pair<int64_t, int64_t>{0, 0};
          if (item[j] < count) items->AppendScalar(GetScalar(*l.child(0), first + item[j]));
          else items->AppendNull();
        }
        columns.push_back(items->Finish());
      }
      return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(take.size()));
    }
    return nullptr;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  std::vector<BoundExprPtr> lists_;
  SchemaPtr schema_;
};

// Select items that are unnest(list) become columns __unnest<k> of the rows `input` gives,
// expanded by UnnestReader before the projection (so ORDER BY and LIMIT count its rows).
std::unique_ptr<RecordBatchReader> WithUnnest(const Context& ctx, std::unique_ptr<RecordBatchReader> input,
                                              std::vector<SelectItem>& items,
                                              const std::vector<OrderItem>& order_by) {
  std::vector<BoundExprPtr> lists;
  std::vector<FieldPtr> fields = input->schema()->fields();
  std::vector<ExprPtr> unnested;  // the lists, as written
  for (auto& i : items) {
    if (!IsUnnest(i.expr)) continue;
    const Expr& call = *i.expr;
    if (call.args.size() != 1) ctx.Fail(call.position, fmt::format("unnest() takes 1 argument, got {}", call.args.size()));
    if (ContainsUnnest(call.args[0])) ctx.Fail(call.position, "unnest() cannot be nested");
    BoundExprPtr list = Bind(*call.args[0], *input->schema());
    if (!list->type || !IsListLike(*list->type))
      ctx.Fail(call.position, fmt::format("unnest() takes a list, not {}", list->type ? list->type->ToString() : "NULL"));
    const std::string name = fmt::format("__unnest{}", lists.size());
    fields.push_back(Field::Make(name, list->type->child(0)->type));
    unnested.push_back(call.args[0]);
    lists.push_back(std::move(list));
    i.expr = AsColumn(call, name);
  }
  for (const auto& o : order_by)
    if (ContainsUnnest(o.expr)) ctx.Fail(o.expr->position, "unnest() is allowed only as a whole item of the select list");
  if (lists.empty()) return input;
  auto schema = std::make_shared<Schema>(fields);
  auto name = [&] {
    std::vector<std::string> texts;
    for (const auto& e : unnested) texts.push_back(ToString(*e));
    return fmt::format("unnest {}", fmt::join(texts, ", "));
  };
  return Profiled(ctx, name, std::make_unique<UnnestReader>(std::move(input), std::move(lists), std::move(schema)));
}

// Passes each row once: rows equal to one seen before (NULLs equal) are dropped.
class RowDeduplicator {
 public:
  RecordBatchPtr NewRows(const RecordBatch& batch) {
    std::vector<bool> keep(size_t(batch.num_rows()));
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      key_.clear();
      for (const auto& column : batch.columns()) AppendKey(key_, *column, r, KeyFormOf(*column->type));
      keep[size_t(r)] = seen_.Number(key_).second;
    }
    return batch.Filter(keep);
  }

 private:
  KeyNumbering seen_;
  std::string key_;
};

// SELECT DISTINCT over aggregates: its input's rows, each once.
class DistinctReader final : public RecordBatchReader {
 public:
  explicit DistinctReader(std::unique_ptr<RecordBatchReader> input) : input_(std::move(input)) {}
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    while (auto batch = input_->Next())
      if (auto rows = seen_.NewRows(*batch); rows->num_rows() > 0) return rows;
    return nullptr;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  RowDeduplicator seen_;
};

// SELECT DISTINCT over groups, aggregates or windows: the projected rows deduplicated,
// then ORDER BY (output columns only) and LIMIT over the distinct ones.
std::unique_ptr<RecordBatchReader> ProjectDistinct(const Context& ctx, const SelectStmt& stmt,
                                                   std::unique_ptr<RecordBatchReader> rows,
                                                   const std::vector<SelectItem>& items,
                                                   const std::vector<std::string>& names,
                                                   const std::vector<OrderItem>& output_order) {
  auto projected = Project(ctx, SelectStmt{}, std::move(rows), items, names, {});
  auto distinct = Profiled(ctx, [] { return std::string("distinct"); },
                           std::make_unique<DistinctReader>(std::move(projected)));
  std::vector<SelectItem> outputs;
  for (const auto& name : names) outputs.push_back({Expr::Column(name), ""});
  return Project(ctx, stmt, std::move(distinct), outputs, names, output_order);
}

// The rows of a UNION's parts one after the other, each column cast to the type all
// parts share. Parts up to the last UNION without ALL are deduplicated (UNION is
// left-associative); rows later are passed as they are.
class UnionReader final : public RecordBatchReader {
 public:
  UnionReader(std::vector<std::unique_ptr<RecordBatchReader>> parts, SchemaPtr schema, size_t distinct_parts)
      : parts_(std::move(parts)), schema_(std::move(schema)), distinct_parts_(distinct_parts) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    for (; part_ < parts_.size(); ++part_) {
      while (auto batch = parts_[part_]->Next()) {
        std::vector<ArrayPtr> columns;
        for (size_t c = 0; c < schema_->num_fields(); ++c) {
          const ArrayPtr& column = batch->columns()[c];
          const TypePtr& type = schema_->field(c)->type;
          columns.push_back(column->type->Equals(*type) ? column : CastArray(*column, type));
        }
        auto rows = std::make_shared<RecordBatch>(schema_, std::move(columns), batch->num_rows());
        if (part_ < distinct_parts_) rows = seen_.NewRows(*rows);
        if (rows->num_rows() > 0) return rows;
      }
    }
    return nullptr;
  }

 private:
  std::vector<std::unique_ptr<RecordBatchReader>> parts_;
  SchemaPtr schema_;
  size_t distinct_parts_;
  size_t part_ = 0;
  RowDeduplicator seen_;
};

std::unique_ptr<RecordBatchReader> OpenUnion(const Context& ctx, const SelectStmt& stmt, const SchemaPtr& column_types) {
  std::vector<std::unique_ptr<RecordBatchReader>> parts;
  for (const auto& part : stmt.union_parts) parts.push_back(OpenSelect(ctx, *part, column_types));
  // A bare NULL item (SELECT NULL) takes the type of the column in the other parts, as
  // in DuckDB; it is typed only where every part has one.
  auto bare_null = [&](size_t p, size_t c) {
    const auto& items = stmt.union_parts[p]->items;
    if (c >= items.size() || !items[c].expr) return false;
    const Expr& e = *items[c].expr;
    return e.kind == ExprKind::kLiteral && e.literal.is_null() && !e.literal.type;
  };
  std::vector<FieldPtr> fields = parts[0]->schema()->fields();
  std::vector<bool> typed(fields.size());
  for (size_t c = 0; c < fields.size(); ++c) typed[c] = !bare_null(0, c);
  for (size_t p = 1; p < parts.size(); ++p) {
    const Schema& schema = *parts[p]->schema();
    if (schema.num_fields() != fields.size())
      ctx.Fail(stmt.union_position, fmt::format("UNION's parts differ in columns: {} in the first, {} in part {}",
                                                fields.size(), schema.num_fields(), p + 1));
    for (size_t c = 0; c < fields.size(); ++c) {
      if (bare_null(p, c)) continue;
      if (!typed[c]) {
        fields[c] = Field::Make(fields[c]->name, schema.field(c)->type);
        typed[c] = true;
        continue;
      }
      TypePtr common = CommonType(fields[c]->type, schema.field(c)->type);
      if (!common)
        ctx.Fail(stmt.union_position, fmt::format("UNION's column {} ('{}') is {} in one part and {} in part {}", c + 1,
                                                  fields[c]->name, fields[c]->type->ToString(),
                                                  schema.field(c)->type->ToString(), p + 1));
      fields[c] = Field::Make(fields[c]->name, common);
    }
  }
  size_t distinct_parts = 0;
  for (size_t i = 0; i < stmt.union_all.size(); ++i)
    if (!stmt.union_all[i]) distinct_parts = i + 2;
  auto schema = std::make_shared<Schema>(fields);
  std::unique_ptr<RecordBatchReader> rows =
      Profiled(ctx, [&] { return std::string(distinct_parts ? "union" : "union all"); },
               std::make_unique<UnionReader>(std::move(parts), schema, distinct_parts));
  std::vector<SelectItem> items;
  std::vector<std::string> names;
  for (const auto& f : fields) {
    items.push_back({Expr::Column(f->name), ""});
    names.push_back(f->name);
  }
  return Project(ctx, stmt, std::move(rows), items, names, stmt.order_by);
}

}  // namespace

namespace {

// A SELECT's parts as OpenQuery plans them: at first the statement's, table qualifiers
// stripped from a single source's; then with * expanded, output names taken, GROUP BY
// references resolved, and (with aggregates) aggregate calls and group keys rewritten to
// columns of the grouped rows.
struct QueryParts {
  std::vector<SelectItem> items;
  std::vector<std::string> names;  // output names, taken before aggregates are rewritten
  ExprPtr where;
  ExprPtr late_where;  // WHERE terms holding a correlated subquery, evaluated after it
  ExprPtr having;
  ExprPtr qualify;
  std::vector<ExprPtr> group_by;
  std::vector<OrderItem> order_by;
  std::vector<OrderItem> output_order;  // ORDER BY as planned before aggregates are rewritten
  bool distinct_output = false;         // SELECT DISTINCT over groups, aggregates or windows
};

// The statement's parts; a SELECT from one source drops table qualifiers (u.age), one
// with joins (`joined`) renames column references to the joined columns later instead.
QueryParts StripQualifiers(const SelectStmt& stmt, const JoinedSource* joined, bool correlated) {
  std::vector<std::string> qualifiers;
  if (stmt.from && !joined) qualifiers = {stmt.from->name, stmt.from->qualifier()};
  auto strip = [&](const ExprPtr& e) { return StripQualifier(e, qualifiers); };
  QueryParts parts;
  parts.items = stmt.items;
  for (auto& i : parts.items) i.expr = strip(i.expr);
  parts.where = strip(stmt.where);
  parts.having = strip(stmt.having);
  parts.qualify = strip(stmt.qualify);
  for (const auto& g : stmt.group_by) parts.group_by.push_back(strip(g));
  parts.order_by = stmt.order_by;
  for (auto& o : parts.order_by) o.expr = strip(o.expr);
  if (correlated && !joined) {
    ExprPtr early;
    for (const auto& term : Conjuncts(parts.where))
      AndOnto(HasCorrelatedMarker(term) ? parts.late_where : early, term);
    parts.where = early;
  }
  return parts;
}

// The rows of a single source, with `where` pushed into a table's scan, else filtered;
// a table's nearest rows through its vector index when PlanNearest serves the statement
// (not with correlated subqueries, whose WHERE terms apply after the source).
std::unique_ptr<RecordBatchReader> OpenSingleSource(const Context& ctx, const SelectStmt& stmt, const ExprPtr& where,
                                                    const SchemaPtr& column_types, bool correlated) {
  const std::set<std::string> used = NamedColumns(stmt);
  bool row_id = used.count(kRowId) > 0, row_addr = used.count(kRowAddr) > 0;
  auto ds = stmt.from->kind == TableRef::Kind::kTable ? OpenTable(ctx, *stmt.from) : nullptr;
  std::optional<std::vector<std::string>> projection;
  if (ds) projection = ColumnsRead(stmt, *ds->schema());
  ExprPtr pushed;  // into the table's scan
  if (where && ds) {
    // Validate against the table's columns first, so errors point into the statement.
    auto fields = ds->schema()->fields();
    if (row_id) fields.push_back(Field::Make(kRowId, DataType::UInt64()));
    if (row_addr) fields.push_back(Field::Make(kRowAddr, DataType::UInt64()));
    Bind(*where, Schema(fields));
    pushed = where;
  }
  if (ds && !correlated)
    if (const std::optional<NearestPlan> nearest = PlanNearest(stmt, pushed, *ds))
      return OpenNearest(*nearest, *ds, row_id, row_addr);
  auto input = OpenSource(ctx, *stmt.from, row_id, row_addr, pushed, column_types, projection, ds);
  if (where && !pushed) {
    auto predicate = Bind(*where, *input->schema());
    input = Filtered(ctx, std::move(input), std::move(predicate), FilterName(where));
  }
  return input;
}

// The input rows: joined, of one source, or the one row of a SELECT without FROM; with
// the correlated subqueries' columns added and the WHERE terms that use them applied.
std::unique_ptr<RecordBatchReader> OpenInput(const Context& ctx, const SelectStmt& stmt, JoinedSource* joined,
                                             QueryParts& parts, Correlations correlated,
                                             const SchemaPtr& column_types) {
  std::unique_ptr<RecordBatchReader> input;
  if (joined) {
    input = Profiled(ctx, [] { return std::string("join"); }, joined->TakeRows());
  } else if (stmt.from) {
    input = OpenSingleSource(ctx, stmt, parts.where, column_types, !correlated.empty());
  } else {
    if (parts.where) ctx.Fail(parts.where->position, "WHERE needs a FROM clause");
    input = BatchesReader(std::make_shared<Schema>(), std::vector<RecordBatchPtr>{EmptyRowsBatch(1)});
  }
  if (correlated.empty()) return input;
  std::vector<ExprPtr*> exprs = {joined ? &parts.where : &parts.late_where};
  for (auto& i : parts.items)
    if (i.expr) exprs.push_back(&i.expr);
  for (auto& o : parts.order_by) exprs.push_back(&o.expr);
  auto resolve = [&](const ExprPtr& e) { return joined ? joined->Resolve(e) : e; };
  input = AppendCorrelated(std::move(input), std::move(correlated), resolve, exprs);
  if (parts.late_where) {
    BoundExprPtr holds = Bind(*parts.late_where, *input->schema());
    input = Filtered(ctx, std::move(input), std::move(holds), FilterName(parts.late_where));
  }
  return input;
}

// Expands *: every column of the source, without pseudo-columns, less those EXCLUDE
// names and with those REPLACE names computed.
std::vector<SelectItem> ExpandStars(const Context& ctx, const SelectStmt& stmt, const JoinedSource* joined,
                                    const std::vector<SelectItem>& items, const Schema& in_schema) {
  std::vector<SelectItem> expanded;
  for (const auto& i : items) {
    if (i.expr) {
      expanded.push_back(i);
      continue;
    }
    if (!stmt.from) ctx.Fail(1, "SELECT * needs a FROM clause");
    const std::string& q = i.star_qualifier;
    std::vector<std::pair<std::string, std::string>> columns;  // (column to read, output name)
    if (joined) {
      columns = q.empty() ? joined->star() : joined->star(q, i.star_position);
    } else {
      if (!q.empty() && q != stmt.from->qualifier() && q != stmt.from->name)
        ctx.Fail(i.star_position, fmt::format("'{}' is not in the FROM clause ({})", q, stmt.from->qualifier()));
      for (const auto& f : in_schema.fields())
        if (f->name != kRowId && f->name != kRowAddr && !IsCorrelatedColumnName(f->name)) columns.emplace_back(f->name, "");
    }
    auto output_name = [](const std::pair<std::string, std::string>& c) { return c.second.empty() ? c.first : c.second; };
    auto star_has = [&](const std::string& name) {
      return std::any_of(columns.begin(), columns.end(), [&](const auto& c) { return output_name(c) == name; });
    };
    for (const auto& [name, at] : i.exclude)
      if (!star_has(name)) ctx.Fail(at, fmt::format("EXCLUDE names '{}', which * does not select", name));
    for (const auto& [name, e] : i.replace)
      if (!star_has(name)) ctx.Fail(e->position, fmt::format("REPLACE names '{}', which * does not select", name));
    for (const auto& c : columns) {
      const std::string name = output_name(c);
      if (std::any_of(i.exclude.begin(), i.exclude.end(), [&](const auto& x) { return x.first == name; })) continue;
      auto replaced = std::find_if(i.replace.begin(), i.replace.end(), [&](const auto& r) { return r.first == name; });
      if (replaced != i.replace.end()) expanded.push_back({replaced->second, name});
      else expanded.push_back({Expr::Column(c.first), c.second});
    }
  }
  return expanded;
}

// With joins: column references renamed to the joined columns (ORDER BY may also name an
// output alias), and the WHERE applied to the joined rows.
void ResolveJoined(const Context& ctx, JoinedSource& joined, QueryParts& parts, std::unique_ptr<RecordBatchReader>& input,
                   const Schema& in_schema) {
  std::vector<std::string> aliases;
  for (const auto& i : parts.items)
    if (!i.alias.empty()) aliases.push_back(i.alias);
  for (auto& i : parts.items) i.expr = joined.Resolve(i.expr);
  for (auto& g : parts.group_by) g = joined.Resolve(g);
  for (auto& o : parts.order_by) o.expr = joined.Resolve(o.expr, aliases);
  parts.having = joined.Resolve(parts.having);
  parts.qualify = joined.Resolve(parts.qualify);
  if (parts.where)
    input = Filtered(ctx, std::move(input), Bind(*joined.Resolve(parts.where), in_schema), FilterName(parts.where));
}

// QUALIFY may name a select item's alias (one that names no input column) for its
// expression, as DuckDB's does; and it needs a window function there or in the select list.
void ResolveQualifyAliases(const Context& ctx, QueryParts& parts, const Schema& in_schema) {
  if (!parts.qualify) return;
  parts.qualify = MapColumns(parts.qualify, [&](const Expr& c) -> ExprPtr {
    if (c.path.size() != 1 || in_schema.FieldIndex(c.path[0]) >= 0) return nullptr;
    for (const auto& i : parts.items)
      if (!i.alias.empty() && i.alias == c.path[0]) return i.expr;
    return nullptr;
  });
  const bool windows = ContainsWindow(parts.qualify) ||
                       std::any_of(parts.items.begin(), parts.items.end(),
                                   [](const SelectItem& i) { return ContainsWindow(i.expr); });
  if (!windows) ctx.Fail(parts.qualify->position, "QUALIFY needs a window function in it or in the select list");
}

// GROUP BY a select-list position (1-based) or an output alias that names no input
// column stands for that item's expression, as in DuckDB.
void ResolveGroupByReferences(const Context& ctx, QueryParts& parts, const Schema& in_schema) {
  const auto& items = parts.items;
  for (auto& g : parts.group_by) {
    if (g->kind == ExprKind::kLiteral && !g->literal.is_null() && g->literal.type && g->literal.type->is_integer()) {
      const int64_t n = g->literal.as_int();
      if (n < 1 || n > int64_t(items.size()))
        ctx.Fail(g->position, fmt::format("GROUP BY position {} is not in the select list (1 to {})", n, items.size()));
      if (ContainsAggregate(items[size_t(n - 1)].expr))
        ctx.Fail(g->position, fmt::format("GROUP BY position {} is an aggregate", n));
      g = items[size_t(n - 1)].expr;
    } else if (g->kind == ExprKind::kColumn && g->path.size() == 1 && in_schema.FieldIndex(g->path[0]) < 0) {
      for (const auto& i : items)
        if (!i.alias.empty() && i.alias == g->path[0] && !ContainsAggregate(i.expr)) {
          g = i.expr;
          break;
        }
    }
  }
}

// SELECT DISTINCT: one row per distinct select list, i.e. grouped by every item; over
// groups, aggregates or windows, the output rows deduplicated (distinct_output), and
// then ORDER BY takes only output columns.
void PlanDistinct(const Context& ctx, const SelectStmt& stmt, QueryParts& parts) {
  if (!stmt.distinct) return;
  parts.distinct_output = !parts.group_by.empty() || ContainsAggregate(parts.having) || parts.qualify ||
                          std::any_of(parts.items.begin(), parts.items.end(), [](const SelectItem& i) {
                            return ContainsAggregate(i.expr) || ContainsWindow(i.expr);
                          });
  if (!parts.distinct_output) {
    for (const auto& i : parts.items) parts.group_by.push_back(i.expr);
    return;
  }
  for (const auto& o : parts.order_by) {
    const Expr& e = *o.expr;
    const bool output = e.kind == ExprKind::kLiteral ||
                        (e.kind == ExprKind::kColumn && e.path.size() == 1 &&
                         std::find(parts.names.begin(), parts.names.end(), e.path[0]) != parts.names.end());
    if (!output) ctx.Fail(e.position, "with SELECT DISTINCT, ORDER BY takes only output columns (a name or a position)");
  }
}

bool IsAggregateQuery(const QueryParts& parts) {
  bool aggregate = !parts.group_by.empty() || ContainsAggregate(parts.having) || ContainsAggregate(parts.qualify);
  for (const auto& i : parts.items) aggregate |= ContainsAggregate(i.expr);
  for (const auto& o : parts.order_by) aggregate |= ContainsAggregate(o.expr);
  return aggregate;
}

// What HashAggregate computes: the group keys and the aggregate calls.
struct Grouping {
  std::vector<BoundExprPtr> keys;
  std::vector<AggregateCall> aggregates;
};

// Aggregates become columns __agg<i>, group keys __grp<j> of a batch with one row per
// group, over which the select list, HAVING and ORDER BY are rewritten to be evaluated.
Grouping PlanGrouping(const Context& ctx, QueryParts& parts, const Schema& in_schema) {
  Grouping grouping;
  std::vector<std::string> group_text;
  for (const auto& g : parts.group_by) {
    if (ContainsAggregate(g)) ctx.Fail(g->position, "aggregate functions are not allowed in GROUP BY");
    group_text.push_back(ToString(*g));
    grouping.keys.push_back(Bind(*g, in_schema));
  }
  std::function<ExprPtr(const ExprPtr&)> rewrite = [&](const ExprPtr& e) -> ExprPtr {
    std::string text = ToString(*e);
    for (size_t j = 0; j < group_text.size(); ++j)
      if (text == group_text[j]) return AsColumn(*e, fmt::format("__grp{}", j));
    if (e->kind == ExprKind::kCall && IsAggregateName(e->function) && !e->window) {
      for (const auto& a : e->args)
        if (ContainsAggregate(a)) ctx.Fail(a->position, "aggregate function calls cannot be nested");
      grouping.aggregates.push_back(BindAggregate(ctx, e, in_schema));
      return AsColumn(*e, fmt::format("__agg{}", grouping.aggregates.size() - 1));
    }
    if (e->kind == ExprKind::kColumn && IsCorrelatedColumnName(e->path[0]))
      ctx.Fail(e->position, "a correlated subquery is not allowed in the select list or ORDER BY of a query with "
                            "GROUP BY or aggregates; join with a grouped subquery instead");
    if (e->kind == ExprKind::kColumn)
      ctx.Fail(e->position, fmt::format("column '{}' must appear in GROUP BY or be used in an aggregate function",
                                        fmt::join(e->path, ".")));
    auto copy = std::make_shared<Expr>(*e);
    for (auto& a : copy->args) a = rewrite(a);
    return copy;
  };
  for (auto& i : parts.items) i.expr = rewrite(i.expr);
  if (parts.having) parts.having = rewrite(parts.having);
  if (parts.qualify) parts.qualify = rewrite(parts.qualify);
  for (auto& o : parts.order_by) {
    // ORDER BY may name an output column; leave those for the projection step.
    bool alias = o.expr->kind == ExprKind::kColumn && o.expr->path.size() == 1 &&
                 std::find(parts.names.begin(), parts.names.end(), o.expr->path[0]) != parts.names.end();
    bool ordinal = o.expr->kind == ExprKind::kLiteral;
    if (!alias && !ordinal) o.expr = rewrite(o.expr);
  }
  return grouping;
}

// Windows, QUALIFY, then the select list, ORDER BY and OFFSET / LIMIT over `rows` (the
// source rows, or one row per group), the output deduplicated when planned so.
std::unique_ptr<RecordBatchReader> ProjectOutput(const Context& ctx, const SelectStmt& stmt,
                                                 std::unique_ptr<RecordBatchReader> rows, QueryParts& parts) {
  rows = WithWindows(ctx, std::move(rows), parts.items, parts.order_by, parts.qualify);
  if (parts.qualify) {
    BoundExprPtr holds = Bind(*parts.qualify, *rows->schema());
    rows = Filtered(ctx, std::move(rows), std::move(holds), [] { return std::string("filter QUALIFY"); });
  }
  rows = WithUnnest(ctx, std::move(rows), parts.items, parts.order_by);
  if (!parts.distinct_output) return Project(ctx, stmt, std::move(rows), parts.items, parts.names, parts.order_by);
  return ProjectDistinct(ctx, stmt, std::move(rows), parts.items, parts.names, parts.output_order);
}

// A SELECT without subqueries other than the correlated ones in `correlated`, which
// MarkCorrelated left as markers: the input rows, then (planned over their schema) either
// the projection or grouping, HAVING and the projection over the groups.
std::unique_ptr<RecordBatchReader> OpenQuery(const Context& ctx, const SelectStmt& stmt, const SchemaPtr& column_types,
                                             Correlations correlated) {
  std::unique_ptr<JoinedSource> joined;
  if (stmt.from && !stmt.joins.empty()) joined = std::make_unique<JoinedSource>(ctx, stmt);
  QueryParts parts = StripQualifiers(stmt, joined.get(), !correlated.empty());
  std::unique_ptr<RecordBatchReader> input =
      OpenInput(ctx, stmt, joined.get(), parts, std::move(correlated), column_types);
  const SchemaPtr in_schema = input->schema();

  parts.items = ExpandStars(ctx, stmt, joined.get(), parts.items, *in_schema);
  for (const auto& i : parts.items) parts.names.push_back(OutputName(i));
  ResolveQualifyAliases(ctx, parts, *in_schema);
  if (joined) ResolveJoined(ctx, *joined, parts, input, *in_schema);
  if (stmt.group_by_all)  // GROUP BY ALL: the items that are not aggregates (nor windows over them)
    for (const auto& i : parts.items)
      if (!ContainsAggregate(i.expr) && !ContainsWindow(i.expr)) parts.group_by.push_back(i.expr);
  ResolveGroupByReferences(ctx, parts, *in_schema);
  PlanDistinct(ctx, stmt, parts);
  parts.output_order = parts.order_by;
  if (!IsAggregateQuery(parts)) {
    if (parts.having) ctx.Fail(parts.having->position, "HAVING needs GROUP BY or an aggregate");
    return ProjectOutput(ctx, stmt, std::move(input), parts);
  }

  Grouping grouping = PlanGrouping(ctx, parts, *in_schema);
  HashAggregate groups(ctx, std::move(grouping.keys), std::move(grouping.aggregates));
  std::shared_ptr<OperatorProfile> aggregating;
  {
    ProfileTimer timer(ctx, [&] {
      std::vector<std::string> keys;
      for (const auto& g : parts.group_by) keys.push_back(ToString(*g));
      return keys.empty() ? std::string("aggregate") : fmt::format("aggregate GROUP BY {}", fmt::join(keys, ", "));
    });
    groups.AddAll(*input);
    aggregating = timer.op();
  }
  std::unique_ptr<RecordBatchReader> rows = Profiled(aggregating, groups.Finish());
  if (parts.having) {
    BoundExprPtr holds = Bind(*parts.having, *rows->schema());
    rows = Filtered(ctx, std::move(rows), std::move(holds), [] { return std::string("filter HAVING"); });
  }
  return ProjectOutput(ctx, stmt, std::move(rows), parts);
}

}  // namespace

std::unique_ptr<RecordBatchReader> OpenSelect(const Context& ctx, const SelectStmt& stmt,
                                              const SchemaPtr& column_types) {
  if (!stmt.union_parts.empty()) return OpenUnion(ctx, stmt, column_types);
  auto has_subquery = [](const SelectStmt& s) {
    bool any = HasSubquery(s.where) || HasSubquery(s.having) || HasSubquery(s.qualify);
    for (const auto& i : s.items) any |= HasSubquery(i.expr);
    for (const auto& g : s.group_by) any |= HasSubquery(g);
    for (const auto& o : s.order_by) any |= HasSubquery(o.expr);
    for (const auto& j : s.joins) any |= HasSubquery(j.on);
    return any;
  };
  if (!has_subquery(stmt)) return OpenQuery(ctx, stmt, column_types, {});
  // Correlated subqueries become markers computed per row; the others run first, and
  // this statement then runs with their values.
  Correlations correlated;
  SelectStmt resolved = MarkCorrelated(ctx, stmt, correlated);
  auto values = [&](ExprPtr& e) { e = WithSubqueryValues(ctx, e); };
  values(resolved.where);
  values(resolved.having);
  values(resolved.qualify);
  for (auto& i : resolved.items) values(i.expr);
  for (auto& g : resolved.group_by) values(g);
  for (auto& o : resolved.order_by) values(o.expr);
  for (auto& j : resolved.joins) values(j.on);
  return OpenQuery(ctx, resolved, column_types, std::move(correlated));
}

namespace {

// The rows of a subquery that stands for a value or a list: one column.
RecordBatchPtr SubqueryRows(const Context& ctx, const Expr& node) {
  auto rows = RunSelect(ctx, *static_cast<const SelectStmt*>(node.subquery.get()));
  if (rows->num_columns() != 1)
    ctx.Fail(node.position, fmt::format("a subquery used as a value returns one column, not {}", rows->num_columns()));
  return rows;
}

}  // namespace

ExprPtr WithSubqueryValues(const Context& ctx, const ExprPtr& e) {
  if (!HasSubquery(e)) return e;
  if (e->kind == ExprKind::kSubquery && e->function == "exists") {
    auto rows = OpenSelect(ctx, *static_cast<const SelectStmt*>(e->subquery.get()));
    bool any = false;
    while (!any)
      if (auto batch = rows->Next()) any = batch->num_rows() > 0;
      else break;
    return LiteralAt(*e, Scalar{DataType::Bool(), any});
  }
  if (e->kind == ExprKind::kSubquery) {
    auto rows = SubqueryRows(ctx, *e);
    if (rows->num_rows() > 1)
      ctx.Fail(e->position, fmt::format("a subquery used as a value returned {} rows; it may return at most one",
                                        rows->num_rows()));
    const ArrayData& column = *rows->column(0);
    return LiteralAt(*e, rows->num_rows() == 0 ? Scalar::Null(column.type) : GetScalar(column, 0));
  }
  auto copy = std::make_shared<Expr>(*e);
  if (e->kind == ExprKind::kIn && e->args.size() == 2 && e->args[1]->kind == ExprKind::kSubquery) {
    auto rows = SubqueryRows(ctx, *e->args[1]);
    if (rows->num_rows() == 0) return LiteralAt(*e, Scalar{DataType::Bool(), e->negated});  // IN () is false
    copy->args = {WithSubqueryValues(ctx, e->args[0])};
    const ArrayData& column = *rows->column(0);
    for (int64_t r = 0; r < column.length; ++r) copy->args.push_back(LiteralAt(*e->args[1], GetScalar(column, r)));
    return copy;
  }
  for (auto& a : copy->args) a = WithSubqueryValues(ctx, a);
  return copy;
}

RecordBatchPtr RunSelect(const Context& ctx, const SelectStmt& stmt, const SchemaPtr& column_types) {
  return ReadAll(*OpenSelect(ctx, stmt, column_types));
}

}  // namespace lancelet::sql
