// Appending text values (JSON values, CSV cells) to builders of a known type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lancelet/builder.h"

namespace lancelet::text {

// Where a value came from, for error messages. Paths are chains of nodes so that nothing
// is built unless an error is reported: "meta.tags[2]".
struct ValuePath {
  const ValuePath* parent = nullptr;
  std::string_view key;  // a column / key name, or empty for a list item
  int64_t index = 0;     // list item index when key is empty
  std::string ToString() const;
};

struct ValueSource {
  std::string_view file;
  int64_t line = 0;  // 1-based line of the record (the row in messages)
};

// Throws InvalidArgument "<file>: row <line>, column '<path>': expected <type>, found <found>".
[[noreturn]] void ThrowMismatch(const ValueSource& source, const ValuePath& path,
                                const DataType& type, std::string_view found,
                                std::string_view detail = {});
// Throws InvalidArgument "<file>: row <line>, column '<path>': <found> does not fit <type>".
[[noreturn]] void ThrowOutOfRange(const ValueSource& source, const ValuePath& path,
                                  const DataType& type, std::string_view found);

// Parses JSON text. nlohmann reads the token -0 as the integer 0, dropping the sign a float
// column needs, so such tokens are read as -0.0 (integer columns and inference take -0.0
// as the integer 0). Returns a discarded value when the text is not JSON (or holds a number
// past double's range), unless `throw_errors`.
nlohmann::ordered_json ParseJsonText(std::string_view text, bool throw_errors);
// True for the -0.0 that ParseJsonText produces for "-0".
bool IsNegativeZero(const nlohmann::ordered_json& value);

// Appends a JSON value (null -> NULL). See lancelet/text.h for the accepted spellings.
void AppendJson(ArrayBuilder& builder, const nlohmann::ordered_json& value, const ValueSource& source,
                const ValuePath& path);

// A JSON array of numbers (a CSV cell, a JSON lines member) for a list of float32,
// float64, int32 or int64 (an embedding, most often), appended without building a JSON
// document: the general path (ParseJsonText, AppendJson) spent two thirds of a 128-d
// embedding column's ingest there. False, with nothing appended, for any other text or
// item type, and for whatever the general path treats specially or reports: nulls, -0 (a
// float there), integers of 16 digits or more (exact only as int64 or uint64 there),
// values out of range, a fixed-size list of the wrong length. The values are the general
// path's: integers exact, fractions correctly rounded to double (as its strtod) and then
// to float32.
bool AppendNumberList(ArrayBuilder& builder, std::string_view text);

// JSON's whitespace: space, tab, line feed, carriage return.
inline bool IsJsonBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A JSON scalar token (a JSON lines member's value) appended as AppendJson would append
// its parsed value, without parsing a document: null, a string without escapes or control
// characters for a UTF-8 column, true / false for a bool column, a number for an integer
// (integral, 15 digits or fewer) or float32 / float64 column. False, with nothing appended,
// for anything else, and for whatever the general path treats specially or reports
// (invalid UTF-8, -0, a value out of range): the caller parses the token then.
bool AppendJsonToken(ArrayBuilder& builder, std::string_view token);

// Appends a CSV cell: empty and unquoted -> NULL; quoted and empty -> "" for string and
// binary kinds, NULL otherwise. Blanks around non-string values are ignored.
void AppendCell(ArrayBuilder& builder, std::string_view cell, bool quoted,
                const ValueSource& source, const ValuePath& path);

}  // namespace lancelet::text
