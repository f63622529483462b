// Which ORDER BY keys a vector index can serve, and the search that serves them. The
// search finds the OFFSET + LIMIT candidates; the statement then computes its select
// list and its key over those rows as over any others, so the key's values are exact
// (float64) whichever distances the index estimated.
#include "sql/nearest.h"

#include <cmath>

#include <fmt/format.h>

#include "lancelet/error.h"
#include "expr/functions.h"
#include "sql/aggregate.h"
#include "sql/exec.h"

namespace lancelet::sql {
namespace {

// How a function ranks nearest first: by a metric, ascending or descending.
struct Ranking {
  DistanceType distance = DistanceType::kL2;
  bool descending = false;
};

std::optional<Ranking> RankingOf(const std::string& function) {
  const std::optional<VectorMeasure> measure = VectorMeasureOf(function);
  if (!measure) return std::nullopt;
  switch (*measure) {
    case VectorMeasure::kDistance:
    case VectorMeasure::kL2Squared: return Ranking{DistanceType::kL2, false};
    case VectorMeasure::kCosineDistance: return Ranking{DistanceType::kCosine, false};
    case VectorMeasure::kCosineSimilarity: return Ranking{DistanceType::kCosine, true};
    case VectorMeasure::kNegativeInnerProduct: return Ranking{DistanceType::kDot, false};
    case VectorMeasure::kInnerProduct: return Ranking{DistanceType::kDot, true};
  }
  return std::nullopt;
}

// Window calls and subqueries keep a statement from being served.
bool HasWindowOrSubquery(const ExprPtr& e) { return ContainsWindow(e) || HasSubquery(e); }

// The ORDER BY key's expression: a select item's when the key is its position or alias.
ExprPtr KeyExpression(const SelectStmt& stmt, const ExprPtr& key) {
  if (key->kind == ExprKind::kLiteral && !key->literal.is_null() && key->literal.type &&
      key->literal.type->is_integer()) {
    const int64_t n = key->literal.as_int();
    if (n < 1 || n > int64_t(stmt.items.size())) return nullptr;
    return stmt.items[size_t(n - 1)].expr;
  }
  if (key->kind == ExprKind::kColumn && key->path.size() == 1)
    for (const auto& item : stmt.items)
      if (!item.alias.empty() && item.alias == key->path[0]) return item.expr;
  return key;
}

// Drops the search's `_distance`: the statement computes its own key.
class WithoutDistance final : public RecordBatchReader {
 public:
  explicit WithoutDistance(std::unique_ptr<RecordBatchReader> input) : input_(std::move(input)) {
    std::vector<FieldPtr> fields = input_->schema()->fields();
    fields.pop_back();
    schema_ = std::make_shared<Schema>(std::move(fields));
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    RecordBatchPtr batch = input_->Next();
    if (!batch) return nullptr;
    std::vector<ArrayPtr> columns = batch->columns();
    columns.pop_back();
    return RecordBatch::Make(schema_, std::move(columns));
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  SchemaPtr schema_;
};

}  // namespace

std::optional<std::vector<double>> ConstantVector(const ExprPtr& e) {
  if (!ReferencedColumns(*e).empty() || HasWindowOrSubquery(e))
    return std::nullopt;
  try {
    const Scalar value = EvaluateConstant(*e);
    if (value.is_null() || !value.type || !(value.type->is_list() || value.type->id() == TypeId::kFixedSizeList))
      return std::nullopt;
    std::vector<double> out;
    for (const Scalar& item : value.as_list()) {
      if (item.is_null()) return std::nullopt;
      const double v = item.as_double();
      if (!std::isfinite(v)) return std::nullopt;
      out.push_back(v);
    }
    return out;
  } catch (const Error&) {
    return std::nullopt;  // the statement reports it when it evaluates the key
  }
}

std::optional<NearestPlan> PlanNearest(const SelectStmt& stmt, const ExprPtr& where, const Dataset& ds) {
  if (!stmt.from || stmt.from->kind != TableRef::Kind::kTable || !stmt.joins.empty() || !stmt.union_parts.empty() ||
      stmt.distinct || !stmt.group_by.empty() || stmt.having || stmt.qualify || !stmt.limit || stmt.order_by.size() != 1)
    return std::nullopt;
  const int64_t k = stmt.offset + *stmt.limit;
  if (k < 1 || HasWindowOrSubquery(where)) return std::nullopt;
  for (const auto& item : stmt.items)
    if (ContainsAggregate(item.expr) || HasWindowOrSubquery(item.expr)) return std::nullopt;
  const OrderItem& order = stmt.order_by[0];
  const std::vector<std::string> qualifiers = {stmt.from->name, stmt.from->qualifier()};
  const ExprPtr key = KeyExpression(stmt, StripQualifier(order.expr, qualifiers));
  if (!key || key->kind != ExprKind::kCall || key->window || key->args.size() != 2) return std::nullopt;
  const std::optional<Ranking> ranking = RankingOf(key->function);
  // NULL keys (rows without a vector) must sort after the nearest: the index has none.
  const bool nulls_last = !order.nulls_first.value_or(false);
  if (!ranking || ranking->descending != order.descending || !nulls_last) return std::nullopt;

  const ExprPtr column = StripQualifier(key->args[0], qualifiers), other = StripQualifier(key->args[1], qualifiers);
  const bool column_first = column->kind == ExprKind::kColumn;
  const Expr& column_ref = column_first ? *column : *other;
  if (column_ref.kind != ExprKind::kColumn || column_ref.path.size() != 1) return std::nullopt;
  const std::optional<std::vector<double>> vector = ConstantVector(column_first ? other : column);
  const SchemaPtr schema = ds.schema();
  const int field = schema->FieldIndex(column_ref.path[0]);
  if (!vector || field < 0 || schema->field(field)->type->id() != TypeId::kFixedSizeList ||
      int64_t(vector->size()) != schema->field(field)->type->fixed_size())
    return std::nullopt;
  std::optional<VectorIndexUse> index = ds.VectorIndexOn(column_ref.path[0]);
  if (!index || index->distance != DistanceTypeName(ranking->distance)) return std::nullopt;

  NearestPlan plan;
  plan.query.column = column_ref.path[0];
  plan.query.vector = *vector;
  plan.query.k = k;
  plan.query.distance = ranking->distance;
  plan.query.filter_expr = where;
  plan.index = std::move(*index);
  plan.order_key = ToString(*order.expr);
  SelectStmt chosen = stmt;
  chosen.where = nullptr;
  plan.columns = ColumnsRead(chosen, *schema);
  return plan;
}

std::unique_ptr<RecordBatchReader> OpenNearest(const NearestPlan& plan, const Dataset& ds, bool row_id, bool row_addr) {
  VectorQuery query = plan.query;
  query.columns.emplace();
  if (plan.columns) {
    *query.columns = *plan.columns;
  } else {
    for (const auto& f : ds.schema()->fields()) query.columns->push_back(f->name);
  }
  if (row_id) query.columns->push_back("_rowid");
  if (row_addr) query.columns->push_back("_rowaddr");
  return std::make_unique<WithoutDistance>(ds.Search(query));
}

std::string ExplainNearest(const NearestPlan& plan, const SelectStmt& stmt, const Dataset& ds) {
  std::string out = ds.ExplainSearch(plan.query);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  out += fmt::format("\nthen: the {} nearest re-scored exactly by ORDER BY {}{}, LIMIT {}", plan.query.k,
                     plan.order_key, stmt.order_by[0].descending ? " DESC" : "",
                     *stmt.limit);
  if (stmt.offset > 0) out += fmt::format(" OFFSET {}", stmt.offset);
  return out;
}

}  // namespace lancelet::sql
