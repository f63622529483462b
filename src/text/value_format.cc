#include "text/value_format.h"

#include <fmt/format.h>

#include "lancelet/error.h"
#include "text/base64.h"
#include "lancelet/decimal.h"
#include "text/number_text.h"
#include "text/temporal_text.h"
#include "text/utf8_text.h"

namespace lancelet::text {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

// Floats: shortest text at the column's width; non-finite values by name, quoted in JSON.
void AppendFloat(std::string& out, const ArrayData& array, int64_t row, ValueStyle style) {
  double value;
  switch (array.type->id()) {
    case TypeId::kFloat16: value = HalfToDouble(array.values<uint16_t>()[row]); break;
    case TypeId::kFloat32: value = array.values<float>()[row]; break;
    default: value = array.values<double>()[row]; break;
  }
  if (auto name = NonFiniteName(value)) {
    if (style == ValueStyle::kJson) {
      out += '"';
      out += *name;
      out += '"';
    } else {
      out += *name;
    }
    return;
  }
  switch (array.type->id()) {
    case TypeId::kFloat16: out += FormatFloat16(array.values<uint16_t>()[row]); break;
    case TypeId::kFloat32: out += FormatFloat32(array.values<float>()[row]); break;
    default: out += FormatFloat64(value); break;
  }
}

// At most kTableStringChars code points of valid UTF-8, the last one "…" when cut.
std::string ShortenText(std::string_view bytes) {
  std::string clean = SanitizeUtf8(bytes);
  if (CountCodePoints(clean) <= kTableStringChars) return clean;
  std::string cut(PrefixCodePoints(clean, kTableStringChars - 1));
  cut += kEllipsis;
  return cut;
}

// Table cells stay on one line: control characters are shown as JSON escapes.
std::string TableText(std::string_view bytes) {
  std::string shortened = ShortenText(bytes);
  std::string out;
  for (char c : shortened) {
    if (static_cast<uint8_t>(c) < 0x20) {
      std::string escaped;
      AppendJsonString(escaped, std::string_view(&c, 1));
      out.append(escaped, 1, escaped.size() - 2);
    } else {
      out += c;
    }
  }
  return out;
}

// Text of a leaf (non-nested) value; strings and binary are returned unquoted.
// Returns false for types that need quoting in JSON (strings, binary, temporal).
bool AppendScalarText(std::string& out, const ArrayData& array, int64_t row, ValueStyle style,
                      std::string& text_value) {
  const DataType& type = *array.type;
  switch (type.id()) {
    case TypeId::kBool:
      out += GetBit(array.buffers[1]->data(), row) ? "true" : "false";
      return true;
    case TypeId::kInt8: out += fmt::format("{}", array.values<int8_t>()[row]); return true;
    case TypeId::kInt16: out += fmt::format("{}", array.values<int16_t>()[row]); return true;
    case TypeId::kInt32: out += fmt::format("{}", array.values<int32_t>()[row]); return true;
    case TypeId::kInt64: out += fmt::format("{}", array.values<int64_t>()[row]); return true;
    case TypeId::kUInt8: out += fmt::format("{}", array.values<uint8_t>()[row]); return true;
    case TypeId::kUInt16: out += fmt::format("{}", array.values<uint16_t>()[row]); return true;
    case TypeId::kUInt32: out += fmt::format("{}", array.values<uint32_t>()[row]); return true;
    case TypeId::kUInt64: out += fmt::format("{}", array.values<uint64_t>()[row]); return true;
    case TypeId::kFloat16:
    case TypeId::kFloat32:
    case TypeId::kFloat64:
      AppendFloat(out, array, row, style);
      return true;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      text_value = std::string(array.GetView(row));
      return false;
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary:
      text_value = Base64Encode(array.GetView(row));
      return false;
    case TypeId::kDate32:
      text_value = FormatDate(array.values<int32_t>()[row]);
      return false;
    case TypeId::kDate64:
      text_value = FormatDate64(array.values<int64_t>()[row]);
      return false;
    case TypeId::kTimestamp:
      text_value = FormatTimestamp(array.values<int64_t>()[row], type.unit(), !type.timezone().empty());
      return false;
    case TypeId::kTime32:
      text_value = FormatTimeOfDay(array.values<int32_t>()[row], type.unit());
      return false;
    case TypeId::kTime64:
      text_value = FormatTimeOfDay(array.values<int64_t>()[row], type.unit());
      return false;
    case TypeId::kDuration: out += fmt::format("{}", array.values<int64_t>()[row]); return true;
    // A decimal is a JSON number written with all its digits.
    case TypeId::kDecimal128:
    case TypeId::kDecimal256: out += FormatDecimal(array.GetView(row), type); return true;
    default:
      ThrowNotSupported("cannot format a value of type {} as text", type.ToString());
  }
}

// List bounds of element `row` as [begin, end) item indices.
std::pair<int64_t, int64_t> ListRange(const ArrayData& array, int64_t row) {
  if (array.type->id() == TypeId::kFixedSizeList) {
    const int64_t size = array.type->fixed_size();
    return {row * size, (row + 1) * size};
  }
  return {array.offset(row), array.offset(row + 1)};
}

void AppendTableValue(std::string& out, const ArrayData& array, int64_t row, bool nested) {
  if (array.IsNull(row)) {
    out += "NULL";
    return;
  }
  const DataType& type = *array.type;
  if (type.id() == TypeId::kStruct) {
    out += '{';
    for (size_t i = 0; i < array.children.size(); ++i) {
      if (i > 0) out += ", ";
      out += TableText(type.child(i)->name);
      out += ": ";
      AppendTableValue(out, *array.children[i], row, true);
    }
    out += '}';
    return;
  }
  if (type.id() == TypeId::kFixedSizeList || type.is_list()) {
    auto [begin, end] = ListRange(array, row);
    const int64_t count = end - begin;
    const int64_t shown = count > kTableListItems ? kTableListItems : count;
    out += '[';
    for (int64_t i = 0; i < shown; ++i) {
      if (i > 0) out += ", ";
      AppendTableValue(out, *array.children[0], begin + i, true);
    }
    if (shown < count) {
      out += fmt::format(", {} {} values", kEllipsis, count);
    }
    out += ']';
    return;
  }
  std::string text;
  if (AppendScalarText(out, array, row, ValueStyle::kTable, text)) return;
  if (nested && type.is_string()) {
    // Inside a list or struct strings are quoted so that commas stay readable.
    AppendJsonString(out, ShortenText(text));
  } else if (type.is_string() && text == "NULL") {
    out += "'NULL'";  // the string, told apart from a NULL
  } else {
    out += TableText(text);
  }
}

}  // namespace

