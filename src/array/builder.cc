#include "lancelet/builder.h"

#include "lancelet/error.h"
#include "lancelet/float16.h"

namespace lancelet {

BufferPtr ByteVector::Finish() {
  auto buffer = Buffer::Copy(bytes_.data(), bytes_.size());
  bytes_.clear();
  return buffer;
}

void ValidityBuilder::Append(bool valid) {
  if ((length_ & 7) == 0) bits_.push_back(0);
  if (valid) bits_.back() |= uint8_t(1u << (length_ & 7));
  else ++null_count_;
  ++length_;
}

void ValidityBuilder::AppendN(int64_t n, bool valid) {
  for (int64_t i = 0; i < n; ++i) Append(valid);
}

BufferPtr ValidityBuilder::Finish() {
  BufferPtr out = null_count_ ? Buffer::FromVector(bits_) : nullptr;
  bits_.clear();
  length_ = null_count_ = 0;
  return out;
}

namespace {

ArrayPtr NewArray(const TypePtr& type, int64_t length, int64_t null_count, BufferPtr validity) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = length;
  out->null_count = null_count;
  out->buffers.push_back(std::move(validity));
  return out;
}

[[noreturn]] void Mismatch(const DataType& type, const Scalar& value) {
  ThrowInvalid("cannot append a {} value to a {} column", value.type ? value.type->ToString() : "untyped",
               type.ToString());
}

}  // namespace

void ArrayBuilder::AppendFrom(const ArrayData& array, int64_t i) { AppendScalar(GetScalar(array, i)); }

template <typename T>
void FixedWidthBuilder<T>::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  if constexpr (std::is_floating_point_v<T>) {
    Append(T(value.as_double()));
  } else if constexpr (std::is_signed_v<T>) {
    Append(T(value.as_int()));
  } else {
    Append(T(value.as_uint()));
  }
}

template <typename T>
ArrayPtr FixedWidthBuilder<T>::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = NewArray(type_, n, nulls, validity_.Finish());
  out->buffers.push_back(values_.Finish());
  return out;
}

template class FixedWidthBuilder<int8_t>;
template class FixedWidthBuilder<int16_t>;
template class FixedWidthBuilder<int32_t>;
template class FixedWidthBuilder<int64_t>;
template class FixedWidthBuilder<uint8_t>;
template class FixedWidthBuilder<uint16_t>;
template class FixedWidthBuilder<uint32_t>;
template class FixedWidthBuilder<uint64_t>;
template class FixedWidthBuilder<float>;
template class FixedWidthBuilder<double>;

void BoolBuilder::PushBit(bool v) {
  int64_t i = validity_.length();
  if ((i & 7) == 0) bits_.push_back(0);
  if (v) bits_.back() |= uint8_t(1u << (i & 7));
}

void BoolBuilder::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  if (!std::holds_alternative<bool>(value.value)) Mismatch(*type_, value);
  Append(value.as_bool());
}

ArrayPtr BoolBuilder::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = NewArray(type_, n, nulls, validity_.Finish());
  out->buffers.push_back(Buffer::FromVector(bits_));
  bits_.clear();
  return out;
}

BinaryBuilder::BinaryBuilder(TypePtr type) : ArrayBuilder(std::move(type)) {
  if (type_->is_variable_binary()) {
    if (type_->has_large_offsets()) offsets_.Push<int64_t>(0);
    else offsets_.Push<int32_t>(0);
  }
}

void BinaryBuilder::Append(std::string_view bytes) {
  if (!type_->is_variable_binary()) {
    if (int64_t(bytes.size()) != type_->byte_width())
      ThrowInvalid("a {} value must have {} bytes, got {}", type_->ToString(), type_->byte_width(), bytes.size());
    data_.Append(bytes.data(), bytes.size());
  } else {
    data_.Append(bytes.data(), bytes.size());
    if (type_->has_large_offsets()) {
      offsets_.Push<int64_t>(int64_t(data_.size()));
    } else {
      if (data_.size() > size_t(INT32_MAX))
        ThrowInvalid("{} column exceeds 2 GiB of values; use large_utf8/large_binary", type_->ToString());
      offsets_.Push<int32_t>(int32_t(data_.size()));
    }
  }
  validity_.Append(true);
}

void BinaryBuilder::AppendNull() {
  if (!type_->is_variable_binary()) {
    data_.Resize(data_.size() + size_t(type_->byte_width()));
  } else if (type_->has_large_offsets()) {
    offsets_.Push<int64_t>(int64_t(data_.size()));
  } else {
    offsets_.Push<int32_t>(int32_t(data_.size()));
  }
  validity_.Append(false);
}

void BinaryBuilder::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  if (!std::holds_alternative<std::string>(value.value)) Mismatch(*type_, value);
  Append(value.as_string());
}

ArrayPtr BinaryBuilder::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = NewArray(type_, n, nulls, validity_.Finish());
  if (!type_->is_variable_binary()) {
    out->buffers.push_back(data_.Finish());
  } else {
    out->buffers.push_back(offsets_.Finish());
    out->buffers.push_back(data_.Finish());
    if (type_->has_large_offsets()) offsets_.Push<int64_t>(0);
    else offsets_.Push<int32_t>(0);
  }
  return out;
}

ListBuilder::ListBuilder(TypePtr type) : ArrayBuilder(std::move(type)), items_(Make(type_->child(0)->type)) {
  if (type_->is_list()) {
    if (type_->has_large_offsets()) offsets_.Push<int64_t>(0);
    else offsets_.Push<int32_t>(0);
  }
}

