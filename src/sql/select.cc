// SELECT: read (with the WHERE pushed into the scan when it can be), group and
// aggregate, project, sort, then OFFSET / LIMIT.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/scalar.h"
#include "expr/numeric.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

constexpr const char* kRowId = "_rowid";
constexpr const char* kRowAddr = "_rowaddr";

bool IsAggregateName(const std::string& f) {
  static const std::set<std::string> kAggregates = {
      "avg",      "bool_and", "bool_or",    "count",   "max",     "median",     "min",
      "stddev",   "stddev_pop", "stddev_samp", "string_agg", "sum", "var_pop", "var_samp", "variance"};
  return kAggregates.count(f) > 0;
}

// The separator of string_agg(x, sep): a string literal, ',' without one.
std::string AggregateSeparator(const Context& ctx, const Expr& call) {
  if (call.args.size() < 2) return ",";
  const Expr& sep = *call.args[1];
  if (sep.kind != ExprKind::kLiteral || sep.literal.is_null() || !sep.literal.type || !sep.literal.type->is_string())
    ctx.Fail(sep.position, "string_agg's separator must be a string literal");
  return sep.literal.as_string();
}

bool ContainsAggregate(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::kCall && IsAggregateName(e->function)) return true;
  return std::any_of(e->args.begin(), e->args.end(), ContainsAggregate);
}

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

// One aggregate call, computed per group.
struct Aggregate {
  ExprPtr call;
  ArrayPtr argument;  // null for count(*)
  TypePtr type;       // result type
};

TypePtr AggregateType(const Context& ctx, const Expr& call, const TypePtr& arg) {
  const std::string& f = call.function;
  if (f == "count") return DataType::Int64();
  if (!arg) ctx.Fail(call.position, fmt::format("{}(*) is not allowed; only count(*) takes *", f));
  if (f == "avg") {
    if (!arg->is_numeric()) ctx.Fail(call.position, fmt::format("avg needs a numeric argument, not {}", arg->ToString()));
    return DataType::Float64();
  }
  if (f == "sum") {
    if (arg->is_integer()) return arg->is_signed_integer() ? DataType::Int64() : DataType::UInt64();
    if (arg->is_floating()) return DataType::Float64();
    ctx.Fail(call.position, fmt::format("sum needs a numeric argument, not {}", arg->ToString()));
  }
  if (f == "median" || f.starts_with("stddev") || f.starts_with("var")) {
    if (!arg->is_numeric()) ctx.Fail(call.position, fmt::format("{} needs a numeric argument, not {}", f, arg->ToString()));
    return DataType::Float64();
  }
  if (f == "string_agg") {
    if (!arg->is_string()) ctx.Fail(call.position, fmt::format("string_agg needs a string argument, not {}", arg->ToString()));
    return arg;
  }
  if (f == "bool_and" || f == "bool_or") {
    if (arg->id() != TypeId::kBool) ctx.Fail(call.position, fmt::format("{} needs a boolean argument, not {}", f, arg->ToString()));
    return arg;
  }
  return arg;  // min, max
}

// count of any column; sum, avg, min and max of an integer or float32/64 column; without
// DISTINCT: AggregateInPlace reads these in place, in row order, with the general path's
// results and errors (a Scalar per row costs 0.2 s on 1M rows).
bool AggregatesInPlace(const Aggregate& agg) {
  const Expr& call = *agg.call;
  const std::string& f = call.function;
  if (call.distinct || !agg.argument) return false;
  if (f == "count") return true;
  const TypeId id = agg.argument->type->id();
  const bool numeric = agg.argument->type->is_integer() || id == TypeId::kFloat32 || id == TypeId::kFloat64;
  return numeric && (f == "sum" || f == "avg" || f == "min" || f == "max");
}

