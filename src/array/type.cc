#include "lancelet/type.h"

#include <cctype>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "lancelet/error.h"

namespace lancelet {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kCorrupt: return "corrupt";
    case ErrorKind::kNotSupported: return "not supported";
    case ErrorKind::kConflict: return "conflict";
    case ErrorKind::kIo: return "io error";
  }
  return "error";
}

namespace {

struct PrimitiveName {
  TypeId id;
  const char* name;
};
constexpr PrimitiveName kPrimitiveNames[] = {
    {TypeId::kBool, "bool"},       {TypeId::kInt8, "int8"},          {TypeId::kInt16, "int16"},
    {TypeId::kInt32, "int32"},     {TypeId::kInt64, "int64"},        {TypeId::kUInt8, "uint8"},
    {TypeId::kUInt16, "uint16"},   {TypeId::kUInt32, "uint32"},      {TypeId::kUInt64, "uint64"},
    {TypeId::kFloat16, "float16"}, {TypeId::kFloat32, "float32"},    {TypeId::kFloat64, "float64"},
    {TypeId::kUtf8, "utf8"},       {TypeId::kLargeUtf8, "large_utf8"}, {TypeId::kBinary, "binary"},
    {TypeId::kLargeBinary, "large_binary"}, {TypeId::kDate32, "date32"}, {TypeId::kDate64, "date64"},
    {TypeId::kNull, "null"},
};

const char* TimeUnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "ms";
    case TimeUnit::kMicro: return "us";
    case TimeUnit::kNano: return "ns";
  }
  return "?";
}

}  // namespace

int DataType::bit_width() const {
  switch (id_) {
    case TypeId::kBool: return 1;
    case TypeId::kInt8: case TypeId::kUInt8: return 8;
    case TypeId::kInt16: case TypeId::kUInt16: case TypeId::kFloat16: return 16;
    case TypeId::kInt32: case TypeId::kUInt32: case TypeId::kFloat32: case TypeId::kDate32:
    case TypeId::kTime32: return 32;
    case TypeId::kInt64: case TypeId::kUInt64: case TypeId::kFloat64: case TypeId::kDate64:
    case TypeId::kTimestamp: case TypeId::kTime64: case TypeId::kDuration: return 64;
    case TypeId::kDecimal128: return 128;
    case TypeId::kDecimal256: return 256;
    default: return 0;
  }
}

bool DataType::is_integer() const {
  return id_ >= TypeId::kInt8 && id_ <= TypeId::kUInt64;
}
bool DataType::is_signed_integer() const { return id_ >= TypeId::kInt8 && id_ <= TypeId::kInt64; }
bool DataType::is_floating() const { return id_ >= TypeId::kFloat16 && id_ <= TypeId::kFloat64; }
bool DataType::is_temporal() const {
  return id_ == TypeId::kDate32 || id_ == TypeId::kDate64 || id_ == TypeId::kTimestamp;
}
bool DataType::is_variable_binary() const {
  return id_ == TypeId::kUtf8 || id_ == TypeId::kLargeUtf8 || id_ == TypeId::kBinary ||
         id_ == TypeId::kLargeBinary;
}
bool DataType::has_large_offsets() const {
  return id_ == TypeId::kLargeUtf8 || id_ == TypeId::kLargeBinary || id_ == TypeId::kLargeList;
}
bool DataType::is_nested() const {
  return id_ == TypeId::kList || id_ == TypeId::kLargeList || id_ == TypeId::kFixedSizeList ||
         id_ == TypeId::kStruct || id_ == TypeId::kMap;
}

