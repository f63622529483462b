#include "lancelet/scalar.h"

#include <cmath>
#include <limits>

#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "lancelet/float16.h"

namespace lancelet {

int64_t Scalar::as_int() const {
  if (auto* v = std::get_if<int64_t>(&value)) return *v;
  if (auto* v = std::get_if<uint64_t>(&value)) {
    if (*v > uint64_t(std::numeric_limits<int64_t>::max())) ThrowInvalid("value {} does not fit int64", *v);
    return int64_t(*v);
  }
  if (auto* v = std::get_if<bool>(&value)) return *v;
  ThrowInvalid("expected an integer, got a {} value", type ? type->ToString() : "untyped");
}

uint64_t Scalar::as_uint() const {
  if (auto* v = std::get_if<uint64_t>(&value)) return *v;
  if (auto* v = std::get_if<int64_t>(&value)) {
    if (*v < 0) ThrowInvalid("value {} does not fit an unsigned integer", *v);
    return uint64_t(*v);
  }
  if (auto* v = std::get_if<bool>(&value)) return *v;
  ThrowInvalid("expected an unsigned integer, got a {} value", type ? type->ToString() : "untyped");
}

double Scalar::as_double() const {
  if (auto* v = std::get_if<double>(&value)) return *v;
  if (auto* v = std::get_if<int64_t>(&value)) return double(*v);
  if (auto* v = std::get_if<uint64_t>(&value)) return double(*v);
  ThrowInvalid("expected a number, got a {} value", type ? type->ToString() : "untyped");
}

bool Scalar::Equals(const Scalar& o) const {
  if (is_null() || o.is_null()) return is_null() && o.is_null();
  if (value.index() != o.value.index()) return false;
  if (auto* d = std::get_if<double>(&value)) {
    double e = std::get<double>(o.value);
    return *d == e || (std::isnan(*d) && std::isnan(e));
  }
  if (auto* l = std::get_if<std::vector<Scalar>>(&value)) {
    const auto& m = o.as_list();
    if (l->size() != m.size()) return false;
    for (size_t i = 0; i < l->size(); ++i)
      if (!(*l)[i].Equals(m[i])) return false;
    return true;
  }
  if (auto* b = std::get_if<bool>(&value)) return *b == std::get<bool>(o.value);
  if (auto* i = std::get_if<int64_t>(&value)) return *i == std::get<int64_t>(o.value);
  if (auto* u = std::get_if<uint64_t>(&value)) return *u == std::get<uint64_t>(o.value);
  return as_string() == o.as_string();
}

Scalar GetScalar(const ArrayData& a, int64_t i) {
  const TypePtr& type = a.type;
  if (a.IsNull(i)) return Scalar::Null(type);
  switch (type->id()) {
    case TypeId::kBool: return {type, GetBit(a.buffers[1]->data(), i)};
    case TypeId::kInt8: return {type, int64_t(a.values<int8_t>()[i])};
    case TypeId::kInt16: return {type, int64_t(a.values<int16_t>()[i])};
    case TypeId::kInt32: case TypeId::kDate32: case TypeId::kTime32: return {type, int64_t(a.values<int32_t>()[i])};
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: case TypeId::kTime64:
    case TypeId::kDuration:
      return {type, a.values<int64_t>()[i]};
    case TypeId::kUInt8: return {type, uint64_t(a.values<uint8_t>()[i])};
    case TypeId::kUInt16: return {type, uint64_t(a.values<uint16_t>()[i])};
    case TypeId::kUInt32: return {type, uint64_t(a.values<uint32_t>()[i])};
    case TypeId::kUInt64: return {type, a.values<uint64_t>()[i]};
    case TypeId::kFloat16: return {type, double(HalfToFloat(a.values<uint16_t>()[i]))};
    case TypeId::kFloat32: return {type, double(a.values<float>()[i])};
    case TypeId::kFloat64: return {type, a.values<double>()[i]};
    case TypeId::kUtf8: case TypeId::kLargeUtf8: case TypeId::kBinary: case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary: case TypeId::kDecimal128: case TypeId::kDecimal256:
      return {type, std::string(a.GetView(i))};
    case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: {
      std::vector<Scalar> items;
      for (int64_t j = a.offset(i); j < a.offset(i + 1); ++j) items.push_back(GetScalar(*a.children[0], j));
      return {type, std::move(items)};
    }
    case TypeId::kFixedSizeList: {
      std::vector<Scalar> items;
      int64_t n = type->fixed_size();
      for (int64_t j = 0; j < n; ++j) items.push_back(GetScalar(*a.children[0], i * n + j));
      return {type, std::move(items)};
    }
    case TypeId::kStruct: {
      std::vector<Scalar> fields;
      for (const auto& c : a.children) fields.push_back(GetScalar(*c, i));
      return {type, std::move(fields)};
    }
    case TypeId::kNull: return Scalar::Null(type);  // IsNull above already holds
  }
  ThrowNotSupported("no scalar for type {}", type->ToString());
}

ArrayPtr MakeArray(const TypePtr& type, const std::vector<Scalar>& values) {
  auto builder = ArrayBuilder::Make(type);
  for (const auto& v : values) builder->AppendScalar(v);
  return builder->Finish();
}

}  // namespace lancelet
