#include "expr/compare.h"

#include <string_view>

#include "lancelet/decimal.h"
#include "expr/numeric.h"

namespace lancelet {

namespace {

template <BinaryOp Op>
inline bool FromCmp(int c) {
  if constexpr (Op == BinaryOp::kEq) return c == 0;
  else if constexpr (Op == BinaryOp::kNe) return c != 0;
  else if constexpr (Op == BinaryOp::kLt) return c < 0;
  else if constexpr (Op == BinaryOp::kLe) return c <= 0;
  else if constexpr (Op == BinaryOp::kGt) return c > 0;
  else return c >= 0;
}

// a Op b for two values of one C type (NaN-aware for floats).
template <BinaryOp Op, typename T>
inline bool Holds(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // Cmp3's NaN order written without branches: NaN == NaN, NaN > everything else.
    bool a_nan = a != a, b_nan = b != b;
    if constexpr (Op == BinaryOp::kEq) return (a == b) | (a_nan & b_nan);
    else if constexpr (Op == BinaryOp::kNe) return !((a == b) | (a_nan & b_nan));
    else if constexpr (Op == BinaryOp::kLt) return (a < b) | (b_nan & !a_nan);
    else if constexpr (Op == BinaryOp::kLe) return (a <= b) | b_nan;
    else if constexpr (Op == BinaryOp::kGt) return (a > b) | (a_nan & !b_nan);
    else return (a >= b) | a_nan;
  } else {
    if constexpr (Op == BinaryOp::kEq) return a == b;
    else if constexpr (Op == BinaryOp::kNe) return a != b;
    else if constexpr (Op == BinaryOp::kLt) return a < b;
    else if constexpr (Op == BinaryOp::kLe) return a <= b;
    else if constexpr (Op == BinaryOp::kGt) return a > b;
    else return a >= b;
  }
}

// Calls f(std::integral_constant<BinaryOp, op>{}).
template <typename F>
decltype(auto) VisitOp(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::kEq: return f(std::integral_constant<BinaryOp, BinaryOp::kEq>{});
    case BinaryOp::kNe: return f(std::integral_constant<BinaryOp, BinaryOp::kNe>{});
    case BinaryOp::kLt: return f(std::integral_constant<BinaryOp, BinaryOp::kLt>{});
    case BinaryOp::kLe: return f(std::integral_constant<BinaryOp, BinaryOp::kLe>{});
    case BinaryOp::kGt: return f(std::integral_constant<BinaryOp, BinaryOp::kGt>{});
    default: return f(std::integral_constant<BinaryOp, BinaryOp::kGe>{});
  }
}

// The scalar's number in domain type D (its payload already belongs to D's domain).
template <typename D>
D ScalarAsDomain(const Scalar& s) {
  if (auto* b = std::get_if<bool>(&s.value)) return D(*b);
  if (auto* i = std::get_if<int64_t>(&s.value)) return D(*i);
  if (auto* u = std::get_if<uint64_t>(&s.value)) return D(*u);
  return D(std::get<double>(s.value));
}

// The scalar as a T when that loses nothing (so comparing in T is exact).
template <typename T>
std::optional<T> ExactlyAs(const Scalar& s) {
  auto check = [](auto v) -> std::optional<T> {
    using V = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      T t = T(v);
      if (Cmp3(double(t), v) == 0) return t;
      return std::nullopt;
    } else {
      using Dt = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(v) || std::trunc(v) != v) return std::nullopt;
      }
      if (Cmp3(v, Dt(std::numeric_limits<T>::min())) < 0 || Cmp3(v, Dt(std::numeric_limits<T>::max())) > 0)
        return std::nullopt;
      return T(v);
    }
  };
  if (auto* i = std::get_if<int64_t>(&s.value)) return check(*i);
  if (auto* u = std::get_if<uint64_t>(&s.value)) return check(*u);
  if (auto* d = std::get_if<double>(&s.value)) return check(*d);
  return std::nullopt;
}

