// Binding: columns to fields, literals and operators to types, implicit conversions to
// explicit kCast nodes (folded right away when their operand is a literal).
#include <cctype>

#include "array/ascii_case.h"
#include "lancelet/decimal.h"
#include "expr/cast.h"
#include "expr/errors.h"
#include "expr/exact_literals.h"
#include "expr/functions.h"
#include "expr/type_rules.h"
#include "lancelet/expr.h"

namespace lancelet {

namespace {

using MutableBound = std::shared_ptr<BoundExpr>;

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }
bool IsListKind(const DataType& t) { return t.is_list() || t.id() == TypeId::kFixedSizeList; }
bool IsOrdinal(const DataType& t) { return t.is_numeric(); }

class Binder {
 public:
  // `known` only names the columns in an unknown-column error (see Bind with known).
  Binder(const Schema& schema, const Schema& known) : schema_(schema), known_(known) {}

  // The result may be an untyped NULL literal (type null); callers coerce it.
  BoundExprPtr Bind(const ExprPtr& e) {
    switch (e->kind) {
      case ExprKind::kLiteral: {
        auto b = Node(BoundKind::kLiteral, e->literal.type, e);
        b->literal = e->literal;
        return b;
      }
      case ExprKind::kColumn: return BindColumn(e);
      case ExprKind::kList: return BindList(e);
      case ExprKind::kUnary: return e->unary_op == UnaryOp::kNot ? BindNot(e) : BindNegate(e);
      case ExprKind::kBinary: {
        if (e->binary_op == BinaryOp::kAdd || e->binary_op == BinaryOp::kSub)
          if (BoundExprPtr shifted = BindIntervalArithmetic(e)) return shifted;
        BoundExprPtr l = Bind(e->args[0]), r = Bind(e->args[1]);
        if (e->binary_op == BinaryOp::kAnd || e->binary_op == BinaryOp::kOr) {
          auto b = Node(BoundKind::kLogical, DataType::Bool(), e);
          b->op = e->binary_op;
          b->args = {RequireBool(l, e), RequireBool(r, e)};
          return b;
        }
        if (IsComparison(e->binary_op)) return BindComparison(e->binary_op, l, r, e);
        if (l->kind == BoundKind::kLiteral && r->kind == BoundKind::kLiteral && AsWritten(e->args[0]) &&
            AsWritten(e->args[1]))
          if (const std::optional<double> exact = ExactLiteralArithmetic(e->binary_op, l->literal, r->literal)) {
            auto b = Node(BoundKind::kLiteral, DataType::Float64(), e);
            b->literal = Scalar{DataType::Float64(), *exact};
            return b;
          }
        return BindArithmetic(e->binary_op, l, r, e);
      }
      case ExprKind::kIn: {
        // An untyped NULL operand stays untyped: each comparison types its own copy.
        BoundExprPtr x = Bind(e->args[0]);
        auto b = Node(BoundKind::kIn, DataType::Bool(), e);
        b->negated = e->negated;
        b->args.push_back(x);
        for (size_t i = 1; i < e->args.size(); ++i) b->args.push_back(BindComparison(BinaryOp::kEq, x, Bind(e->args[i]), e));
        return b;
      }
      case ExprKind::kBetween: {
        BoundExprPtr x = Bind(e->args[0]);
        auto b = Node(BoundKind::kBetween, DataType::Bool(), e);
        b->negated = e->negated;
        b->args = {x, BindComparison(BinaryOp::kGe, x, Bind(e->args[1]), e),
                   BindComparison(BinaryOp::kLe, x, Bind(e->args[2]), e)};
        return b;
      }
      case ExprKind::kIsNull: {
        auto b = Node(BoundKind::kIsNull, DataType::Bool(), e);
        b->negated = e->negated;
        b->args = {Finalize(Bind(e->args[0]), e)};
        return b;
      }
      case ExprKind::kLike: return BindLike(e);
      case ExprKind::kCast: {
        BoundExprPtr x = Bind(e->args[0]);
        if (!e->assign_to.empty()) return BindAssign(x, e);
        if (x->type && !CanCast(*x->type, *e->cast_type))
          ThrowAt(e.get(), fmt::format("cannot cast {} to {}", x->type->ToString(), e->cast_type->ToString()));
        return Coerce(x, e->cast_type, e);
      }
      case ExprKind::kCall:
        if (e->window)
          ThrowAt(e.get(), fmt::format("window function {}() is allowed only in a SELECT's select list and ORDER BY",
                                       e->function));
        return BindCall(e);
      case ExprKind::kSubquery: ThrowAt(e.get(), "a subquery is allowed only in a SQL statement");
    }
    ThrowAt(e.get(), "unknown expression kind");
  }

