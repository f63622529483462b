#include "text/type_inference.h"

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
    case json::value_t::string:
    case json::value_t::binary:
      seen_string_ = true;
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
  if (seen_string_) return DataType::Utf8();
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

void CsvColumnGuess::Observe(std::string_view cell, bool quoted) {
  if (cell.empty() && !quoted) return;  // NULL
  ++values_;
  while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
  while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) cell.remove_suffix(1);
  if (all_bool_) {
    std::string lower;
    for (char c : cell) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    all_bool_ = lower == "true" || lower == "false";
  }
  if (all_int_) all_int_ = ParseInt64(cell).has_value();
  if (all_number_) all_number_ = all_int_ || ParseFloat64(cell).has_value();
  if (all_date_) all_date_ = LooksLikeDate(cell);
  if (all_datetime_) {
    auto parsed = cell.size() > 10 ? ParseDateTime(cell, TimeUnit::kMicro) : std::nullopt;
    all_datetime_ = parsed.has_value();
    if (parsed && parsed->has_offset) any_offset_ = true;
  }
  if (all_arrays_) {
    json value = (!cell.empty() && cell.front() == '[')
                     ? ParseJsonText(cell, /*throw_errors=*/false)
                     : json(json::value_t::discarded);
    all_arrays_ = value.is_array();
    if (all_arrays_) arrays_.Observe(value);
  }
}

TypePtr CsvColumnGuess::ToType() const {
  if (values_ == 0) return DataType::Utf8();
  if (all_bool_) return DataType::Bool();
  if (all_int_) return DataType::Int64();
  if (all_number_) return DataType::Float64();
  if (all_date_) return DataType::Date32();
  if (all_datetime_) return DataType::Timestamp(TimeUnit::kMicro, any_offset_ ? "UTC" : "");
  if (all_arrays_) return arrays_.ToType();
  return DataType::Utf8();
}

}  // namespace lancelet::text