// Hot path: a column against a literal of the column's own C type.
template <BinaryOp Op, typename T>
BufferPtr ColumnVsValue(const T* values, T literal, int64_t n) {
  return BuildBitmap(n, [&](int64_t i) { return Holds<Op>(values[i], literal); });
}

template <BinaryOp Op, typename A, typename B>
BufferPtr DomainVsDomain(const A* a, const B* b, int64_t n) {
  return BuildBitmap(n, [&](int64_t i) { return FromCmp<Op>(Cmp3(a[i], b[i])); });
}

BufferPtr CompareNumeric(BinaryOp op, const Datum& left, const Datum& right, int64_t n) {
  const ArrayData& l = *left.array;
  if (!right.is_array() && l.type->id() != TypeId::kBool && l.type->id() != TypeId::kFloat16) {
    BufferPtr out;
    bool done = VisitStorage(l.type->id(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        return false;
      } else {
        std::optional<T> literal = ExactlyAs<T>(right.scalar);
        if (!literal) return false;
        VisitOp(op, [&](auto op_tag) { out = ColumnVsValue<decltype(op_tag)::value>(l.values<T>(), *literal, n); });
        return true;
      }
    });
    if (done) return out;
  }
  ArrayPtr r = Materialize(right, n);
  return VisitDomain(*l.type, [&](auto ltag) {
    using A = decltype(ltag);
    Widened<A> a(l);
    return VisitDomain(*r->type, [&](auto rtag) {
      using B = decltype(rtag);
      Widened<B> b(*r);
      return VisitOp(op, [&](auto op_tag) {
        return DomainVsDomain<decltype(op_tag)::value>(a.data(), b.data(), n);
      });
    });
  });
}

// Slot i of a utf8/binary/fixed_size_binary array, without a call per row.
class BytesView {
 public:
  explicit BytesView(const ArrayData& a) {
    if (a.type->id() == TypeId::kFixedSizeBinary) {
      width_ = a.type->fixed_size();
      data_ = reinterpret_cast<const char*>(a.buffers[1]->data());
    } else {
      data_ = reinterpret_cast<const char*>(a.buffers[2]->data());
      if (a.type->has_large_offsets()) off64_ = a.buffers[1]->as<int64_t>();
      else off32_ = a.buffers[1]->as<int32_t>();
    }
  }
  std::string_view operator[](int64_t i) const {
    if (off32_) return {data_ + off32_[i], size_t(off32_[i + 1] - off32_[i])};
    if (off64_) return {data_ + off64_[i], size_t(off64_[i + 1] - off64_[i])};
    return {data_ + i * width_, size_t(width_)};
  }

 private:
  const char* data_ = nullptr;
  const int32_t* off32_ = nullptr;
  const int64_t* off64_ = nullptr;
  int64_t width_ = 0;
};

inline int CmpBytes(std::string_view a, std::string_view b) {
  int c = a.compare(b);  // char_traits<char> compares as unsigned char
  return (c > 0) - (c < 0);
}

BufferPtr CompareBytes(BinaryOp op, const Datum& left, const Datum& right, int64_t n) {
  BytesView a(*left.array);
  return VisitOp(op, [&](auto op_tag) {
    constexpr BinaryOp Op = decltype(op_tag)::value;
    if (!right.is_array()) {
      std::string_view literal = right.scalar.as_string();
      return BuildBitmap(n, [&](int64_t i) { return FromCmp<Op>(CmpBytes(a[i], literal)); });
    }
    BytesView b(*right.array);
    return BuildBitmap(n, [&](int64_t i) { return FromCmp<Op>(CmpBytes(a[i], b[i])); });
  });
}