  // An untyped NULL becomes a NULL of `target`; otherwise a cast (folded for literals).
  BoundExprPtr Coerce(const BoundExprPtr& b, const TypePtr& target, const ExprPtr& at) {
    if (!b->type) {
      auto n = Node(BoundKind::kLiteral, target, b->origin ? b->origin : at);
      n->literal = Scalar::Null(target);
      return n;
    }
    if (b->type->Equals(*target)) return b;
    if (b->kind == BoundKind::kLiteral) {
      auto n = Node(BoundKind::kLiteral, target, b->origin ? b->origin : at);
      try {
        n->literal = CastScalar(b->literal, target);
      } catch (const ParseError&) {
        throw;
      } catch (const Error& err) {
        ThrowAt((b->origin ? b->origin : at).get(), err.what());
      }
      return n;
    }
    auto n = Node(BoundKind::kCast, target, at);
    n->args = {b};
    return n;
  }

  // An assignment cast: literals are converted now, so that a lossy one is reported
  // with its value; other operands are checked by type here and by value when evaluated.
  BoundExprPtr BindAssign(const BoundExprPtr& x, const ExprPtr& e) {
    const TypePtr& target = e->cast_type;
    if (!x->type || x->type->Equals(*target)) return Coerce(x, target, e);
    const ExprPtr& at = x->origin ? x->origin : e;
    if (x->kind == BoundKind::kLiteral) {
      auto n = Node(BoundKind::kLiteral, target, at);
      try {
        n->literal = AssignScalar(x->literal, target);
      } catch (const ParseError&) {
        throw;
      } catch (const Error& err) {
        ThrowAt(at.get(), fmt::format("column '{}': {}", e->assign_to, err.what()));
      }
      return n;
    }
    if (!CanAssign(*x->type, *target))
      ThrowAt(at.get(), fmt::format("column '{}': cannot assign {} to {}", e->assign_to, x->type->ToString(),
                                    target->ToString()));
    auto n = Node(BoundKind::kCast, target, at);  // errors point at the value
    n->assign_to = e->assign_to;
    n->args = {x};
    return n;
  }

  BoundExprPtr Finalize(const BoundExprPtr& b, const ExprPtr& at) {
    return b->type ? b : Coerce(b, DataType::Bool(), at);
  }

 private:
  MutableBound Node(BoundKind kind, TypePtr type, const ExprPtr& origin) {
    auto b = std::make_shared<BoundExpr>();
    b->kind = kind;
    b->type = std::move(type);
    b->origin = origin;
    return b;
  }

  BoundExprPtr RequireBool(const BoundExprPtr& b, const ExprPtr& at) {
    BoundExprPtr f = Finalize(b, at);
    if (f->type->id() != TypeId::kBool) {
      const char* what = at->kind == ExprKind::kUnary ? "NOT" : BinaryOpSymbol(at->binary_op);
      ThrowAt(at.get(), fmt::format("{} expects boolean operands, got {}", what, f->type->ToString()));
    }
    return f;
  }