std::string DataType::ToString() const {
  for (const auto& p : kPrimitiveNames)
    if (p.id == id_) return p.name;
  switch (id_) {
    case TypeId::kFixedSizeBinary: return fmt::format("fixed_size_binary<{}>", fixed_size_);
    case TypeId::kFixedSizeList:
      return fmt::format("fixed_size_list<{},{}>", children_[0]->type->ToString(), fixed_size_);
    case TypeId::kList: return fmt::format("list<{}>", children_[0]->type->ToString());
    case TypeId::kLargeList: return fmt::format("large_list<{}>", children_[0]->type->ToString());
    case TypeId::kMap: {
      const DataType& entries = *children_[0]->type;
      return fmt::format("map<{},{}{}>", entries.child(0)->type->ToString(), entries.child(1)->type->ToString(),
                         keys_sorted() ? ",sorted" : "");
    }
    case TypeId::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i) out += ",";
        out += children_[i]->name + ":" + children_[i]->type->ToString();
      }
      return out + ">";
    }
    case TypeId::kTimestamp:
      return timezone_.empty() ? fmt::format("timestamp<{}>", TimeUnitName(unit_))
                               : fmt::format("timestamp<{},{}>", TimeUnitName(unit_), timezone_);
    case TypeId::kTime32: return fmt::format("time32<{}>", TimeUnitName(unit_));
    case TypeId::kTime64: return fmt::format("time64<{}>", TimeUnitName(unit_));
    case TypeId::kDuration: return fmt::format("duration<{}>", TimeUnitName(unit_));
    case TypeId::kDecimal128: return fmt::format("decimal128<{},{}>", precision_, scale_);
    case TypeId::kDecimal256: return fmt::format("decimal256<{},{}>", precision_, scale_);
    default: return "?";
  }
}

bool DataType::Equals(const DataType& o) const {
  if (this == &o) return true;
  if (id_ != o.id_ || fixed_size_ != o.fixed_size_ || unit_ != o.unit_ || timezone_ != o.timezone_ ||
      precision_ != o.precision_ || scale_ != o.scale_ || children_.size() != o.children_.size())
    return false;
  for (size_t i = 0; i < children_.size(); ++i) {
    // List item names differ between writers ("item", "element"); only struct names matter.
    if (id_ == TypeId::kStruct && children_[i]->name != o.children_[i]->name) return false;
    if (!children_[i]->type->Equals(*o.children_[i]->type)) return false;
  }
  return true;
}

TypePtr DataType::Primitive(TypeId id) {
  static const auto* cache = [] {
    auto* m = new std::vector<TypePtr>(32);
    for (const auto& p : kPrimitiveNames) (*m)[size_t(p.id)] = TypePtr(new DataType(p.id));
    return m;
  }();
  const TypePtr& t = (*cache)[size_t(id)];
  if (!t) ThrowInvalid("type id {} is not a parameterless type", int(id));
  return t;
}

TypePtr DataType::Bool() { return Primitive(TypeId::kBool); }
TypePtr DataType::Int8() { return Primitive(TypeId::kInt8); }
TypePtr DataType::Int16() { return Primitive(TypeId::kInt16); }
TypePtr DataType::Int32() { return Primitive(TypeId::kInt32); }
TypePtr DataType::Int64() { return Primitive(TypeId::kInt64); }
TypePtr DataType::UInt8() { return Primitive(TypeId::kUInt8); }
TypePtr DataType::UInt16() { return Primitive(TypeId::kUInt16); }
TypePtr DataType::UInt32() { return Primitive(TypeId::kUInt32); }
TypePtr DataType::UInt64() { return Primitive(TypeId::kUInt64); }
TypePtr DataType::Float16() { return Primitive(TypeId::kFloat16); }
TypePtr DataType::Float32() { return Primitive(TypeId::kFloat32); }
TypePtr DataType::Float64() { return Primitive(TypeId::kFloat64); }
TypePtr DataType::Utf8() { return Primitive(TypeId::kUtf8); }
TypePtr DataType::LargeUtf8() { return Primitive(TypeId::kLargeUtf8); }
TypePtr DataType::Binary() { return Primitive(TypeId::kBinary); }
TypePtr DataType::LargeBinary() { return Primitive(TypeId::kLargeBinary); }
TypePtr DataType::Date32() { return Primitive(TypeId::kDate32); }
TypePtr DataType::Date64() { return Primitive(TypeId::kDate64); }
TypePtr DataType::Null() { return Primitive(TypeId::kNull); }