// Lists and anything else rare: row by row through scalars. NULL items can make a row
// NULL, so this builds its own validity.
ArrayPtr CompareByScalars(BinaryOp op, const Datum& left, const Datum& right, int64_t n) {
  ArrayPtr l = Materialize(left, n);
  std::vector<uint8_t> valid(static_cast<size_t>(n)), value(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Scalar b = right.is_array() ? GetScalar(*right.array, i) : right.scalar;
    std::optional<int> c = CompareScalars(GetScalar(*l, i), b);
    valid[size_t(i)] = c.has_value();
    value[size_t(i)] = c && Satisfies(op, *c);
  }
  BufferPtr validity = BuildBitmap(n, [&](int64_t i) { return valid[size_t(i)] != 0; });
  BufferPtr values = BuildBitmap(n, [&](int64_t i) { return value[size_t(i)] != 0; });
  return MakeBoolArray(n, std::move(validity), std::move(values));
}

bool IsBytesType(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }

}  // namespace

bool Satisfies(BinaryOp op, int c) {
  switch (op) {
    case BinaryOp::kEq: return c == 0;
    case BinaryOp::kNe: return c != 0;
    case BinaryOp::kLt: return c < 0;
    case BinaryOp::kLe: return c <= 0;
    case BinaryOp::kGt: return c > 0;
    case BinaryOp::kGe: return c >= 0;
    default: return false;
  }
}

BinaryOp SwapSides(BinaryOp op) {
  switch (op) {
    case BinaryOp::kLt: return BinaryOp::kGt;
    case BinaryOp::kLe: return BinaryOp::kGe;
    case BinaryOp::kGt: return BinaryOp::kLt;
    case BinaryOp::kGe: return BinaryOp::kLe;
    default: return op;
  }
}

std::optional<int> CompareScalars(const Scalar& a, const Scalar& b) {
  if (a.is_null() || b.is_null()) return std::nullopt;
  if (auto* la = std::get_if<std::vector<Scalar>>(&a.value)) {
    const auto& lb = b.as_list();
    if (la->size() != lb.size()) return 1;
    bool unknown = false;
    for (size_t i = 0; i < la->size(); ++i) {
      std::optional<int> c = CompareScalars((*la)[i], lb[i]);
      if (!c) unknown = true;
      else if (*c != 0) return 1;
    }
    if (unknown) return std::nullopt;
    return 0;
  }
  if (auto* sa = std::get_if<std::string>(&a.value)) {
    if (a.type && a.type->is_decimal()) return CompareDecimals(*sa, b.as_string());
    return CmpBytes(*sa, b.as_string());
  }
  auto number = [](const Scalar& s) -> std::variant<int64_t, uint64_t, double> {
    if (auto* x = std::get_if<bool>(&s.value)) return int64_t(*x);
    if (auto* x = std::get_if<int64_t>(&s.value)) return *x;
    if (auto* x = std::get_if<uint64_t>(&s.value)) return *x;
    return std::get<double>(s.value);
  };
  return std::visit([](auto x, auto y) { return Cmp3(x, y); }, number(a), number(b));
}

ArrayPtr Compare(BinaryOp op, const Datum& left_in, const Datum& right_in, int64_t n) {
  if (left_in.all_null() || right_in.all_null()) return MakeNullArray(DataType::Bool(), n);
  const Datum* left = &left_in;
  const Datum* right = &right_in;
  if (!left->is_array()) {
    if (!right->is_array()) {
      ArrayPtr one = Materialize(*left, n);
      return Compare(op, Datum(one), *right, n);
    }
    std::swap(left, right);
    op = SwapSides(op);
  }
  const DataType& lt = *left->type();
  const DataType& rt = *right->type();
  BufferPtr values;
  if ((lt.is_numeric() || lt.is_temporal() || lt.id() == TypeId::kBool) &&
      (rt.is_numeric() || rt.is_temporal() || rt.id() == TypeId::kBool)) {
    values = CompareNumeric(op, *left, *right, n);
  } else if (IsBytesType(lt) && IsBytesType(rt)) {
    values = CompareBytes(op, *left, *right, n);
  } else {
    return CompareByScalars(op, *left, *right, n);
  }
  return MakeBoolArray(n, IntersectValidity({left, right}, n), std::move(values));
}

}  // namespace lancelet