  // Exact match first, then a unique case-insensitive one; -1 if none.
  int FindField(const std::vector<FieldPtr>& fields, const std::string& name, const ExprPtr& e) {
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i]->name == name) return int(i);
    int found = -1;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!EqualsIgnoringAsciiCase(fields[i]->name, name)) continue;
      if (found >= 0)
        ThrowAt(e.get(), fmt::format("column reference '{}' is ambiguous: it matches '{}' and '{}'", name,
                                     fields[size_t(found)]->name, fields[i]->name));
      found = int(i);
    }
    return found;
  }

  BoundExprPtr BindColumn(const ExprPtr& e) {
    const auto& path = e->path;
    int top = FindField(schema_.fields(), path[0], e);
    size_t consumed = 1;
    if (top < 0) {
      // A top-level field whose name contains dots: "a.b" unquoted.
      std::string joined = path[0];
      for (size_t k = 1; k < path.size() && top < 0; ++k) {
        joined += "." + path[k];
        int i = FindField(schema_.fields(), joined, e);
        if (i >= 0) {
          top = i;
          consumed = k + 1;
        }
      }
    }
    if (top < 0) {
      std::string names;
      for (const auto& f : known_.fields()) names += (names.empty() ? "" : ", ") + f->name;
      ThrowAt(e.get(), fmt::format("unknown column '{}' (columns: {})", path[0], names.empty() ? "none" : names));
    }
    const FieldPtr& field = schema_.field(size_t(top));
    auto b = Node(BoundKind::kColumn, field->type, e);
    b->column_name = field->name;
    b->column_index = top;
    std::string walked = field->name;
    for (size_t k = consumed; k < path.size(); ++k) {
      if (b->type->id() != TypeId::kStruct)
        ThrowAt(e.get(), fmt::format("'{}' is {}, not a struct, so it has no field '{}'", walked,
                                     b->type->ToString(), path[k]));
      int child = FindField(b->type->children(), path[k], e);
      if (child < 0) ThrowAt(e.get(), fmt::format("struct '{}' has no field '{}'", walked, path[k]));
      b->child_path.push_back(child);
      walked += "." + b->type->child(size_t(child))->name;
      b->type = b->type->child(size_t(child))->type;
    }
    return b;
  }

  // [a, b, ...]: a literal when every item is a constant, else list_value(a, b, ...).
  BoundExprPtr BindList(const ExprPtr& e) {
    std::vector<BoundExprPtr> items;
    TypePtr item_type;
    for (const auto& a : e->args) {
      BoundExprPtr item = Bind(a);
      if (item->kind != BoundKind::kLiteral) {
        auto call = std::make_shared<Expr>(*e);
        call->kind = ExprKind::kCall;
        call->function = "list_value";
        return BindCall(call);
      }
      TypePtr next = CommonType(item_type, item->type);
      if (!next && item->type)
        ThrowAt(a.get(), fmt::format("vector literal mixes {} and {}", TypeName(item_type), TypeName(item->type)));
      item_type = next;
      items.push_back(item);
    }
    if (!item_type) item_type = DataType::Float64();
    std::vector<Scalar> values;
    for (auto& item : items) values.push_back(Coerce(item, item_type, e)->literal);
    TypePtr type = DataType::List(item_type);
    auto b = Node(BoundKind::kLiteral, type, e);
    b->literal = Scalar{type, std::move(values)};
    return b;
  }

  BoundExprPtr BindNot(const ExprPtr& e) {
    auto b = Node(BoundKind::kNot, DataType::Bool(), e);
    b->args = {RequireBool(Bind(e->args[0]), e)};
    return b;
  }

  BoundExprPtr BindNegate(const ExprPtr& e) {
    BoundExprPtr x = Bind(e->args[0]);
    if (!x->type) x = Coerce(x, DataType::Int64(), e);
    if (!x->type->is_numeric()) ThrowAt(e.get(), fmt::format("cannot negate a {} value", x->type->ToString()));
    if (x->type->is_integer() && !x->type->is_signed_integer()) x = Coerce(x, DataType::Int64(), e);
    if (x->type->id() == TypeId::kFloat16) x = Coerce(x, DataType::Float32(), e);
    auto b = Node(BoundKind::kNegate, x->type, e);
    b->args = {x};
    return b;
  }

  // A literal compared with a decimal column must keep its value at the column's scale:
  // rounding 0.005 to 0.01 would change which rows `x > 0.005` selects.
  BoundExprPtr CoerceExactly(const BoundExprPtr& literal, const TypePtr& to, const ExprPtr& at) {
    if (to->is_decimal() && !literal->literal.is_null() && !literal->literal.type->is_decimal()) {
      bool rounded = false;
      ParseDecimal(CastScalar(literal->literal, DataType::Utf8()).as_string(), *to, &rounded);
      if (rounded)
        ThrowAt(at.get(), fmt::format("{} has more fraction digits than {} keeps", DescribeValue(literal->literal),
                                      to->ToString()));
    }
    return Coerce(literal, to, at);
  }

  BoundExprPtr BindComparison(BinaryOp op, BoundExprPtr l, BoundExprPtr r, const ExprPtr& at) {
    if (!l->type && !r->type) {
      l = Coerce(l, DataType::Bool(), at);
      r = Coerce(r, DataType::Bool(), at);
    } else if (!l->type) {
      l = Coerce(l, r->type, at);
    } else if (!r->type) {
      r = Coerce(r, l->type, at);
    }
    const DataType& lt = *l->type;
    const DataType& rt = *r->type;
    auto fail = [&]() {
      ThrowAt(at.get(), fmt::format("cannot compare {} with {}", lt.ToString(), rt.ToString()));
    };
    if (IsOrdinal(lt) && IsOrdinal(rt)) {
      // A float64 literal against a float32 value is compared at float32 (SQL engines
      // type the literal by its context; `f32 = 0.1` should find 0.1f).
      auto narrow = [](const DataType& t) { return t.id() == TypeId::kFloat32 || t.id() == TypeId::kFloat16; };
      if (narrow(lt) && r->kind == BoundKind::kLiteral && rt.id() == TypeId::kFloat64)
        r = Coerce(r, DataType::Float32(), at);
      if (narrow(rt) && l->kind == BoundKind::kLiteral && lt.id() == TypeId::kFloat64)
        l = Coerce(l, DataType::Float32(), at);
    } else if (lt.id() == TypeId::kBool && rt.id() == TypeId::kBool) {
    } else if (IsBytes(lt) && IsBytes(rt)) {
    } else if ((lt.is_temporal() && (rt.is_temporal() || rt.is_string())) ||
               (rt.is_temporal() && lt.is_string())) {
      TypePtr common = CommonType(l->type, r->type);
      if (!common) fail();
      l = Coerce(l, common, at);
      r = Coerce(r, common, at);
    } else if (lt.is_decimal() || lt.is_time_count() || rt.is_decimal() || rt.is_time_count()) {
      // Decimals, times of day and durations compare within their own type; a literal on
      // the other side takes it ('1.5', 0, '12:00:00').
      if (!lt.Equals(rt)) {
        if (r->kind == BoundKind::kLiteral) r = CoerceExactly(r, l->type, at);
        else if (l->kind == BoundKind::kLiteral) l = CoerceExactly(l, r->type, at);
        else fail();
      }
    } else if (IsListKind(lt) && IsListKind(rt)) {
      if (op != BinaryOp::kEq && op != BinaryOp::kNe)
        ThrowAt(at.get(), fmt::format("{} values can only be compared with = and <>", lt.ToString()));
      TypePtr common = CommonType(l->type, r->type);
      if (!common) fail();
      l = Coerce(l, common, at);
      r = Coerce(r, common, at);
    } else {
      fail();
    }
    auto b = Node(BoundKind::kCompare, DataType::Bool(), at);
    b->op = op;
    b->args = {l, r};
    return b;
  }

  // DuckDB's date arithmetic: date - date is the days between (int64); date + n,
  // n + date and date - n move by n days and stay dates. Null for other operands.
  BoundExprPtr BindDateArithmetic(BinaryOp op, const BoundExprPtr& l, const BoundExprPtr& r, const ExprPtr& at) {
    auto is_date = [](const BoundExprPtr& b) { return b->type && b->type->id() == TypeId::kDate32; };
    // An untyped NULL counts as a number of days: date ± NULL is a NULL date.
    auto is_integer = [](const BoundExprPtr& b) { return !b->type || b->type->is_integer(); };
    if (op != BinaryOp::kAdd && op != BinaryOp::kSub) return nullptr;
    auto call = [&](const char* function, TypePtr type, BoundExprPtr a, BoundExprPtr b) {
      auto node = Node(BoundKind::kCall, std::move(type), at);
      node->function = function;
      node->args = {std::move(a), std::move(b)};
      return node;
    };
    if (op == BinaryOp::kSub && is_date(l) && is_date(r)) return call("date_diff_days", DataType::Int64(), l, r);
    if (is_date(l) && is_integer(r)) {
      BoundExprPtr days = Coerce(r, DataType::Int64(), at);
      if (op == BinaryOp::kSub) {
        auto zero = Node(BoundKind::kLiteral, DataType::Int64(), at);
        zero->literal = Scalar{DataType::Int64(), int64_t(0)};
        auto negated = Node(BoundKind::kArithmetic, DataType::Int64(), at);
        negated->op = BinaryOp::kSub;
        negated->args = {zero, days};
        days = negated;
      }
      return call("date_add_days", DataType::Date32(), l, days);
    }
    if (op == BinaryOp::kAdd && is_integer(l) && is_date(r))
      return call("date_add_days", DataType::Date32(), r, Coerce(l, DataType::Int64(), at));
    return nullptr;
  }

  BoundExprPtr BindArithmetic(BinaryOp op, BoundExprPtr l, BoundExprPtr r, const ExprPtr& at) {
    if (op == BinaryOp::kFloatDiv) {  // two integers (or untyped NULLs) divide as float64
      auto integral = [](const BoundExprPtr& x) { return !x->type || x->type->is_integer(); };
      if (integral(l) && integral(r)) {
        l = Coerce(l, DataType::Float64(), at);
        r = Coerce(r, DataType::Float64(), at);
      }
      op = BinaryOp::kDiv;
    }
    if (op == BinaryOp::kIntDiv) op = BinaryOp::kDiv;
    if (BoundExprPtr dated = BindDateArithmetic(op, l, r, at)) return dated;
    if (!l->type && !r->type) {
      l = Coerce(l, DataType::Int64(), at);
      r = Coerce(r, DataType::Int64(), at);
    } else if (!l->type) {
      l = Coerce(l, r->type, at);
    } else if (!r->type) {
      r = Coerce(r, l->type, at);
    }
    TypePtr type = ArithmeticType(*l->type, *r->type);
    if (!type)
      ThrowAt(at.get(), fmt::format("cannot apply {} to {} and {}", BinaryOpSymbol(op), l->type->ToString(),
                                    r->type->ToString()));
    auto b = Node(BoundKind::kArithmetic, type, at);
    b->op = op;
    b->args = {Coerce(l, type, at), Coerce(r, type, at)};
    return b;
  }

  BoundExprPtr BindLike(const ExprPtr& e) {
    BoundExprPtr x = Bind(e->args[0]);
    BoundExprPtr p = Bind(e->args[1]);
    if (!x->type) x = Coerce(x, DataType::Utf8(), e);
    if (!p->type) p = Coerce(p, DataType::Utf8(), e);
    if (!IsBytes(*x->type))
      ThrowAt(e.get(), fmt::format("LIKE needs a string or binary value, got {}", x->type->ToString()));
    if (!IsBytes(*p->type)) ThrowAt(e.get(), fmt::format("LIKE pattern must be a string, got {}", p->type->ToString()));
    auto b = Node(BoundKind::kLike, DataType::Bool(), e);
    b->negated = e->negated;
    b->case_insensitive = e->case_insensitive;
    b->escape = e->escape ? (*e->escape)[0] : '\\';
    b->args = {x, p};
    return b;
  }

  static bool IsInterval(const ExprPtr& e) { return e->kind == ExprKind::kCall && e->function == "interval"; }

  // x + INTERVAL, INTERVAL + x, x - INTERVAL: add_interval(x, signed count, unit). Null
  // when neither side is an INTERVAL.
  BoundExprPtr BindIntervalArithmetic(const ExprPtr& e) {
    const bool left = IsInterval(e->args[0]), right = IsInterval(e->args[1]);
    if (!left && !right) return nullptr;
    if (left && (right || e->binary_op == BinaryOp::kSub))
      ThrowAt(e.get(), "an INTERVAL can only be added to, or subtracted from, a date or timestamp");
    const ExprPtr& interval = left ? e->args[0] : e->args[1];
    auto shift = std::make_shared<Expr>(*e);
    shift->kind = ExprKind::kCall;
    shift->function = "add_interval";
    ExprPtr count = interval->args[0];
    if (e->binary_op == BinaryOp::kSub) {
      int64_t minus = 0;
      if (__builtin_sub_overflow(int64_t(0), count->literal.as_int(), &minus))
        ThrowAt(e.get(), "the INTERVAL's count is out of range when subtracted");
      auto negated = std::make_shared<Expr>(*count);
      negated->literal = Scalar{DataType::Int64(), minus};
      count = negated;
    }
    shift->args = {left ? e->args[1] : e->args[0], count, interval->args[1]};
    return BindCall(shift);
  }

  // date_part('epoch', x) is DuckDB's epoch(x): seconds with their fraction, a double,
  // where every other part is a whole number.
  static bool IsEpochPart(const ExprPtr& e) {
    if (e->function != "date_part" || e->args.size() != 2 || e->args[0]->kind != ExprKind::kLiteral) return false;
    const Scalar& part = e->args[0]->literal;
    return !part.is_null() && part.type && part.type->is_string() && AsciiLower(part.as_string()) == "epoch";
  }

  BoundExprPtr BindCall(const ExprPtr& e) {
    if (e->star_argument || e->distinct)
      ThrowAt(e.get(), fmt::format("{}({}...) is an aggregate, which is not allowed here", e->function,
                                   e->star_argument ? "*" : "DISTINCT "));
    if (e->has_filter)
      ThrowAt(e.get(), fmt::format("{}() FILTER (WHERE ...): FILTER is allowed only on an aggregate function in a select list, HAVING or ORDER BY",
                                   e->function));
    if (e->order)
      ThrowAt(e.get(), fmt::format("{}(... ORDER BY ...): an order inside the parentheses is allowed only on an "
                                   "aggregate function in a select list, HAVING or ORDER BY",
                                   e->function));
    if (IsEpochPart(e)) {
      auto epoch = std::make_shared<Expr>(*e);
      epoch->function = "epoch";
      epoch->args = {e->args[1]};
      return BindCall(epoch);
    }
    std::vector<BoundExprPtr> args;
    std::vector<TypePtr> types;
    for (const auto& a : e->args) {
      args.push_back(Bind(a));
      types.push_back(args.back()->type);
    }
    TypePtr type = ResolveFunction(e->function, &types, e.get());
    auto b = Node(BoundKind::kCall, type, e);
    b->function = e->function;
    for (size_t i = 0; i < args.size(); ++i) b->args.push_back(Coerce(args[i], types[i], e));
    return b;
  }

  const Schema& schema_;
  const Schema& known_;
};

}  // namespace

BoundExprPtr Bind(const Expr& expr, const Schema& schema) { return Bind(expr, schema, schema); }

BoundExprPtr Bind(const Expr& expr, const Schema& schema, const Schema& known) {
  auto root = std::make_shared<const Expr>(expr);
  Binder binder(schema, known);
  return binder.Finalize(binder.Bind(root), root);
}

}  // namespace lancelet