TypePtr DataType::FixedSizeBinary(int32_t byte_width) {
  if (byte_width <= 0) ThrowInvalid("fixed_size_binary width must be positive, got {}", byte_width);
  auto* t = new DataType(TypeId::kFixedSizeBinary);
  t->fixed_size_ = byte_width;
  return TypePtr(t);
}
TypePtr DataType::FixedSizeList(FieldPtr item, int32_t list_size) {
  if (list_size <= 0) ThrowInvalid("fixed_size_list size must be positive, got {}", list_size);
  auto* t = new DataType(TypeId::kFixedSizeList);
  t->fixed_size_ = list_size;
  t->children_ = {std::move(item)};
  return TypePtr(t);
}
TypePtr DataType::FixedSizeList(TypePtr item, int32_t list_size) {
  return FixedSizeList(Field::Make("item", std::move(item)), list_size);
}
TypePtr DataType::List(FieldPtr item) {
  auto* t = new DataType(TypeId::kList);
  t->children_ = {std::move(item)};
  return TypePtr(t);
}
TypePtr DataType::List(TypePtr item) { return List(Field::Make("item", std::move(item))); }
TypePtr DataType::LargeList(FieldPtr item) {
  auto* t = new DataType(TypeId::kLargeList);
  t->children_ = {std::move(item)};
  return TypePtr(t);
}
TypePtr DataType::LargeList(TypePtr item) { return LargeList(Field::Make("item", std::move(item))); }
TypePtr DataType::Struct(std::vector<FieldPtr> fields) {
  auto* t = new DataType(TypeId::kStruct);
  t->children_ = std::move(fields);
  return TypePtr(t);
}
TypePtr DataType::Timestamp(TimeUnit unit, std::string timezone) {
  auto* t = new DataType(TypeId::kTimestamp);
  t->unit_ = unit;
  t->timezone_ = std::move(timezone);
  return TypePtr(t);
}

TypePtr DataType::Time32(TimeUnit unit) {
  if (unit != TimeUnit::kSecond && unit != TimeUnit::kMilli)
    ThrowInvalid("time32 takes the unit s or ms, got {}", TimeUnitName(unit));
  auto* t = new DataType(TypeId::kTime32);
  t->unit_ = unit;
  return TypePtr(t);
}
TypePtr DataType::Time64(TimeUnit unit) {
  if (unit != TimeUnit::kMicro && unit != TimeUnit::kNano)
    ThrowInvalid("time64 takes the unit us or ns, got {}", TimeUnitName(unit));
  auto* t = new DataType(TypeId::kTime64);
  t->unit_ = unit;
  return TypePtr(t);
}
TypePtr DataType::Map(FieldPtr entries, bool keys_sorted) {
  const DataType& e = *entries->type;
  if (e.id() != TypeId::kStruct || e.children().size() != 2)
    ThrowInvalid("a map's entries must be a struct of a key and a value, got {}", e.ToString());
  if (e.child(0)->nullable) ThrowInvalid("a map's key field '{}' must not be nullable", e.child(0)->name);
  auto* t = new DataType(TypeId::kMap);
  t->fixed_size_ = keys_sorted ? 1 : 0;
  t->children_ = {std::move(entries)};
  return TypePtr(t);
}
TypePtr DataType::Map(TypePtr key, TypePtr value, bool keys_sorted) {
  return Map(Field::Make("entries",
                         Struct({Field::Make("key", std::move(key), false), Field::Make("value", std::move(value))}),
                         false),
             keys_sorted);
}

TypePtr DataType::Duration(TimeUnit unit) {
  auto* t = new DataType(TypeId::kDuration);
  t->unit_ = unit;
  return TypePtr(t);
}

namespace {

void CheckDecimal(int bits, int32_t max_precision, int32_t precision, int32_t scale) {
  if (precision < 1 || precision > max_precision)
    ThrowInvalid("decimal{} precision must be in 1..{}, got {}", bits, max_precision, precision);
  if (scale > precision || scale < -max_precision)
    ThrowInvalid("decimal{} scale {} does not fit precision {}", bits, scale, precision);
}

}  // namespace

