#include "text/value_parse.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lancelet/error.h"
#include "text/base64.h"
#include "lancelet/decimal.h"
#include "text/number_text.h"
#include "text/temporal_text.h"
#include "text/utf8_text.h"

namespace lancelet::text {

// ordered_json keeps object keys in document order, which inference reports.
using json = nlohmann::ordered_json;

std::string ValuePath::ToString() const {
  std::string prefix = parent ? parent->ToString() : std::string();
  if (!key.empty()) return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
  return fmt::format("{}[{}]", prefix, index);
}

void ThrowMismatch(const ValueSource& source, const ValuePath& path, const DataType& type,
                   std::string_view found, std::string_view detail) {
  constexpr size_t kMaxShown = 60;
  std::string shown = EscapeForMessage(found.substr(0, kMaxShown));
  if (found.size() > kMaxShown) shown += "...";
  ThrowInvalid("{}: row {}, column '{}': expected {}{}, found {}", source.file, source.line, path.ToString(),
               type.ToString(), detail, shown);
}

void ThrowOutOfRange(const ValueSource& source, const ValuePath& path, const DataType& type,
                     std::string_view found) {
  ThrowInvalid("{}: row {}, column '{}': {} does not fit {}", source.file, source.line, path.ToString(),
               SanitizeUtf8(found.substr(0, 60)), type.ToString());
}

nlohmann::ordered_json ParseJsonText(std::string_view text, bool throw_errors) {
  std::string rewritten;
  if (text.find("-0") != std::string_view::npos) {
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      rewritten += c;
      if (in_string) {
        if (c == '\\' && i + 1 < text.size()) {
          rewritten += text[++i];
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '0') {
        const char after = i + 2 < text.size() ? text[i + 2] : ' ';
        const bool more_number = (after >= '0' && after <= '9') || after == '.' || after == 'e' || after == 'E';
        if (!more_number) {
          rewritten += "0.0";
          ++i;
        }
      }
    }
    text = rewritten;
  }
  try {
    return json::parse(text, nullptr, throw_errors);
  } catch (const json::out_of_range&) {  // a number past double's range (1e999), thrown even when not asked
    if (throw_errors) throw;
    return json(json::value_t::discarded);
  }
}

bool IsNegativeZero(const json& value) {
  return value.is_number_float() && value.get<double>() == 0.0 && std::signbit(value.get<double>());
}

namespace {

template <typename B>
B& As(ArrayBuilder& builder) {
  auto* typed = dynamic_cast<B*>(&builder);
  if (!typed) ThrowInvalid("no suitable builder for type {}", builder.type()->ToString());
  return *typed;
}

// Appends an integer to an integer, date or timestamp builder; false when out of range.
template <typename V>
bool AppendInteger(ArrayBuilder& builder, V value) {
  auto put = [&]<typename T>(std::type_identity<T>) {
    if (!std::in_range<T>(value)) return false;
    As<FixedWidthBuilder<T>>(builder).Append(static_cast<T>(value));
    return true;
  };
  switch (builder.type()->id()) {
    case TypeId::kInt8: return put(std::type_identity<int8_t>{});
    case TypeId::kInt16: return put(std::type_identity<int16_t>{});
    case TypeId::kInt32:
    case TypeId::kDate32:
    case TypeId::kTime32: return put(std::type_identity<int32_t>{});
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTimestamp:
    case TypeId::kTime64:
    case TypeId::kDuration: return put(std::type_identity<int64_t>{});
    case TypeId::kUInt8: return put(std::type_identity<uint8_t>{});
    case TypeId::kUInt16: return put(std::type_identity<uint16_t>{});
    case TypeId::kUInt32: return put(std::type_identity<uint32_t>{});
    case TypeId::kUInt64: return put(std::type_identity<uint64_t>{});
    default: return false;
  }
}

void AppendFloating(ArrayBuilder& builder, double value) {
  switch (builder.type()->id()) {
    case TypeId::kFloat16: As<Float16Builder>(builder).Append(DoubleToHalf(value)); break;
    case TypeId::kFloat32: As<FixedWidthBuilder<float>>(builder).Append(static_cast<float>(value)); break;
    default: As<FixedWidthBuilder<double>>(builder).Append(value); break;
  }
}

std::string Describe(const json& value) { return value.dump(); }

void AppendDecimalText(ArrayBuilder& builder, std::string_view text, const ValueSource& source,
                       const ValuePath& path, std::string_view shown) {
  auto bytes = ParseDecimal(text, *builder.type());
  if (!bytes) ThrowMismatch(source, path, *builder.type(), shown);
  As<BinaryBuilder>(builder).Append(*bytes);
}

// Binary kinds from base64 text; fixed_size_binary also checks the decoded length.
void AppendBase64(ArrayBuilder& builder, std::string_view text, const ValueSource& source,
                  const ValuePath& path, std::string_view shown) {
  const DataType& type = *builder.type();
  auto bytes = Base64Decode(text);
  if (!bytes) ThrowMismatch(source, path, type, shown, " (base64)");
  if (type.id() == TypeId::kFixedSizeBinary && static_cast<int64_t>(bytes->size()) != type.fixed_size()) {
    ThrowMismatch(source, path, type, shown,
                  fmt::format(" ({} bytes, base64), got {} bytes", type.fixed_size(), bytes->size()));
  }
  As<BinaryBuilder>(builder).Append(*bytes);
}

// Date, timestamp and time-of-day text; false when malformed or out of range.
bool AppendTemporalText(ArrayBuilder& builder, std::string_view text) {
  const DataType& type = *builder.type();
  switch (type.id()) {
    case TypeId::kTime32:
    case TypeId::kTime64: {
      auto value = ParseTimeOfDay(text, type.unit());
      return value && AppendInteger(builder, *value);
    }
    case TypeId::kDate32: {
      auto days = ParseDate(text);
      return days && AppendInteger(builder, *days);
    }
    case TypeId::kDate64: {
      auto parsed = ParseDateTime(text, TimeUnit::kMilli);
      return parsed && AppendInteger(builder, parsed->value);
    }
    default: {
      auto parsed = ParseDateTime(text, type.unit());
      return parsed && AppendInteger(builder, parsed->value);
    }
  }
}

void AppendJsonList(ArrayBuilder& builder, const json& value, const ValueSource& source,
                    const ValuePath& path) {
  const DataType& type = *builder.type();
  if (type.id() == TypeId::kMap && value.is_object()) {
    // {"k": v, ...}: one entry per member, the member name read as the key (nlohmann::json
    // keeps members sorted by name, so entries come in key order; a list of {"key", "value"}
    // objects keeps its own order).
    json entries = json::array();
    for (const auto& [key, item] : value.items()) entries.push_back({{"key", key}, {"value", item}});
    AppendJsonList(builder, entries, source, path);
    return;
  }
  if (!value.is_array()) ThrowMismatch(source, path, type, Describe(value));
  if (type.id() == TypeId::kFixedSizeList && static_cast<int64_t>(value.size()) != type.fixed_size()) {
    ThrowMismatch(source, path, type, Describe(value),
                  fmt::format(" ({} items), got {} items", type.fixed_size(), value.size()));
  }
  auto& list = As<ListBuilder>(builder);
  ArrayBuilder& items = list.item_builder();
  int64_t index = 0;
  for (const json& item : value) {
    ValuePath item_path{&path, {}, index++};
    AppendJson(items, item, source, item_path);
  }
  list.Append();
}

void AppendJsonStruct(ArrayBuilder& builder, const json& value, const ValueSource& source,
                      const ValuePath& path) {
  const DataType& type = *builder.type();
  if (!value.is_object()) ThrowMismatch(source, path, type, Describe(value));
  auto& fields = As<StructBuilder>(builder);
  for (size_t i = 0; i < type.children().size(); ++i) {
    const std::string& name = type.child(i)->name;
    ValuePath field_path{&path, name, 0};
    auto it = value.find(name);
    if (it == value.end()) {
      fields.field_builder(i).AppendNull();
    } else {
      AppendJson(fields.field_builder(i), *it, source, field_path);
    }
  }
  fields.Append();
}

// A JSON number, or numeric text ("NaN", "Infinity", "-Infinity" as the writer spells
// them), into a float16/32/64 builder.
void AppendJsonFloating(ArrayBuilder& builder, const json& value, const ValueSource& source, const ValuePath& path) {
  const DataType& type = *builder.type();
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    // Convert straight to float32 so that large integers round once.
    if (type.id() == TypeId::kFloat32) {
      As<FixedWidthBuilder<float>>(builder).Append(static_cast<float>(v));
    } else {
      AppendFloating(builder, static_cast<double>(v));
    }
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (type.id() == TypeId::kFloat32) {
      As<FixedWidthBuilder<float>>(builder).Append(static_cast<float>(v));
    } else {
      AppendFloating(builder, static_cast<double>(v));
    }
  } else if (value.is_number_float()) {
    AppendFloating(builder, value.get<double>());
  } else if (value.is_string()) {
    // "NaN", "Infinity", "-Infinity" as the writer spells them, or numeric text.
    const auto& text = value.get_ref<const std::string&>();
    if (type.id() == TypeId::kFloat32) {
      auto v = ParseFloat32(text);
      if (!v) ThrowMismatch(source, path, type, Describe(value));
      As<FixedWidthBuilder<float>>(builder).Append(*v);
    } else {
      auto v = ParseFloat64(text);
      if (!v) ThrowMismatch(source, path, type, Describe(value));
      AppendFloating(builder, *v);
    }
  } else {
    ThrowMismatch(source, path, type, Describe(value));
  }
}

}  // namespace

