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

// Accumulates the kinds of JSON values seen at one position (a key, or list items).
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
  bool seen_array_ = false;
  bool seen_object_ = false;
  // Arrays: their items, and their common length (-1: none seen yet, -2: lengths differ).
  std::unique_ptr<JsonTypeGuess> items_;
  int64_t array_length_ = -1;
  // Objects.
  std::vector<std::string> keys_;
  std::map<std::string, std::unique_ptr<JsonTypeGuess>> fields_;
};

// Accumulates one CSV column's cells.
class CsvColumnGuess {
 public:
  void Observe(std::string_view cell, bool quoted);
  TypePtr ToType() const;

 private:
  int64_t values_ = 0;
  bool all_bool_ = true;
  bool all_int_ = true;
  bool all_number_ = true;
  bool all_date_ = true;
  bool all_datetime_ = true;
  bool any_offset_ = false;
  bool all_arrays_ = true;
  JsonTypeGuess arrays_;
};

}  // namespace lancelet::text