TypePtr DataType::Decimal128(int32_t precision, int32_t scale) {
  CheckDecimal(128, 38, precision, scale);
  auto* t = new DataType(TypeId::kDecimal128);
  t->precision_ = precision;
  t->scale_ = scale;
  return TypePtr(t);
}
TypePtr DataType::Decimal256(int32_t precision, int32_t scale) {
  CheckDecimal(256, 76, precision, scale);
  auto* t = new DataType(TypeId::kDecimal256);
  t->precision_ = precision;
  t->scale_ = scale;
  return TypePtr(t);
}

namespace {

// Recursive-descent parser for the type spelling.
class TypeParser {
 public:
  explicit TypeParser(const std::string& text) : s_(text) {}

  TypePtr ParseWhole() {
    TypePtr t = ParseType();
    SkipSpace();
    if (pos_ != s_.size()) Fail("end of type");
    return t;
  }

  std::shared_ptr<Schema> ParseSchema() {
    std::vector<FieldPtr> fields;
    SkipSpace();
    if (pos_ == s_.size()) Fail("a field 'name:type'");
    while (true) {
      fields.push_back(ParseField());
      SkipSpace();
      if (pos_ == s_.size()) break;
      Expect(',');
    }
    return std::make_shared<Schema>(std::move(fields));
  }

