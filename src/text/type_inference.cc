#include "text/type_inference.h"

#include <cmath>

#include "text/number_text.h"
#include "text/temporal_text.h"
#include "text/value_parse.h"

namespace lancelet::text {

// ordered_json keeps object keys in document order, which inference reports.
using json = nlohmann::ordered_json;

void JsonTypeGuess::Observe(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      return;
    case json::value_t::boolean:
      seen_bool_ = true;
      return;
    case json::value_t::number_integer:
      seen_integer_ = true;
      if (value.get<int64_t>() < 0) seen_negative_ = true;
      return;
    case json::value_t::number_unsigned:
      seen_integer_ = true;
      if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) seen_beyond_int64_ = true;
      return;
    case json::value_t::number_float:
      if (IsNegativeZero(value)) {
        seen_integer_ = true;  // the token -0 (see ParseJsonText)
      } else {
        seen_float_ = true;
      }
      return;
    case json::value_t::string: {
      // The JSON writer spells non-finite floats as these strings.
      const auto& text = value.get_ref<const std::string&>();
      if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
        seen_float_ = true;
        return;
      }
      seen_string_ = true;
      if (all_dates_) all_dates_ = LooksLikeDate(text);
      if (all_datetimes_) {
        auto parsed = text.size() > 10 ? ParseDateTime(text, TimeUnit::kMicro) : std::nullopt;
        all_datetimes_ = parsed.has_value();
        if (parsed && parsed->has_offset) any_offset_ = true;
      }
      return;
    }
    case json::value_t::binary:
      seen_string_ = true;
      all_dates_ = all_datetimes_ = false;
      return;
    case json::value_t::array: {
      seen_array_ = true;
      const int64_t length = static_cast<int64_t>(value.size());
      if (array_length_ == -1) {
        array_length_ = length;
      } else if (array_length_ != length) {
        array_length_ = -2;
      }
      if (!items_) items_ = std::make_unique<JsonTypeGuess>();
      for (const json& item : value) items_->Observe(item);
      return;
    }
    case json::value_t::object:
      seen_object_ = true;
      for (const auto& [key, item] : value.items()) {
        auto& guess = fields_[key];
        if (!guess) {
          guess = std::make_unique<JsonTypeGuess>();
          keys_.push_back(key);
        }
        guess->Observe(item);
      }
      return;
  }
}

std::vector<FieldPtr> JsonTypeGuess::ObjectFields() const {
  std::vector<FieldPtr> fields;
  for (const auto& key : keys_) fields.push_back(Field::Make(key, fields_.at(key)->ToType()));
  return fields;
}

TypePtr JsonTypeGuess::ToType() const {
  const bool seen_number = seen_integer_ || seen_float_;
  const int kinds = int(seen_bool_) + int(seen_number) + int(seen_string_) + int(seen_array_) +
                    int(seen_object_);
  if (kinds != 1) return DataType::Utf8();  // nothing but nulls, or conflicting kinds
  if (seen_bool_) return DataType::Bool();
  if (seen_string_) {
    if (all_dates_) return DataType::Date32();
    if (all_datetimes_) return DataType::Timestamp(TimeUnit::kMicro, any_offset_ ? "UTC" : "");
    return DataType::Utf8();
  }
  if (seen_object_) return DataType::Struct(ObjectFields());
  if (seen_number) {
    if (seen_float_) return DataType::Float64();
    if (seen_beyond_int64_) return seen_negative_ ? DataType::Float64() : DataType::UInt64();
    return DataType::Int64();
  }
  // Arrays. Equal-length arrays of numbers with a fraction somewhere are embeddings.
  const JsonTypeGuess* items = items_.get();
  const bool numeric_items = items && items->seen_float_ && !items->seen_bool_ &&
                             !items->seen_string_ && !items->seen_array_ && !items->seen_object_;
  if (numeric_items && array_length_ > 0) {
    return DataType::FixedSizeList(DataType::Float32(), static_cast<int32_t>(array_length_));
  }
  return DataType::List(items ? items->ToType() : DataType::Utf8());
}

void CsvColumnGuess::Observe(std::string_view cell) {
  while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
  while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) cell.remove_suffix(1);
  if (cell.empty()) return;  // NULL (a quoted "" is NULL too unless the column is utf8)
  std::string lower;
  for (char c : cell) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower == "true" || lower == "false") return guess_.Observe(json(lower == "true"));
  if (auto i = ParseInt64(cell)) return guess_.Observe(json(*i));
  if (auto u = ParseUInt64(cell)) return guess_.Observe(json(*u));
  if (auto d = ParseFloat64(cell)) return guess_.Observe(json(std::isfinite(*d) ? *d : 0.5));  // any float
  if (cell.front() == '[') {
    json value = ParseJsonText(cell, /*throw_errors=*/false);
    if (value.is_array()) return guess_.Observe(value);
  }
  guess_.Observe(json(std::string(cell)));
}

}  // namespace lancelet::text
