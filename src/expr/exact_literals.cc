#include "expr/exact_literals.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace lancelet {

namespace {

// A decimal number: mantissa * 10^-scale (scale may be negative).
struct Exact {
  __int128 mantissa = 0;
  int scale = 0;
};

constexpr int kMaxDigits = 30;

std::optional<Exact> Parse(const std::string& text) {
  Exact out;
  size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  int digits = 0;
  bool point = false;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      point = true;
      continue;
    }
    if (digits > 0 || text[i] != '0') ++digits;
    if (digits > kMaxDigits) return std::nullopt;
    out.mantissa = out.mantissa * 10 + (text[i] - '0');
    if (point) ++out.scale;
  }
  if (i < text.size()) {  // an exponent: e+16, e-07
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    out.scale -= std::atoi(text.c_str() + i + 1);
  }
  if (negative) out.mantissa = -out.mantissa;
  return out;
}

std::optional<Exact> OfLiteral(const Scalar& v) {
  if (v.is_null() || !v.type) return std::nullopt;
  if (v.type->id() == TypeId::kFloat64) {
    const double d = v.as_double();
    if (!std::isfinite(d)) return std::nullopt;
    return Parse(fmt::format("{}", d));  // the shortest text that reads back as d
  }
  if (v.type->is_signed_integer()) return Exact{v.as_int(), 0};
  return std::nullopt;
}

// Whether |m| has at most kMaxDigits digits.
bool Small(__int128 m) {
  static const __int128 kLimit = [] {
    __int128 p = 1;
    for (int i = 0; i < kMaxDigits; ++i) p *= 10;
    return p;
  }();
  return m < kLimit && m > -kLimit;
}

// m * 10^k, when it stays small.
std::optional<__int128> Scaled(__int128 m, int k) {
  for (; k > 0; --k) {
    m *= 10;
    if (!Small(m)) return std::nullopt;
  }
  return m;
}

std::string Digits(__int128 m) {
  if (m == 0) return "0";
  const bool negative = m < 0;
  std::string s;
  for (; m != 0; m /= 10) s.insert(s.begin(), char('0' + int(negative ? -(m % 10) : m % 10)));
  return negative ? "-" + s : s;
}

}  // namespace

bool AsWritten(const ExprPtr& e) {
  if (e->kind == ExprKind::kLiteral) return !e->literal.is_null() && e->literal.type && e->literal.type->is_numeric();
  return e->kind == ExprKind::kBinary &&
         (e->binary_op == BinaryOp::kAdd || e->binary_op == BinaryOp::kSub || e->binary_op == BinaryOp::kMul) &&
         AsWritten(e->args[0]) && AsWritten(e->args[1]);
}

std::optional<double> ExactLiteralArithmetic(BinaryOp op, const Scalar& a, const Scalar& b) {
  if (op != BinaryOp::kAdd && op != BinaryOp::kSub && op != BinaryOp::kMul) return std::nullopt;
  const bool any_float = (a.type && a.type->id() == TypeId::kFloat64) || (b.type && b.type->id() == TypeId::kFloat64);
  if (!any_float) return std::nullopt;
  const std::optional<Exact> x = OfLiteral(a), y = OfLiteral(b);
  if (!x || !y) return std::nullopt;
  Exact r;
  if (op == BinaryOp::kMul) {
    if (__builtin_mul_overflow(x->mantissa, y->mantissa, &r.mantissa)) return std::nullopt;
    r.scale = x->scale + y->scale;
  } else {
    const int scale = std::max(x->scale, y->scale);
    const std::optional<__int128> xm = Scaled(x->mantissa, scale - x->scale), ym = Scaled(y->mantissa, scale - y->scale);
    if (!xm || !ym) return std::nullopt;
    r.mantissa = op == BinaryOp::kAdd ? *xm + *ym : *xm - *ym;
    r.scale = scale;
  }
  if (!Small(r.mantissa)) return std::nullopt;
  return std::strtod(fmt::format("{}e{}", Digits(r.mantissa), -r.scale).c_str(), nullptr);
}

}  // namespace lancelet