 private:
  [[noreturn]] void Fail(const char* expected) {
    ThrowInvalid("expected {} at position {} in type \"{}\"", expected, pos_ + 1, s_);
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  void Expect(char c) {
    if (!Accept(c)) {
      char msg[8] = {'\'', c, '\'', 0};
      Fail(msg);
    }
  }
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  TimeUnit Unit() {
    std::string u = Word();
    if (u == "s") return TimeUnit::kSecond;
    if (u == "ms") return TimeUnit::kMilli;
    if (u == "us") return TimeUnit::kMicro;
    if (u == "ns") return TimeUnit::kNano;
    Fail("a time unit (s, ms, us, ns)");
  }
  int32_t Number() {
    std::string w = Word();
    if (w.empty() || w.find_first_not_of("0123456789") != std::string::npos || w.size() > 9)
      Fail("a positive integer");
    return std::stoi(w);
  }
  FieldPtr ParseField() {
    SkipSpace();
    std::string name;
    if (Accept('"')) {
      while (pos_ < s_.size() && s_[pos_] != '"') name += s_[pos_++];
      Expect('"');
    } else {
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] != ':' && s_[pos_] != ',' && s_[pos_] != '>') ++pos_;
      name = s_.substr(start, pos_ - start);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    }
    if (name.empty()) Fail("a field name");
    Expect(':');
    TypePtr t = ParseType();
    bool nullable = true;
    SkipSpace();
    size_t save = pos_;
    std::string w = Word();
    if (w == "not") {
      if (Word() != "null") Fail("'null' after 'not'");
      nullable = false;
    } else {
      pos_ = save;
    }
    return Field::Make(std::move(name), std::move(t), nullable);
  }
  TypePtr ParseType() {
    size_t start = pos_;
    const std::string w = AsciiLower(Word());
    for (const auto& p : kPrimitiveNames)
      if (w == p.name) return DataType::Primitive(p.id);
    // Friendly aliases.
    if (w == "string") return DataType::Utf8();
    if (w == "large_string") return DataType::LargeUtf8();
    if (w == "float" || w == "halffloat") return w == "float" ? DataType::Float32() : DataType::Float16();
    if (w == "double") return DataType::Float64();
    if (w == "boolean") return DataType::Bool();
    // SQL's names, as CREATE TABLE and DuckDB take them (int8 stays Arrow's 8-bit integer).
    if (w == "integer" || w == "int") return DataType::Int32();
    if (w == "bigint") return DataType::Int64();
    if (w == "smallint") return DataType::Int16();
    if (w == "tinyint") return DataType::Int8();
    if (w == "ubigint" || w == "uinteger" || w == "usmallint" || w == "utinyint")
      return w == "ubigint" ? DataType::UInt64() : w == "uinteger" ? DataType::UInt32()
                                              : w == "usmallint" ? DataType::UInt16() : DataType::UInt8();
    if (w == "real") return DataType::Float32();
    if (w == "varchar" || w == "text" || w == "char") return DataType::Utf8();
    if (w == "blob" || w == "bytea" || w == "varbinary") return DataType::Binary();
    if (w == "date") return DataType::Date32();
    if (w == "time") return DataType::Time64(TimeUnit::kMicro);
    if (w == "timestamp") {  // bare: microseconds, as SQL's TIMESTAMP
      SkipSpace();
      if (pos_ == s_.size() || s_[pos_] != '<') return DataType::Timestamp(TimeUnit::kMicro);
    }
    if (w == "fixed_size_binary") {
      Expect('<');
      int32_t n = Number();
      Expect('>');
      return DataType::FixedSizeBinary(n);
    }
    if (w == "fixed_size_list") {
      Expect('<');
      TypePtr item = ParseType();
      Expect(',');
      int32_t n = Number();
      Expect('>');
      return DataType::FixedSizeList(item, n);
    }
    if (w == "list" || w == "large_list") {
      Expect('<');
      TypePtr item = ParseType();
      Expect('>');
      return w == "list" ? DataType::List(item) : DataType::LargeList(item);
    }
    if (w == "struct") {
      Expect('<');
      std::vector<FieldPtr> fields;
      if (!Accept('>')) {
        do fields.push_back(ParseField());
        while (Accept(','));
        Expect('>');
      }
      return DataType::Struct(std::move(fields));
    }
    if (w == "map") {
      Expect('<');
      TypePtr key = ParseType();
      Expect(',');
      TypePtr value = ParseType();
      bool sorted = false;
      if (Accept(',')) {
        if (Word() != "sorted") Fail("'sorted'");
        sorted = true;
      }
      Expect('>');
      return DataType::Map(key, value, sorted);
    }
    if (w == "time32" || w == "time64" || w == "duration") {
      Expect('<');
      TimeUnit unit = Unit();
      Expect('>');
      return w == "time32" ? DataType::Time32(unit) : w == "time64" ? DataType::Time64(unit) : DataType::Duration(unit);
    }
    if (w == "decimal128" || w == "decimal256" || w == "decimal") {
      Expect('<');
      int32_t precision = Number();
      Expect(',');
      int32_t scale = Accept('-') ? -Number() : Number();
      Expect('>');
      // decimal<p,s> picks the narrowest width that holds the precision.
      return w == "decimal256" || (w == "decimal" && precision > 38) ? DataType::Decimal256(precision, scale)
                                                                      : DataType::Decimal128(precision, scale);
    }
    if (w == "timestamp") {
      Expect('<');
      TimeUnit unit = Unit();
      std::string tz;
      if (Accept(',')) {
        SkipSpace();
        size_t b = pos_;
        while (pos_ < s_.size() && s_[pos_] != '>') ++pos_;
        tz = s_.substr(b, pos_ - b);
        while (!tz.empty() && std::isspace(static_cast<unsigned char>(tz.back()))) tz.pop_back();
      }
      Expect('>');
      return DataType::Timestamp(unit, tz);
    }
    pos_ = start;
    Fail("a type name (int32, utf8, list<...>, ...)");
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

TypePtr DataType::Parse(const std::string& text) { return TypeParser(text).ParseWhole(); }

FieldPtr Field::Make(std::string name, TypePtr type, bool nullable, Metadata metadata) {
  return std::make_shared<const Field>(Field{std::move(name), std::move(type), nullable, std::move(metadata), nullptr});
}

bool Field::Equals(const Field& o) const {
  return name == o.name && nullable == o.nullable && type->Equals(*o.type);
}

int Schema::FieldIndex(const std::string& name) const {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i]->name == name) return int(i);
  return -1;
}

std::string Schema::ToString() const {
  std::string out;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ", ";
    out += fields_[i]->name + ":" + fields_[i]->type->ToString();
    if (!fields_[i]->nullable) out += " not null";
  }
  return out;
}

bool Schema::Equals(const Schema& o) const {
  if (fields_.size() != o.fields_.size()) return false;
  for (size_t i = 0; i < fields_.size(); ++i)
    if (!fields_[i]->Equals(*o.fields_[i])) return false;
  return true;
}

std::shared_ptr<Schema> Schema::Parse(const std::string& text) { return TypeParser(text).ParseSchema(); }

}  // namespace lancelet
