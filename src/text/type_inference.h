// Schema inference from sample values (rules documented in lancelet/text.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lancelet/type.h"

namespace lancelet::text {

// Accumulates the kinds of JSON values seen at one position (a key, or list items). CSV
// cells are observed as the JSON values they spell (CsvColumnGuess), so both formats
// infer by the same rules.
class JsonTypeGuess {
 public:
  void Observe(const nlohmann::ordered_json& value);
  TypePtr ToType() const;
  // Keys of observed objects in first-seen order, with their guesses (for the top level).
  std::vector<FieldPtr> ObjectFields() const;

 private:
  bool seen_bool_ = false;
  bool seen_integer_ = false;
  bool seen_negative_ = false;
  bool seen_beyond_int64_ = false;
  bool seen_float_ = false;
  bool seen_string_ = false;
  // Strings: all dates (YYYY-MM-DD), all date-times (some with an offset).
  bool all_dates_ = true;
  bool all_datetimes_ = true;
  bool any_offset_ = false;
  bool seen_array_ = false;
  bool seen_object_ = false;
  // Arrays: their items, and their common length (-1: none seen yet, -2: lengths differ).
  std::unique_ptr<JsonTypeGuess> items_;
  int64_t array_length_ = -1;
  // Objects.
  std::vector<std::string> keys_;
  std::map<std::string, std::unique_ptr<JsonTypeGuess>> fields_;
};

// Accumulates one CSV column's cells: each non-empty cell as the JSON value it spells
// (true / false, an integer, a number, a JSON array) or else as a string. Empty cells are
// NULL and decide nothing.
class CsvColumnGuess {
 public:
  void Observe(std::string_view cell);
  TypePtr ToType() const { return guess_.ToType(); }

 private:
  JsonTypeGuess guess_;
};

}  // namespace lancelet::text