void AppendJson(ArrayBuilder& builder, const json& value, const ValueSource& source,
                const ValuePath& path) {
  if (value.is_null()) {
    builder.AppendNull();
    return;
  }
  const DataType& type = *builder.type();
  switch (type.id()) {
    case TypeId::kBool:
      if (!value.is_boolean()) ThrowMismatch(source, path, type, Describe(value));
      As<BoolBuilder>(builder).Append(value.get<bool>());
      return;
    case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64: {
      // nlohmann keeps integers as int64 / uint64, so values beyond 2^53 stay exact.
      // A float with an integral value (3.0) is that integer, as in an assignment.
      bool ok = false;
      if (value.is_number_unsigned()) {
        ok = AppendInteger(builder, value.get<uint64_t>());
      } else if (value.is_number_integer()) {
        ok = AppendInteger(builder, value.get<int64_t>());
      } else if (value.is_number_float() && std::trunc(value.get<double>()) == value.get<double>() &&
                 std::abs(value.get<double>()) < 0x1p63) {
        ok = AppendInteger(builder, static_cast<int64_t>(value.get<double>()));
      } else {
        ThrowMismatch(source, path, type, Describe(value));
      }
      if (!ok) ThrowOutOfRange(source, path, type, Describe(value));
      return;
    }
    case TypeId::kFloat16: case TypeId::kFloat32: case TypeId::kFloat64:
      AppendJsonFloating(builder, value, source, path);
      return;
    case TypeId::kUtf8: case TypeId::kLargeUtf8:
      if (value.is_string()) {
        As<BinaryBuilder>(builder).Append(value.get_ref<const std::string&>());
      } else {
        As<BinaryBuilder>(builder).Append(value.dump());  // other kinds keep their JSON text
      }
      return;
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kFixedSizeBinary:
      if (!value.is_string()) ThrowMismatch(source, path, type, Describe(value), " (base64)");
      AppendBase64(builder, value.get_ref<const std::string&>(), source, path, Describe(value));
      return;
    case TypeId::kDecimal128: case TypeId::kDecimal256:
      // A JSON number arrives as a double unless it is an integer; a string keeps every digit.
      if (!value.is_string() && !value.is_number()) ThrowMismatch(source, path, type, Describe(value));
      AppendDecimalText(builder, value.is_string() ? value.get_ref<const std::string&>() : value.dump(), source,
                        path, Describe(value));
      return;
    case TypeId::kDate32: case TypeId::kDate64: case TypeId::kTimestamp: case TypeId::kTime32:
    case TypeId::kTime64: case TypeId::kDuration: {
      bool ok = false;
      if (value.is_string() && type.id() == TypeId::kDuration) {
        auto v = ParseInt64(value.get_ref<const std::string&>());
        ok = v && AppendInteger(builder, *v);
      } else if (value.is_string()) {
        ok = AppendTemporalText(builder, value.get_ref<const std::string&>());
      } else if (value.is_number_unsigned()) {
        ok = AppendInteger(builder, value.get<uint64_t>());  // raw count in the type's unit
      } else if (value.is_number_integer()) {
        ok = AppendInteger(builder, value.get<int64_t>());
      }
      if (!ok) ThrowMismatch(source, path, type, Describe(value));
      return;
    }
    case TypeId::kFixedSizeList: case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap:
      AppendJsonList(builder, value, source, path);
      return;
    case TypeId::kStruct:
      AppendJsonStruct(builder, value, source, path);
      return;
    case TypeId::kNull:
      break;  // only JSON null, taken above
  }
  ThrowMismatch(source, path, type, Describe(value));
}

