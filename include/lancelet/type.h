// Logical data types, fields and schemas, following the Arrow type system.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lancelet {

enum class TypeId : uint8_t {
  kBool,
  kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64,
  kFloat16, kFloat32, kFloat64,
  kUtf8, kLargeUtf8, kBinary, kLargeBinary, kFixedSizeBinary,
  kFixedSizeList, kList, kLargeList, kStruct,
  kDate32, kDate64, kTimestamp,
  // Time of day (time32: s or ms; time64: us or ns), an elapsed time in a unit, and
  // fixed-point decimals: a 128- or 256-bit two's-complement integer scaled by 10^-scale.
  kTime32, kTime64, kDuration, kDecimal128, kDecimal256,
  kNull,  // no values: every slot is NULL, no buffers
  // A list of key/value entries: laid out as list<struct<key, value>> (int32 offsets, one
  // "entries" struct child whose first field, the key, is never NULL).
  kMap,
};

enum class TimeUnit : uint8_t { kSecond, kMilli, kMicro, kNano };

struct Field;
class DataType;
using FieldPtr = std::shared_ptr<const Field>;
using TypePtr = std::shared_ptr<const DataType>;

// An immutable type. Nested types own their child fields.
class DataType {
 public:
  TypeId id() const { return id_; }
  // Byte width of a fixed_size_binary, list size of a fixed_size_list; 0 otherwise.
  int32_t fixed_size() const { return fixed_size_; }
  TimeUnit unit() const { return unit_; }  // timestamp, time32/64, duration
  int32_t precision() const { return precision_; }  // decimals only
  int32_t scale() const { return scale_; }          // decimals only; may be negative
  bool is_decimal() const { return id_ == TypeId::kDecimal128 || id_ == TypeId::kDecimal256; }
  // time32, time64 and duration: one signed integer count of unit() per value.
  bool is_time_count() const {
    return id_ == TypeId::kTime32 || id_ == TypeId::kTime64 || id_ == TypeId::kDuration;
  }
  const std::string& timezone() const { return timezone_; }
  const std::vector<FieldPtr>& children() const { return children_; }
  const FieldPtr& child(size_t i) const { return children_.at(i); }

  // Bits per value of a fixed-width primitive (bool = 1); 0 for everything else.
  int bit_width() const;
  bool is_integer() const;
  bool is_signed_integer() const;
  bool is_floating() const;
  bool is_numeric() const { return is_integer() || is_floating(); }
  bool is_temporal() const;
  // Bytes per slot of a fixed-stride values buffer: fixed_size_binary's width, a
  // primitive's bit_width / 8; 0 for bool and for types without such a buffer.
  int32_t byte_width() const { return id_ == TypeId::kFixedSizeBinary ? fixed_size_ : bit_width() / 8; }
  // Types whose values are one fixed-width slot in the values buffer (incl. bool, temporal).
  bool is_fixed_width() const { return bit_width() > 0; }
  // utf8, large_utf8, binary, large_binary.
  bool is_variable_binary() const;
  bool is_string() const { return id_ == TypeId::kUtf8 || id_ == TypeId::kLargeUtf8; }
  // Offsets are int64 (large_utf8, large_binary, large_list).
  bool has_large_offsets() const;
  // list, large_list and map (a map is laid out as a list of its entries).
  bool is_list() const { return id_ == TypeId::kList || id_ == TypeId::kLargeList || id_ == TypeId::kMap; }
  bool keys_sorted() const { return fixed_size_ != 0; }  // maps only
  bool is_nested() const;

  // Human spelling used by the CLI and tests: int32, utf8, fixed_size_list<float32,4>,
  // list<int32>, struct<a:int32,b:utf8>, timestamp<us,UTC>, time64<us>, duration<ms>,
  // decimal128<10,2>, null ...
  std::string ToString() const;
  bool Equals(const DataType& other) const;

