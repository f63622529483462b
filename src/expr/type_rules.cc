#include "expr/type_rules.h"

#include <algorithm>

#include "expr/temporal.h"

namespace lancelet {

namespace {

TypePtr SignedOfWidth(int bits) {
  switch (bits) {
    case 8: return DataType::Int8();
    case 16: return DataType::Int16();
    case 32: return DataType::Int32();
    default: return DataType::Int64();
  }
}

TypePtr UnsignedOfWidth(int bits) {
  switch (bits) {
    case 8: return DataType::UInt8();
    case 16: return DataType::UInt16();
    case 32: return DataType::UInt32();
    default: return DataType::UInt64();
  }
}

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }
bool IsListKind(const DataType& t) { return t.is_list() || t.id() == TypeId::kFixedSizeList; }

}  // namespace

TypePtr ArithmeticType(const DataType& a, const DataType& b) {
  if (!a.is_numeric() || !b.is_numeric()) return nullptr;
  if (a.is_floating() || b.is_floating()) {
    bool narrow = (!a.is_floating() || a.id() != TypeId::kFloat64) && (!b.is_floating() || b.id() != TypeId::kFloat64);
    if (narrow && a.is_floating() && b.is_floating()) return DataType::Float32();
    return DataType::Float64();
  }
  int wa = a.bit_width(), wb = b.bit_width();
  if (a.is_signed_integer() == b.is_signed_integer())
    return a.is_signed_integer() ? SignedOfWidth(std::max(wa, wb)) : UnsignedOfWidth(std::max(wa, wb));
  int signed_width = a.is_signed_integer() ? wa : wb;
  int unsigned_width = a.is_signed_integer() ? wb : wa;
  return SignedOfWidth(std::min(64, std::max(signed_width, unsigned_width * 2)));
}

TypePtr CommonType(const TypePtr& a, const TypePtr& b) {
  if (!a) return b;
  if (!b) return a;
  if (a->Equals(*b)) return a;
  if (TypePtr t = ArithmeticType(*a, *b)) return t;
  if (IsBytes(*a) && IsBytes(*b)) {
    bool large = a->has_large_offsets() || b->has_large_offsets();
    bool binary = !a->is_string() || !b->is_string();
    if (binary) return large ? DataType::LargeBinary() : DataType::Binary();
    return large ? DataType::LargeUtf8() : DataType::Utf8();
  }
  if (a->is_temporal() && b->is_temporal()) {
    if (a->id() == TypeId::kTimestamp && b->id() == TypeId::kTimestamp && a->unit() == b->unit())
      return a->timezone().empty() ? b : a;
    return DataType::Timestamp(CommonTimeUnit(*a, *b), a->id() == TypeId::kTimestamp ? a->timezone() : b->timezone());
  }
  if (a->is_temporal() && b->is_string()) return a;
  if (b->is_temporal() && a->is_string()) return b;
  if (IsListKind(*a) && IsListKind(*b)) {
    if (a->id() == TypeId::kFixedSizeList && b->id() == TypeId::kFixedSizeList) return nullptr;  // unequal
    TypePtr item = CommonType(a->child(0)->type, b->child(0)->type);
    if (!item) return nullptr;
    if (a->id() == TypeId::kFixedSizeList) return a;
    if (b->id() == TypeId::kFixedSizeList) return b;
    if (a->id() == TypeId::kLargeList || b->id() == TypeId::kLargeList) return DataType::LargeList(item);
    return DataType::List(item);
  }
  return nullptr;
}

}  // namespace lancelet