void ListBuilder::Append() {
  if (type_->id() == TypeId::kFixedSizeList) {
    int64_t expected = (validity_.length() + 1) * type_->fixed_size();
    if (items_->length() != expected)
      ThrowInvalid("a {} value must have {} items, got {}", type_->ToString(), type_->fixed_size(),
                   items_->length() - validity_.length() * type_->fixed_size());
  } else if (type_->has_large_offsets()) {
    offsets_.Push<int64_t>(items_->length());
  } else {
    offsets_.Push<int32_t>(int32_t(items_->length()));
  }
  validity_.Append(true);
}

void ListBuilder::AppendNull() {
  if (type_->id() == TypeId::kFixedSizeList) items_->AppendNulls(type_->fixed_size());
  else if (type_->has_large_offsets()) offsets_.Push<int64_t>(items_->length());
  else offsets_.Push<int32_t>(int32_t(items_->length()));
  validity_.Append(false);
}

void ListBuilder::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  if (!std::holds_alternative<std::vector<Scalar>>(value.value)) Mismatch(*type_, value);
  const auto& items = value.as_list();
  if (type_->id() == TypeId::kFixedSizeList && int64_t(items.size()) != type_->fixed_size())
    ThrowInvalid("a {} value must have {} items, got {}", type_->ToString(), type_->fixed_size(), items.size());
  for (const auto& item : items) items_->AppendScalar(item);
  Append();
}

ArrayPtr ListBuilder::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = NewArray(type_, n, nulls, validity_.Finish());
  if (type_->is_list()) {
    out->buffers.push_back(offsets_.Finish());
    if (type_->has_large_offsets()) offsets_.Push<int64_t>(0);
    else offsets_.Push<int32_t>(0);
  }
  out->children.push_back(items_->Finish());
  return out;
}

StructBuilder::StructBuilder(TypePtr type) : ArrayBuilder(std::move(type)) {
  for (const auto& f : type_->children()) fields_.push_back(Make(f->type));
}

void StructBuilder::Append() {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i]->length() != validity_.length() + 1)
      ThrowInvalid("struct field '{}' has {} values for {} rows", type_->child(i)->name, fields_[i]->length(),
                   validity_.length() + 1);
  validity_.Append(true);
}

void StructBuilder::AppendNull() {
  for (auto& f : fields_) f->AppendNull();
  validity_.Append(false);
}

void StructBuilder::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  if (!std::holds_alternative<std::vector<Scalar>>(value.value)) Mismatch(*type_, value);
  const auto& values = value.as_list();
  if (values.size() != fields_.size())
    ThrowInvalid("a {} value needs {} fields, got {}", type_->ToString(), fields_.size(), values.size());
  for (size_t i = 0; i < fields_.size(); ++i) fields_[i]->AppendScalar(values[i]);
  Append();
}

ArrayPtr StructBuilder::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = NewArray(type_, n, nulls, validity_.Finish());
  for (auto& f : fields_) out->children.push_back(f->Finish());
  return out;
}

void NullBuilder::AppendScalar(const Scalar& value) {
  if (!value.is_null()) Mismatch(*type_, value);
  AppendNull();
}

ArrayPtr NullBuilder::Finish() {
  int64_t n = validity_.length();
  validity_.Finish();
  return MakeNullArray(type_, n);
}

std::unique_ptr<ArrayBuilder> ArrayBuilder::Make(const TypePtr& type) {
  switch (type->id()) {
    case TypeId::kNull: return std::make_unique<NullBuilder>(type);
    case TypeId::kBool: return std::make_unique<BoolBuilder>(type);
    case TypeId::kInt8: return std::make_unique<FixedWidthBuilder<int8_t>>(type);
    case TypeId::kInt16: return std::make_unique<FixedWidthBuilder<int16_t>>(type);
    case TypeId::kInt32: case TypeId::kDate32: case TypeId::kTime32:
      return std::make_unique<FixedWidthBuilder<int32_t>>(type);
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: case TypeId::kTime64:
    case TypeId::kDuration:
      return std::make_unique<FixedWidthBuilder<int64_t>>(type);
    case TypeId::kUInt8: return std::make_unique<FixedWidthBuilder<uint8_t>>(type);
    case TypeId::kUInt16: return std::make_unique<FixedWidthBuilder<uint16_t>>(type);
    case TypeId::kUInt32: return std::make_unique<FixedWidthBuilder<uint32_t>>(type);
    case TypeId::kUInt64: return std::make_unique<FixedWidthBuilder<uint64_t>>(type);
    case TypeId::kFloat16: return std::make_unique<Float16Builder>(type);
    case TypeId::kFloat32: return std::make_unique<FixedWidthBuilder<float>>(type);
    case TypeId::kFloat64: return std::make_unique<FixedWidthBuilder<double>>(type);
    case TypeId::kUtf8: case TypeId::kLargeUtf8: case TypeId::kBinary: case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary: case TypeId::kDecimal128: case TypeId::kDecimal256:
      return std::make_unique<BinaryBuilder>(type);
    case TypeId::kList: case TypeId::kLargeList: case TypeId::kFixedSizeList: case TypeId::kMap:
      return std::make_unique<ListBuilder>(type);
    case TypeId::kStruct: return std::make_unique<StructBuilder>(type);
  }
  ThrowNotSupported("no builder for type {}", type->ToString());
}

}  // namespace lancelet

namespace lancelet {

void Float16Builder::AppendScalar(const Scalar& value) {
  if (value.is_null()) return AppendNull();
  Append(FloatToHalf(float(value.as_double())));
}

ArrayPtr Float16Builder::Finish() {
  int64_t n = validity_.length(), nulls = validity_.null_count();
  auto out = std::make_shared<ArrayData>();
  out->type = type_;
  out->length = n;
  out->null_count = nulls;
  out->buffers.push_back(validity_.Finish());
  out->buffers.push_back(values_.Finish());
  return out;
}

}  // namespace lancelet