namespace {

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The cell as a JSON string literal, so that the message stays on one line.
std::string Quoted(std::string_view cell) {
  std::string out;
  AppendJsonString(out, cell);
  return out;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower;
  for (char c : text) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower == "true" || lower == "1") return true;
  if (lower == "false" || lower == "0") return false;
  return std::nullopt;
}

// The extent of the JSON number (RFC 8259) at text[i]: its end, or npos when there is
// none. `integral`: no fraction and no exponent.
size_t JsonNumberEnd(std::string_view text, size_t i, bool& integral) {
  auto digits = [&](size_t at) {
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return at;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::string_view::npos;
  size_t at = text[i] == '0' ? i + 1 : digits(i);
  integral = true;
  if (at < text.size() && text[at] == '.') {
    const size_t fraction = digits(at + 1);
    if (fraction == at + 1) return std::string_view::npos;
    at = fraction, integral = false;
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    size_t exponent = at + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    const size_t end = digits(exponent);
    if (end == exponent) return std::string_view::npos;
    at = end, integral = false;
  }
  return at;
}

// The value of `number`, a JSON number (JsonNumberEnd's extent, `integral` as it said),
// when std::from_chars reads it as the general path (ParseJsonText, AppendJson) would:
// not -0 (a float there), not an integer of 16 digits or more (exact only as int64 or
// uint64 there), not out of range. Integers of 15 digits or fewer are exact as doubles,
// fractions correctly rounded as by the general path's strtod.
std::optional<double> ExactJsonNumber(std::string_view number, bool integral) {
  const size_t digits = number.size() - (number.front() == '-');
  if (integral && (digits >= 16 || number == "-0")) return std::nullopt;
  double v = 0;
  if (std::from_chars(number.data(), number.data() + number.size(), v).ec != std::errc{}) return std::nullopt;
  return v;
}

}  // namespace