Scalar AggregateInPlace(const Context& ctx, const Aggregate& agg, const std::vector<int64_t>& rows) {
  const Expr& call = *agg.call;
  const std::string& f = call.function;
  const ArrayData& a = *agg.argument;
  if (f == "count") {
    int64_t n = 0;
    for (int64_t r : rows) n += a.IsValid(r);
    return Scalar{DataType::Int64(), n};
  }
  return VisitStorage(a.type->id(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    if constexpr (!std::is_arithmetic_v<T>) {
      ThrowNotSupported("no in-place aggregate over {}", a.type->ToString());  // excluded by AggregatesInPlace
    } else {
      const T* values = a.values<T>();
      int64_t n = 0;
      if (f == "avg" || (f == "sum" && std::is_floating_point_v<T>)) {
        double sum = 0;
        for (int64_t r : rows)
          if (a.IsValid(r)) sum += double(values[r]), ++n;
        if (n == 0) return Scalar::Null(agg.type);
        return Scalar{DataType::Float64(), f == "avg" ? sum / double(n) : sum};
      }
      if constexpr (std::is_floating_point_v<T>) {
        // As CompareScalars orders them: NaN above every number, and of equals the first.
        auto before = [](double x, double y) { return std::isnan(y) ? !std::isnan(x) : !std::isnan(x) && x < y; };
        double best = 0;
        for (int64_t r : rows) {
          if (!a.IsValid(r)) continue;
          const double v = double(values[r]);
          if (n++ == 0 || (f == "min" ? before(v, best) : before(best, v))) best = v;
        }
        if (n == 0) return Scalar::Null(agg.type);
        return Scalar{agg.type, best};
      } else {
        using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
        Wide acc = 0;
        for (int64_t r : rows) {
          if (!a.IsValid(r)) continue;
          const Wide v = Wide(values[r]);
          if (f == "sum") {
            if (__builtin_add_overflow(acc, v, &acc))
              ctx.Fail(call.position, std::is_signed_v<T> ? "sum overflows int64" : "sum overflows uint64");
          } else if (n == 0 || (f == "min" ? v < acc : v > acc)) {
            acc = v;
          }
          ++n;
        }
        if (n == 0) return Scalar::Null(agg.type);
        return Scalar{agg.type, acc};
      }
    }
  });
}

Scalar ComputeAggregate(const Context& ctx, const Aggregate& agg, const std::vector<int64_t>& rows) {
  const Expr& call = *agg.call;
  const std::string& f = call.function;
  if (!agg.argument) return Scalar{DataType::Int64(), int64_t(rows.size())};
  if (AggregatesInPlace(agg)) return AggregateInPlace(ctx, agg, rows);
  std::set<std::string> seen;
  std::vector<Scalar> values;
  for (int64_t r : rows) {
    if (agg.argument->IsNull(r)) continue;
    if (call.distinct && !seen.insert(ValueKey(*agg.argument, r)).second) continue;
    values.push_back(GetScalar(*agg.argument, r));
  }
  if (f == "count") return Scalar{DataType::Int64(), int64_t(values.size())};
  if (values.empty()) return Scalar::Null(agg.type);
  if (f == "string_agg") {  // in row order
    const std::string separator = AggregateSeparator(ctx, call);
    std::string out;
    for (size_t k = 0; k < values.size(); ++k) out += (k ? separator : "") + values[k].as_string();
    return Scalar{agg.type, out};
  }
  if (f == "bool_and" || f == "bool_or") {
    const bool all = f == "bool_and";
    for (const auto& v : values)
      if (std::get<bool>(v.value) != all) return Scalar{agg.type, !all};
    return Scalar{agg.type, all};
  }
  if (f == "median") {  // the middle value, or the mean of the middle two
    std::vector<double> x;
    for (const auto& v : values) x.push_back(v.as_double());
    std::sort(x.begin(), x.end());
    const size_t m = x.size() / 2;
    return Scalar{agg.type, x.size() % 2 ? x[m] : (x[m - 1] + x[m]) / 2};
  }
  if (f.starts_with("stddev") || f.starts_with("var")) {  // two passes: the mean, then the squares
    const bool population = f.ends_with("_pop");
    if (!population && values.size() < 2) return Scalar::Null(agg.type);
    double mean = 0;
    for (const auto& v : values) mean += v.as_double();
    mean /= double(values.size());
    double squares = 0;
    for (const auto& v : values) squares += (v.as_double() - mean) * (v.as_double() - mean);
    const double variance = squares / double(population ? values.size() : values.size() - 1);
    return Scalar{agg.type, f.starts_with("stddev") ? std::sqrt(variance) : variance};
  }
  if (f == "min" || f == "max") {
    Scalar best = values[0];
    for (const auto& v : values) {
      int c = CompareScalars(v, best);
      if ((f == "min" && c < 0) || (f == "max" && c > 0)) best = v;
    }
    return best;
  }
  if (agg.type->id() == TypeId::kInt64 && f == "sum") {
    int64_t sum = 0;
    for (const auto& v : values)
      if (__builtin_add_overflow(sum, v.as_int(), &sum)) ctx.Fail(call.position, "sum overflows int64");
    return Scalar{agg.type, sum};
  }
  if (agg.type->id() == TypeId::kUInt64) {
    uint64_t sum = 0;
    for (const auto& v : values)
      if (__builtin_add_overflow(sum, v.as_uint(), &sum)) ctx.Fail(call.position, "sum overflows uint64");
    return Scalar{agg.type, sum};
  }
  double sum = 0;
  for (const auto& v : values) sum += v.as_double();
  if (f == "avg") sum /= double(values.size());
  return Scalar{DataType::Float64(), sum};
}

