// Builders append values one at a time and produce an ArrayData.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "lancelet/array.h"
#include "lancelet/scalar.h"

namespace lancelet {

// Growable byte storage used by the builders.
class ByteVector {
 public:
  void Append(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  template <typename T>
  void Push(T v) { Append(&v, sizeof(T)); }
  void Resize(size_t size) { bytes_.resize(size, 0); }
  size_t size() const { return bytes_.size(); }
  uint8_t* data() { return bytes_.data(); }
  void Reserve(size_t n) { bytes_.reserve(n); }
  BufferPtr Finish();  // moves the bytes into a Buffer and resets

 private:
  std::vector<uint8_t> bytes_;
};

// Validity bits; remembers whether any null was appended so that all-valid arrays
// get no bitmap.
class ValidityBuilder {
 public:
  void Append(bool valid);
  void AppendN(int64_t n, bool valid);
  int64_t length() const { return length_; }
  int64_t null_count() const { return null_count_; }
  BufferPtr Finish();  // null when no nulls; resets

 private:
  std::vector<uint8_t> bits_;
  int64_t length_ = 0;
  int64_t null_count_ = 0;
};

class ArrayBuilder {
 public:
  explicit ArrayBuilder(TypePtr type) : type_(std::move(type)) {}
  virtual ~ArrayBuilder() = default;
  static std::unique_ptr<ArrayBuilder> Make(const TypePtr& type);

  const TypePtr& type() const { return type_; }
  int64_t length() const { return validity_.length(); }
  virtual void AppendNull() = 0;
  void AppendNulls(int64_t n) { for (int64_t i = 0; i < n; ++i) AppendNull(); }
  // Appends a value of this builder's type (or NULL). Throws InvalidArgument on mismatch.
  virtual void AppendScalar(const Scalar& value) = 0;
  // Appends element i of `array`, which must have this builder's type.
  virtual void AppendFrom(const ArrayData& array, int64_t i);
  virtual ArrayPtr Finish() = 0;

 protected:
  TypePtr type_;
  ValidityBuilder validity_;
};

// The null type: every value is NULL.
class NullBuilder final : public ArrayBuilder {
 public:
  using ArrayBuilder::ArrayBuilder;
  void AppendNull() override { validity_.Append(false); }
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;
};

// bool, integers, floats (float16 takes the raw uint16 bits), date32/64, timestamp,
// time32/64, duration.
template <typename T>
class FixedWidthBuilder final : public ArrayBuilder {
 public:
  using ArrayBuilder::ArrayBuilder;
  void Append(T v) { validity_.Append(true); values_.Push(v); }
  void AppendNull() override { validity_.Append(false); values_.Push(T{}); }
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  ByteVector values_;
};

// float16: Append takes the raw bits; AppendScalar rounds a double payload to half.
class Float16Builder final : public ArrayBuilder {
 public:
  using ArrayBuilder::ArrayBuilder;
  void Append(uint16_t bits) { validity_.Append(true); values_.Push(bits); }
  void AppendNull() override { validity_.Append(false); values_.Push(uint16_t(0)); }
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  ByteVector values_;
};

class BoolBuilder final : public ArrayBuilder {
 public:
  using ArrayBuilder::ArrayBuilder;
  void Append(bool v) { PushBit(v); validity_.Append(true); }
  void AppendNull() override { PushBit(false); validity_.Append(false); }
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  void PushBit(bool v);
  std::vector<uint8_t> bits_;
};

// utf8, large_utf8, binary, large_binary, fixed_size_binary.
class BinaryBuilder final : public ArrayBuilder {
 public:
  explicit BinaryBuilder(TypePtr type);
  void Append(std::string_view bytes);
  void AppendNull() override;
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  ByteVector offsets_;
  ByteVector data_;
};

// list, large_list, fixed_size_list: append the items to item_builder(), then call
// Append() to close one list element.
class ListBuilder final : public ArrayBuilder {
 public:
  explicit ListBuilder(TypePtr type);
  ArrayBuilder& item_builder() { return *items_; }
  void Append();
  void AppendNull() override;  // for fixed_size_list, appends list_size null items
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  std::unique_ptr<ArrayBuilder> items_;
  ByteVector offsets_;
};

// struct: append one value to every field_builder(i), then call Append().
class StructBuilder final : public ArrayBuilder {
 public:
  explicit StructBuilder(TypePtr type);
  ArrayBuilder& field_builder(size_t i) { return *fields_.at(i); }
  void Append();
  void AppendNull() override;  // appends a null to every field too
  void AppendScalar(const Scalar& value) override;
  ArrayPtr Finish() override;

 private:
  std::vector<std::unique_ptr<ArrayBuilder>> fields_;
};

}  // namespace lancelet