bool AppendJsonToken(ArrayBuilder& builder, std::string_view token) {
  if (token.empty()) return false;
  const TypeId id = builder.type()->id();
  if (token == "null") {
    builder.AppendNull();
    return true;
  }
  if (token.front() == '"') {
    if (id != TypeId::kUtf8 && id != TypeId::kLargeUtf8) return false;
    if (token.size() < 2 || token.back() != '"') return false;
    const std::string_view text = token.substr(1, token.size() - 2);
    for (const char c : text)
      if (c == '\\' || c == '"' || static_cast<unsigned char>(c) < 0x20) return false;
    if (!IsValidUtf8(text)) return false;
    As<BinaryBuilder>(builder).Append(text);
    return true;
  }
  if (token == "true" || token == "false") {
    if (id != TypeId::kBool) return false;
    As<BoolBuilder>(builder).Append(token == "true");
    return true;
  }
  bool integral = false;
  if (JsonNumberEnd(token, 0, integral) != token.size()) return false;
  const std::optional<double> v = ExactJsonNumber(token, integral);
  if (!v) return false;
  if (builder.type()->is_integer()) return integral && AppendInteger(builder, int64_t(*v));
  if (id != TypeId::kFloat32 && id != TypeId::kFloat64) return false;
  AppendFloating(builder, *v);
  return true;
}

