#include "index/index_query.h"

namespace lancelet::index {

namespace {

ExprPtr MakeNode(ExprKind kind, std::vector<ExprPtr> args, bool negated) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->args = std::move(args);
  e->negated = negated;
  return e;
}

bool IsLiteral(const ExprPtr& e) { return e->kind == ExprKind::kLiteral; }

// The column `e` names, a struct path joined with '.' ("a.b"), or empty.
std::string ColumnOf(const Expr& e) {
  if (e.kind != ExprKind::kColumn) return {};
  std::string out;
  for (const auto& part : e.path) out += (out.empty() ? "" : ".") + part;
  return out;
}

IndexQuery Any() { return IndexQuery{}; }

IndexQuery Leaf(std::string column, IndexLeaf::Op op, bool negated, std::vector<ExprPtr> literals) {
  IndexQuery q;
  q.kind = IndexQuery::Kind::kLeaf;
  q.leaf = IndexLeaf{std::move(column), op, negated, std::move(literals)};
  return q;
}

IndexQuery Convert(const Expr& e, bool negated, const std::function<bool(const std::string&)>& indexed) {
  switch (e.kind) {
    case ExprKind::kUnary:
      if (e.unary_op == UnaryOp::kNot) return Convert(*e.args[0], !negated, indexed);
      return Any();
    case ExprKind::kBinary: {
      const BinaryOp op = e.binary_op;
      if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
        // NOT (a AND b) = NOT a OR NOT b, and the other way round.
        const bool conjunction = (op == BinaryOp::kAnd) != negated;
        IndexQuery q;
        q.kind = conjunction ? IndexQuery::Kind::kAnd : IndexQuery::Kind::kOr;
        for (const auto& arg : e.args) {
          IndexQuery child = Convert(*arg, negated, indexed);
          if (child.kind == IndexQuery::Kind::kAny) {
            if (!conjunction) return Any();  // an OR with an unanswerable side
            continue;
          }
          q.children.push_back(std::move(child));
        }
        if (q.children.empty()) return Any();
        if (q.children.size() == 1) return std::move(q.children[0]);
        return q;
      }
      if (!IsComparison(op) || op == BinaryOp::kNe) {
        // a <> b is NOT (a = b).
        if (op == BinaryOp::kNe) return Convert(*Expr::Binary(BinaryOp::kEq, e.args[0], e.args[1]), !negated, indexed);
        return Any();
      }
      std::string column = ColumnOf(*e.args[0]);
      ExprPtr literal = e.args[1];
      bool flipped = false;
      if (column.empty()) {
        column = ColumnOf(*e.args[1]);
        literal = e.args[0];
        flipped = true;
      }
      if (column.empty() || !IsLiteral(literal) || !indexed(column)) return Any();
      IndexLeaf::Op leaf_op = IndexLeaf::Op::kEq;
      switch (op) {
        case BinaryOp::kEq: leaf_op = IndexLeaf::Op::kEq; break;
        case BinaryOp::kLt: leaf_op = flipped ? IndexLeaf::Op::kGt : IndexLeaf::Op::kLt; break;
        case BinaryOp::kLe: leaf_op = flipped ? IndexLeaf::Op::kGe : IndexLeaf::Op::kLe; break;
        case BinaryOp::kGt: leaf_op = flipped ? IndexLeaf::Op::kLt : IndexLeaf::Op::kGt; break;
        case BinaryOp::kGe: leaf_op = flipped ? IndexLeaf::Op::kLe : IndexLeaf::Op::kGe; break;
        default: return Any();
      }
      return Leaf(column, leaf_op, negated, {literal});
    }
    case ExprKind::kBetween: {
      const std::string column = ColumnOf(*e.args[0]);
      if (column.empty() || !indexed(column) || !IsLiteral(e.args[1]) || !IsLiteral(e.args[2])) return Any();
      return Leaf(column, IndexLeaf::Op::kBetween, negated != e.negated, {e.args[1], e.args[2]});
    }
    case ExprKind::kIn: {
      const std::string column = ColumnOf(*e.args[0]);
      if (column.empty() || !indexed(column)) return Any();
      std::vector<ExprPtr> list(e.args.begin() + 1, e.args.end());
      for (const auto& item : list)
        if (!IsLiteral(item)) return Any();
      return Leaf(column, IndexLeaf::Op::kIn, negated != e.negated, std::move(list));
    }
    case ExprKind::kIsNull: {
      const std::string column = ColumnOf(*e.args[0]);
      if (column.empty() || !indexed(column)) return Any();
      return Leaf(column, IndexLeaf::Op::kIsNull, negated != e.negated, {});
    }
    default:
      return Any();
  }
}

}  // namespace

ExprPtr IndexLeaf::ToExpr(const std::string& as_column) const { return Over(Expr::Column(as_column)); }

ExprPtr IndexLeaf::Over(const ExprPtr& c) const {
  ExprPtr e;
  switch (op) {
    case Op::kEq: e = Expr::Binary(BinaryOp::kEq, c, literals[0]); break;
    case Op::kLt: e = Expr::Binary(BinaryOp::kLt, c, literals[0]); break;
    case Op::kLe: e = Expr::Binary(BinaryOp::kLe, c, literals[0]); break;
    case Op::kGt: e = Expr::Binary(BinaryOp::kGt, c, literals[0]); break;
    case Op::kGe: e = Expr::Binary(BinaryOp::kGe, c, literals[0]); break;
    case Op::kBetween: e = MakeNode(ExprKind::kBetween, {c, literals[0], literals[1]}, false); break;
    case Op::kIn: {
      std::vector<ExprPtr> args = {c};
      args.insert(args.end(), literals.begin(), literals.end());
      e = MakeNode(ExprKind::kIn, std::move(args), false);
      break;
    }
    case Op::kIsNull: e = IsNullExpr(c, false); break;
  }
  return negated ? Expr::Unary(UnaryOp::kNot, e) : e;
}

std::function<std::vector<int64_t>(const ArrayData&)> IndexLeaf::Selector(const TypePtr& type) const {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("values", type)});
  std::shared_ptr<const BoundExpr> bound = Bind(*ToExpr("values"), *schema);
  return [bound, schema](const ArrayData& values) {
    return EvaluateSelection(*bound, RecordBatch(schema, {std::make_shared<ArrayData>(values)}, values.length));
  };
}

ExprPtr IndexLeaf::AsFilter() const {
  auto c = std::make_shared<Expr>(*Expr::Column(""));
  c->path.clear();
  for (size_t start = 0;;) {  // the struct path the filter named, a.b as [a, b]
    const size_t dot = column.find('.', start);
    c->path.push_back(column.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return Over(c);
}

std::string IndexLeaf::ToString() const { return lancelet::ToString(*AsFilter()); }

ExprPtr IsNullExpr(ExprPtr operand, bool negated) { return MakeNode(ExprKind::kIsNull, {std::move(operand)}, negated); }

IndexQuery IndexQuery::FromFilter(const Expr& filter, const std::function<bool(const std::string&)>& indexed) {
  return Convert(filter, false, indexed);
}

void IndexQuery::Leaves(std::vector<const IndexLeaf*>& out) const {
  if (kind == Kind::kLeaf) out.push_back(&leaf);
  for (const auto& child : children) child.Leaves(out);
}

}  // namespace lancelet::index
