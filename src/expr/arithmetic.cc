#include "expr/arithmetic.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include <libdivide.h>

#include "expr/errors.h"
#include "expr/numeric.h"

namespace lancelet {

namespace {

// Values of one side: a column (step 1) or a literal repeated (step 0).
template <typename T>
struct Operand {
  const T* data;
  size_t step;
  T literal;
};

template <typename T>
Operand<T> OperandOf(const Datum& d) {
  if (d.is_array()) return {d.array->values<T>(), 1, T{}};
  Operand<T> o{nullptr, 0, T{}};
  if constexpr (std::is_floating_point_v<T>) o.literal = T(d.scalar.as_double());
  else if constexpr (std::is_signed_v<T>) o.literal = T(d.scalar.as_int());
  else o.literal = T(d.scalar.as_uint());
  return o;
}

// Computes one value; returns false when an integer result does not exist (overflow,
// division by zero), leaving *out = 0.
template <BinaryOp Op, typename T>
inline bool Apply(T a, T b, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (Op == BinaryOp::kAdd) *out = a + b;
    else if constexpr (Op == BinaryOp::kSub) *out = a - b;
    else if constexpr (Op == BinaryOp::kMul) *out = a * b;
    else if constexpr (Op == BinaryOp::kDiv) *out = a / b;
    else *out = T(std::fmod(a, b));
    return true;
  } else {
    if constexpr (Op == BinaryOp::kAdd) return !__builtin_add_overflow(a, b, out);
    else if constexpr (Op == BinaryOp::kSub) return !__builtin_sub_overflow(a, b, out);
    else if constexpr (Op == BinaryOp::kMul) return !__builtin_mul_overflow(a, b, out);
    else {
      bool overflow = false;
      if constexpr (std::is_signed_v<T>) overflow = a == std::numeric_limits<T>::min() && b == T(-1);
      if (b == 0 || overflow) {
        *out = 0;
        return false;
      }
      *out = Op == BinaryOp::kDiv ? T(a / b) : T(a % b);
      return true;
    }
  }
}

// Integer division or remainder of a column by a literal: libdivide turns the divisor
// into a multiply and shifts once, so a row costs a few cycles instead of a hardware
// divide (`id % 100 = 0` over 1M int64 rows: 6 ms -> 1 ms). False when the general loop
// must run: a column divisor, or 0 and -1, whose errors that loop reports. Narrow types
// divide as 32-bit values, which cannot overflow once -1 is excluded.
template <BinaryOp Op, typename T>
bool DivideByLiteral(const Operand<T>& a, const Operand<T>& b, T* out, int64_t n) {
  if constexpr (std::is_integral_v<T> && (Op == BinaryOp::kDiv || Op == BinaryOp::kMod)) {
    if (b.step != 0 || a.step == 0 || b.literal == 0) return false;
    if constexpr (std::is_signed_v<T>)
      if (b.literal == T(-1)) return false;
    using Wide = std::conditional_t<(sizeof(T) < 4), std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>, T>;
    const Wide divisor = Wide(b.literal);
    const libdivide::divider<Wide> by(divisor);
    for (int64_t i = 0; i < n; ++i) {
      const Wide x = Wide(a.data[i]), q = x / by;
      out[i] = Op == BinaryOp::kDiv ? T(q) : T(x - q * divisor);
    }
    return true;
  }
  return false;
}

template <BinaryOp Op, typename T>
void Loop(const Operand<T>& a, const Operand<T>& b, T* out, int64_t n, const uint8_t* validity,
          const TypePtr& type, const Expr* origin) {
  if (DivideByLiteral<Op>(a, b, out, n)) return;
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    T x = a.step ? a.data[i] : a.literal;
    T y = b.step ? b.data[i] : b.literal;
    ok &= Apply<Op>(x, y, &out[i]);
  }
  if (ok) return;
  // Find a failing row that is not NULL.
  for (int64_t i = 0; i < n; ++i) {
    if (validity && !GetBit(validity, i)) continue;
    T x = a.step ? a.data[i] : a.literal;
    T y = b.step ? b.data[i] : b.literal;
    T r;
    if (Apply<Op>(x, y, &r)) continue;
    if ((Op == BinaryOp::kDiv || Op == BinaryOp::kMod) && y == 0) ThrowAt(origin, "division by zero");
    ThrowAt(origin, fmt::format("{} overflow: {} {} {}", type->ToString(), +x, BinaryOpSymbol(Op), +y));
  }
}

template <typename F>
decltype(auto) VisitArithmeticOp(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::kAdd: return f(std::integral_constant<BinaryOp, BinaryOp::kAdd>{});
    case BinaryOp::kSub: return f(std::integral_constant<BinaryOp, BinaryOp::kSub>{});
    case BinaryOp::kMul: return f(std::integral_constant<BinaryOp, BinaryOp::kMul>{});
    case BinaryOp::kDiv: return f(std::integral_constant<BinaryOp, BinaryOp::kDiv>{});
    default: return f(std::integral_constant<BinaryOp, BinaryOp::kMod>{});
  }
}

}  // namespace

ArrayPtr Arithmetic(BinaryOp op, const Datum& left, const Datum& right, int64_t n, const TypePtr& type,
                    const Expr* origin) {
  if (left.all_null() || right.all_null()) return MakeNullArray(type, n);
  BufferPtr validity = IntersectValidity({&left, &right}, n);
  BufferPtr values;
  VisitStorage(type->id(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) {
      ThrowAt(origin, "arithmetic on float16 is not supported; CAST to float32 first");
    } else {
      values = Buffer::AllocateUninitialized(size_t(n) * sizeof(T));  // Loop writes every row
      Operand<T> a = OperandOf<T>(left), b = OperandOf<T>(right);
      const uint8_t* bits = validity ? validity->data() : nullptr;
      VisitArithmeticOp(op, [&](auto op_tag) {
        Loop<decltype(op_tag)::value>(a, b, values->mutable_as<T>(), n, bits, type, origin);
      });
    }
  });
  return MakeFixedWidthArray(type, n, std::move(validity), std::move(values));
}

ArrayPtr Negate(const Datum& operand, int64_t n, const Expr* origin) {
  const TypePtr& type = operand.type();
  Datum zero(type->is_floating() ? Scalar{type, 0.0} : Scalar{type, int64_t(0)});
  if (type->is_floating()) {
    // 0 - x would turn 0.0 into +0.0 rather than -0.0.
    if (operand.all_null()) return MakeNullArray(type, n);
    ArrayPtr a = Materialize(operand, n);
    BufferPtr values = Buffer::Allocate(size_t(n) * size_t(type->bit_width() / 8));
    if (type->id() == TypeId::kFloat32) {
      for (int64_t i = 0; i < n; ++i) values->mutable_as<float>()[i] = -a->values<float>()[i];
    } else {
      for (int64_t i = 0; i < n; ++i) values->mutable_as<double>()[i] = -a->values<double>()[i];
    }
    BufferPtr validity = a->validity() ? Buffer::Copy(a->validity(), BitmapBytes(n)) : nullptr;
    return MakeFixedWidthArray(type, n, std::move(validity), std::move(values));
  }
  return Arithmetic(BinaryOp::kSub, zero, operand, n, type, origin);
}

}  // namespace lancelet