  static TypePtr Bool();
  static TypePtr Int8();
  static TypePtr Int16();
  static TypePtr Int32();
  static TypePtr Int64();
  static TypePtr UInt8();
  static TypePtr UInt16();
  static TypePtr UInt32();
  static TypePtr UInt64();
  static TypePtr Float16();
  static TypePtr Float32();
  static TypePtr Float64();
  static TypePtr Utf8();
  static TypePtr LargeUtf8();
  static TypePtr Binary();
  static TypePtr LargeBinary();
  static TypePtr Date32();
  static TypePtr Date64();
  static TypePtr Primitive(TypeId id);  // any of the parameterless types above
  static TypePtr FixedSizeBinary(int32_t byte_width);
  static TypePtr FixedSizeList(FieldPtr item, int32_t list_size);
  static TypePtr FixedSizeList(TypePtr item, int32_t list_size);
  static TypePtr List(FieldPtr item);
  static TypePtr List(TypePtr item);
  static TypePtr LargeList(FieldPtr item);
  static TypePtr LargeList(TypePtr item);
  static TypePtr Struct(std::vector<FieldPtr> fields);
  static TypePtr Timestamp(TimeUnit unit, std::string timezone = "");
  static TypePtr Time32(TimeUnit unit);  // s or ms
  static TypePtr Time64(TimeUnit unit);  // us or ns
  static TypePtr Duration(TimeUnit unit);
  // precision 1..38 (128) or 1..76 (256); |scale| <= precision is not required by Arrow.
  static TypePtr Decimal128(int32_t precision, int32_t scale);
  static TypePtr Decimal256(int32_t precision, int32_t scale);
  static TypePtr Null();
  // map<key, value>: `entries` is a non-null struct field of two children, the first
  // (the key) not nullable.
  static TypePtr Map(FieldPtr entries, bool keys_sorted = false);
  static TypePtr Map(TypePtr key, TypePtr value, bool keys_sorted = false);

  // Parses the spelling ToString produces. Throws InvalidArgument naming the position.
  static TypePtr Parse(const std::string& text);

 private:
  DataType(TypeId id) : id_(id) {}
  TypeId id_;
  int32_t fixed_size_ = 0;
  TimeUnit unit_ = TimeUnit::kSecond;
  int32_t precision_ = 0;
  int32_t scale_ = 0;
  std::string timezone_;
  std::vector<FieldPtr> children_;
};

using Metadata = std::map<std::string, std::string>;

struct Field {
  std::string name;
  TypePtr type;
  bool nullable = true;
  Metadata metadata;
  // Set when the values arrived dictionary-encoded (Arrow IPC input) or are stored so (a
  // Lance "dict:*" field): the key type. `type` is the value type, which arrays hold.
  TypePtr dictionary_index;

  static FieldPtr Make(std::string name, TypePtr type, bool nullable = true, Metadata metadata = {});
  bool Equals(const Field& other) const;  // name, type and nullability
};

class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<FieldPtr> fields, Metadata metadata = {})
      : fields_(std::move(fields)), metadata_(std::move(metadata)) {}

  const std::vector<FieldPtr>& fields() const { return fields_; }
  const FieldPtr& field(size_t i) const { return fields_.at(i); }
  size_t num_fields() const { return fields_.size(); }
  const Metadata& metadata() const { return metadata_; }
  // Index of the top-level field with this name, or -1.
  int FieldIndex(const std::string& name) const;
  std::string ToString() const;  // "id:int32, name:utf8"
  bool Equals(const Schema& other) const;

  // Parses "id:int32,name:utf8,embedding:fixed_size_list<float32,4>" (the CLI's --schema).
  static std::shared_ptr<Schema> Parse(const std::string& text);

 private:
  std::vector<FieldPtr> fields_;
  Metadata metadata_;
};

using SchemaPtr = std::shared_ptr<const Schema>;

}  // namespace lancelet