void AppendJsonValue(std::string& out, const ArrayData& array, int64_t row) {
  if (array.IsNull(row)) {
    out += "null";
    return;
  }
  const DataType& type = *array.type;
  if (type.id() == TypeId::kStruct) {
    out += '{';
    for (size_t i = 0; i < array.children.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(out, type.child(i)->name);
      out += ':';
      AppendJsonValue(out, *array.children[i], row);
    }
    out += '}';
    return;
  }
  if (type.id() == TypeId::kFixedSizeList || type.is_list()) {
    auto [begin, end] = ListRange(array, row);
    out += '[';
    for (int64_t i = begin; i < end; ++i) {
      if (i > begin) out += ',';
      AppendJsonValue(out, *array.children[0], i);
    }
    out += ']';
    return;
  }
  std::string text;
  if (!AppendScalarText(out, array, row, ValueStyle::kJson, text)) AppendJsonString(out, text);
}

void AppendValue(std::string& out, const ArrayData& array, int64_t row, ValueStyle style) {
  switch (style) {
    case ValueStyle::kJson:
      AppendJsonValue(out, array, row);
      return;
    case ValueStyle::kTable:
      AppendTableValue(out, array, row, false);
      return;
    case ValueStyle::kCsv:
      break;
  }
  if (array.IsNull(row)) return;
  if (array.type->is_nested()) {
    AppendJsonValue(out, array, row);
    return;
  }
  std::string text;
  if (!AppendScalarText(out, array, row, ValueStyle::kCsv, text)) {
    out += array.type->is_string() ? SanitizeUtf8(text) : text;
  }
}

}  // namespace lancelet::text

namespace lancelet {

std::string FormatValue(const ArrayData& array, int64_t row, ValueStyle style) {
  std::string out;
  text::AppendValue(out, array, row, style);
  return out;
}

}  // namespace lancelet