// Sorts row indices by the key columns.
std::vector<int64_t> SortOrder(const std::vector<ArrayPtr>& keys, const std::vector<OrderItem>& items, int64_t rows) {
  std::vector<std::vector<Scalar>> values(keys.size());
  for (size_t k = 0; k < keys.size(); ++k)
    for (int64_t r = 0; r < rows; ++r) values[k].push_back(GetScalar(*keys[k], r));
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Scalar& x = values[k][size_t(a)];
      const Scalar& y = values[k][size_t(b)];
      bool nulls_first = items[k].nulls_first.value_or(items[k].descending);
      if (x.is_null() || y.is_null()) {
        if (x.is_null() && y.is_null()) continue;
        return x.is_null() == nulls_first;
      }
      int c = CompareScalars(x, y);
      if (c != 0) return items[k].descending ? c > 0 : c < 0;
    }
    return false;
  });
  return order;
}

}  // namespace

RecordBatchPtr RunSelect(const Context& ctx, const SelectStmt& stmt, const SchemaPtr& column_types) {
  // Table qualifiers (u.age) are dropped: a SELECT reads one source.
  std::vector<std::string> qualifiers;
  if (stmt.from) qualifiers = {stmt.from->name, stmt.from->qualifier()};
  auto strip = [&](const ExprPtr& e) { return StripQualifier(e, qualifiers); };
  std::vector<SelectItem> items = stmt.items;
  for (auto& i : items) i.expr = strip(i.expr);
  ExprPtr where = strip(stmt.where);
  ExprPtr having = strip(stmt.having);
  std::vector<ExprPtr> group_by;
  for (const auto& g : stmt.group_by) group_by.push_back(strip(g));
  std::vector<OrderItem> order_by = stmt.order_by;
  for (auto& o : order_by) o.expr = strip(o.expr);

  // 1. Input rows.
  RecordBatchPtr input;
  if (stmt.from) {
    const std::set<std::string> used = NamedColumns(stmt);
    bool row_id = used.count(kRowId) > 0, row_addr = used.count(kRowAddr) > 0;
    auto ds = stmt.from->kind == TableRef::Kind::kTable ? OpenTable(ctx, *stmt.from) : nullptr;
    std::optional<std::vector<std::string>> projection;
    if (ds) projection = ColumnsRead(stmt, *ds->schema());
    std::string pushed;
    if (where) {
      // Validate against the table's columns first, so errors point into the statement.
      if (ds) {
        auto fields = ds->schema()->fields();
        if (row_id) fields.push_back(Field::Make(kRowId, DataType::UInt64()));
        if (row_addr) fields.push_back(Field::Make(kRowAddr, DataType::UInt64()));
        Bind(*where, Schema(fields));
        pushed = ToString(*where);
      }
    }
    input = ReadSource(ctx, *stmt.from, row_id, row_addr, pushed, column_types, projection, ds);
    if (where && pushed.empty()) input = input->Filter(EvaluatePredicate(*Bind(*where, *input->schema()), *input));
  } else {
    if (where) ctx.Fail(where->position, "WHERE needs a FROM clause");
    input = EmptyRowsBatch(1);
  }

  // Expand *: every column of the source, without pseudo-columns.
  std::vector<SelectItem> expanded;
  for (const auto& i : items) {
    if (i.expr) {
      expanded.push_back(i);
      continue;
    }
    if (!stmt.from) ctx.Fail(1, "SELECT * needs a FROM clause");
    for (const auto& f : input->schema()->fields()) {
      if (f->name == kRowId || f->name == kRowAddr) continue;
      expanded.push_back({Expr::Column(f->name), ""});
    }
  }
  items = std::move(expanded);
  std::vector<std::string> names;  // output names, taken before aggregates are rewritten
  for (const auto& i : items) names.push_back(OutputName(i));

  // GROUP BY a select-list position (1-based) or an output alias that names no input
  // column stands for that item's expression, as in DuckDB.
  for (auto& g : group_by) {
    if (g->kind == ExprKind::kLiteral && !g->literal.is_null() && g->literal.type && g->literal.type->is_integer()) {
      const int64_t n = g->literal.as_int();
      if (n < 1 || n > int64_t(items.size()))
        ctx.Fail(g->position, fmt::format("GROUP BY position {} is not in the select list (1 to {})", n, items.size()));
      if (ContainsAggregate(items[size_t(n - 1)].expr))
        ctx.Fail(g->position, fmt::format("GROUP BY position {} is an aggregate", n));
      g = items[size_t(n - 1)].expr;
    } else if (g->kind == ExprKind::kColumn && g->path.size() == 1 &&
               input->schema()->FieldIndex(g->path[0]) < 0) {
      for (const auto& i : items)
        if (!i.alias.empty() && i.alias == g->path[0] && !ContainsAggregate(i.expr)) {
          g = i.expr;
          break;
        }
    }
  }
  // SELECT DISTINCT: one row per distinct select list, i.e. grouped by every item.
  if (stmt.distinct) {
    if (!group_by.empty() || ContainsAggregate(having) ||
        std::any_of(items.begin(), items.end(), [](const SelectItem& i) { return ContainsAggregate(i.expr); }))
      ctx.Fail(1, "SELECT DISTINCT with aggregates or GROUP BY is not supported yet");
    for (const auto& i : items) group_by.push_back(i.expr);
  }

  bool aggregate = !group_by.empty() || ContainsAggregate(having);
  for (const auto& i : items) aggregate |= ContainsAggregate(i.expr);
  for (const auto& o : order_by) aggregate |= ContainsAggregate(o.expr);

  // 2. Grouping: aggregates become columns __agg<i>, group keys __grp<j> of a batch with
  // one row per group, and the projection is evaluated over that batch.
  RecordBatchPtr source = input;
  if (aggregate) {
    std::vector<std::string> group_text;
    std::vector<ArrayPtr> group_values;
    for (const auto& g : group_by) {
      if (ContainsAggregate(g)) ctx.Fail(g->position, "aggregate functions are not allowed in GROUP BY");
      group_text.push_back(ToString(*g));
      group_values.push_back(EvaluateOn(g, *input));
    }
    std::vector<Aggregate> aggregates;
    std::function<ExprPtr(const ExprPtr&)> rewrite = [&](const ExprPtr& e) -> ExprPtr {
      std::string text = ToString(*e);
      for (size_t j = 0; j < group_text.size(); ++j)
        if (text == group_text[j]) {
          auto column = std::make_shared<Expr>(*e);
          column->kind = ExprKind::kColumn;
          column->args.clear();
          column->path = {fmt::format("__grp{}", j)};
          return column;
        }
      if (e->kind == ExprKind::kCall && IsAggregateName(e->function)) {
        for (const auto& a : e->args)
          if (ContainsAggregate(a)) ctx.Fail(a->position, "aggregate function calls cannot be nested");
        if (e->function == "string_agg" && (e->args.size() == 1 || e->args.size() == 2)) {
          AggregateSeparator(ctx, *e);  // checked before any row is read
        } else if (!e->star_argument && e->args.size() != 1) {
          ctx.Fail(e->position, fmt::format("{} takes exactly one argument", e->function));
        }
        Aggregate agg;
        agg.call = e;
        if (!e->star_argument) agg.argument = EvaluateOn(e->args[0], *input);
        agg.type = AggregateType(ctx, *e, agg.argument ? agg.argument->type : nullptr);
        auto column = std::make_shared<Expr>(*e);
        column->kind = ExprKind::kColumn;
        column->args.clear();
        column->path = {fmt::format("__agg{}", aggregates.size())};
        aggregates.push_back(agg);
        return column;
      }
      if (e->kind == ExprKind::kColumn)
        ctx.Fail(e->position, fmt::format("column '{}' must appear in GROUP BY or be used in an aggregate function",
                                          fmt::join(e->path, ".")));
      auto copy = std::make_shared<Expr>(*e);
      for (auto& a : copy->args) a = rewrite(a);
      return copy;
    };
    for (auto& i : items) i.expr = rewrite(i.expr);
    if (having) having = rewrite(having);
    for (auto& o : order_by) {
      // ORDER BY may name an output column; leave those for the projection step.
      bool alias = o.expr->kind == ExprKind::kColumn && o.expr->path.size() == 1 &&
                   std::find(names.begin(), names.end(), o.expr->path[0]) != names.end();
      bool ordinal = o.expr->kind == ExprKind::kLiteral;
      if (!alias && !ordinal) o.expr = rewrite(o.expr);
    }

    std::vector<std::vector<int64_t>> groups;
    std::unordered_map<std::string, size_t> group_of;
    if (group_values.empty()) {  // one group, every row: no key to build per row
      groups.emplace_back(size_t(input->num_rows()));
      std::iota(groups[0].begin(), groups[0].end(), int64_t(0));
    }
    for (int64_t r = 0; r < input->num_rows() && !group_values.empty(); ++r) {
      std::string key;
      for (const auto& g : group_values) key += ValueKey(*g, r) + '\0';
      auto [it, inserted] = group_of.emplace(key, groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(r);
    }
    if (groups.empty() && group_by.empty()) groups.emplace_back();  // SELECT count(*) FROM empty
    std::vector<FieldPtr> fields;
    std::vector<ArrayPtr> columns;
    std::vector<int64_t> firsts;
    for (const auto& g : groups) firsts.push_back(g.empty() ? 0 : g[0]);
    for (size_t j = 0; j < group_values.size(); ++j) {
      fields.push_back(Field::Make(fmt::format("__grp{}", j), group_values[j]->type));
      columns.push_back(Take(*group_values[j], firsts));
    }
    for (size_t a = 0; a < aggregates.size(); ++a) {
      std::vector<Scalar> values;
      for (const auto& g : groups) values.push_back(ComputeAggregate(ctx, aggregates[a], g));
      fields.push_back(Field::Make(fmt::format("__agg{}", a), aggregates[a].type));
      columns.push_back(MakeArray(aggregates[a].type, values));
    }
    source = std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, int64_t(groups.size()));
    if (having) source = source->Filter(EvaluatePredicate(*Bind(*having, *source->schema()), *source));
  } else if (having) {
    ctx.Fail(having->position, "HAVING needs GROUP BY or an aggregate");
  }

  // 3. Projection.
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (size_t k = 0; k < items.size(); ++k) {
    ArrayPtr values = EvaluateOn(items[k].expr, *source);
    fields.push_back(Field::Make(names[k], values->type));
    columns.push_back(values);
  }
  auto output = std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, source->num_rows());

  // 4. ORDER BY: an output position (1-based), an output name, or an expression over the
  // source rows.
  if (!order_by.empty()) {
    std::vector<ArrayPtr> keys;
    for (const auto& o : order_by) {
      const Expr& e = *o.expr;
      if (e.kind == ExprKind::kLiteral && !e.literal.is_null() && e.literal.type && e.literal.type->is_integer()) {
        int64_t n = e.literal.as_int();
        if (n < 1 || n > int64_t(columns.size()))
          ctx.Fail(e.position, fmt::format("ORDER BY position {} is not in the select list (1 to {})", n, columns.size()));
        keys.push_back(columns[size_t(n - 1)]);
        continue;
      }
      int index = -1;
      if (e.kind == ExprKind::kColumn && e.path.size() == 1) {
        for (size_t i = 0; i < fields.size(); ++i)
          if (fields[i]->name == e.path[0] && !items[i].alias.empty()) index = int(i);
        if (index < 0 && source->schema()->FieldIndex(e.path[0]) < 0)
          for (size_t i = 0; i < fields.size(); ++i)
            if (fields[i]->name == e.path[0]) index = int(i);
      }
      keys.push_back(index >= 0 ? columns[size_t(index)] : EvaluateOn(o.expr, *source));
    }
    output = output->Take(SortOrder(keys, order_by, output->num_rows()));
  }

  // 5. OFFSET / LIMIT.
  int64_t start = std::min(stmt.offset, output->num_rows());
  int64_t length = output->num_rows() - start;
  if (stmt.limit) length = std::min(length, *stmt.limit);
  if (start > 0 || length < output->num_rows()) output = output->Slice(start, length);
  return output;
}

}  // namespace lancelet::sql