bool AppendNumberList(ArrayBuilder& builder, std::string_view text) {
  const DataType& type = *builder.type();
  if (type.id() != TypeId::kFixedSizeList && type.id() != TypeId::kList && type.id() != TypeId::kLargeList)
    return false;
  const TypeId item = type.child(0)->type->id();
  const bool integers = item == TypeId::kInt32 || item == TypeId::kInt64;
  if (!integers && item != TypeId::kFloat32 && item != TypeId::kFloat64) return false;
  // Every value as a double: integers here have 15 digits or fewer, so they are exact.
  thread_local std::vector<double> values;
  values.clear();
  auto blank = [&](size_t at) {
    while (at < text.size() && IsJsonBlank(text[at])) ++at;
    return at;
  };
  size_t at = blank(0);
  if (at == text.size() || text[at] != '[') return false;
  at = blank(at + 1);
  if (at < text.size() && text[at] == ']') {
    at = blank(at + 1);
  } else {
    for (;;) {
      bool integral = false;
      const size_t end = JsonNumberEnd(text, at, integral);
      if (end == std::string_view::npos) return false;
      const std::optional<double> v = ExactJsonNumber(text.substr(at, end - at), integral);
      if (!v || (integers && !integral)) return false;
      if (item == TypeId::kInt32 && !std::in_range<int32_t>(int64_t(*v))) return false;
      values.push_back(*v);
      at = blank(end);
      if (at < text.size() && text[at] == ',') {
        at = blank(at + 1);
        continue;
      }
      if (at < text.size() && text[at] == ']') {
        at = blank(at + 1);
        break;
      }
      return false;
    }
  }
  if (at != text.size()) return false;
  if (type.id() == TypeId::kFixedSizeList && int64_t(values.size()) != type.fixed_size()) return false;
  auto& list = As<ListBuilder>(builder);
  ArrayBuilder& items = list.item_builder();
  auto append_all = [&]<typename T>(std::type_identity<T>) {
    auto& typed = As<FixedWidthBuilder<T>>(items);
    for (const double v : values) typed.Append(static_cast<T>(v));
  };
  switch (item) {
    case TypeId::kInt32: append_all(std::type_identity<int32_t>{}); break;
    case TypeId::kInt64: append_all(std::type_identity<int64_t>{}); break;
    case TypeId::kFloat32: append_all(std::type_identity<float>{}); break;
    default: append_all(std::type_identity<double>{}); break;
  }
  list.Append();
  return true;
}

void AppendCell(ArrayBuilder& builder, std::string_view cell, bool quoted,
                const ValueSource& source, const ValuePath& path) {
  const DataType& type = *builder.type();
  const bool keeps_empty = type.is_variable_binary() || type.id() == TypeId::kFixedSizeBinary;
  if (cell.empty() && (!quoted || !keeps_empty)) {
    builder.AppendNull();
    return;
  }
  if (type.is_string()) {
    if (!IsValidUtf8(cell)) ThrowMismatch(source, path, type, Quoted(cell), " (valid UTF-8)");
    As<BinaryBuilder>(builder).Append(cell);
    return;
  }
  const std::string_view text = TrimBlanks(cell);
  switch (type.id()) {
    case TypeId::kBool: {
      auto v = ParseBool(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      As<BoolBuilder>(builder).Append(*v);
      return;
    }
    case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64: {
      auto v = ParseInt64(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      if (!AppendInteger(builder, *v)) ThrowOutOfRange(source, path, type, text);
      return;
    }
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64: {
      auto v = ParseUInt64(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      if (!AppendInteger(builder, *v)) ThrowOutOfRange(source, path, type, text);
      return;
    }
    case TypeId::kFloat32: {
      auto v = ParseFloat32(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      As<FixedWidthBuilder<float>>(builder).Append(*v);
      return;
    }
    case TypeId::kFloat16: case TypeId::kFloat64: {
      auto v = ParseFloat64(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      AppendFloating(builder, *v);
      return;
    }
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kFixedSizeBinary:
      AppendBase64(builder, text, source, path, Quoted(cell));
      return;
    case TypeId::kDate32: case TypeId::kDate64: case TypeId::kTimestamp: case TypeId::kTime32:
    case TypeId::kTime64:
      if (!AppendTemporalText(builder, text)) ThrowMismatch(source, path, type, Quoted(cell));
      return;
    case TypeId::kDuration: {
      auto v = ParseInt64(text);
      if (!v) ThrowMismatch(source, path, type, Quoted(cell));
      AppendInteger(builder, *v);
      return;
    }
    case TypeId::kDecimal128: case TypeId::kDecimal256:
      AppendDecimalText(builder, text, source, path, Quoted(cell));
      return;
    case TypeId::kFixedSizeList: case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap:
    case TypeId::kStruct: {
      if (AppendNumberList(builder, text)) return;
      json value = ParseJsonText(text, /*throw_errors=*/false);
      if (value.is_discarded()) ThrowMismatch(source, path, type, Quoted(cell), " as JSON text");
      AppendJson(builder, value, source, path);
      return;
    }
    default:
      break;
  }
  ThrowNotSupported("cannot read CSV into type {}", type.ToString());
}

}  // namespace lancelet::text
