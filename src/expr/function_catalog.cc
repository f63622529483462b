#include "expr/function_catalog.h"

#include <algorithm>
#include <vector>

namespace lancelet {

namespace {

// Kept sorted by kind (in the order below), then by name: a test checks it, and that
// every scalar entry is one the evaluator resolves.
constexpr FunctionDoc kCatalog[] = {
    // scalar
    {"abs", "scalar", "(x)", "absolute value"},
    {"array_cat", "scalar", "(a, b)", "alias of list_concat"},
    {"array_concat", "scalar", "(a, b)", "alias of list_concat"},
    {"array_contains", "scalar", "(list, x)", "alias of list_contains"},
    {"array_cosine_distance", "scalar", "(a, b)", "1 - cosine similarity of two number lists"},
    {"array_cosine_similarity", "scalar", "(a, b)", "cosine similarity of two number lists"},
    {"array_distance", "scalar", "(a, b)", "Euclidean distance of two number lists"},
    {"array_distinct", "scalar", "(list)", "alias of list_distinct"},
    {"array_extract", "scalar", "(list, i)", "alias of list_element"},
    {"array_has", "scalar", "(list, x)", "alias of list_contains"},
    {"array_indexof", "scalar", "(list, x)", "alias of list_position"},
    {"array_inner_product", "scalar", "(a, b)", "inner (dot) product of two number lists"},
    {"array_length", "scalar", "(list)", "alias of len"},
    {"array_negative_inner_product", "scalar", "(a, b)", "negated inner product of two number lists"},
    {"array_position", "scalar", "(list, x)", "alias of list_position"},
    {"array_reverse", "scalar", "(list)", "alias of list_reverse"},
    {"array_reverse_sort", "scalar", "(list)", "alias of list_reverse_sort"},
    {"array_slice", "scalar", "(list, begin, end)", "alias of list_slice"},
    {"array_sort", "scalar", "(list)", "alias of list_sort"},
    {"array_to_string", "scalar", "(list, sep)", "the items as text joined by sep"},
    {"array_unique", "scalar", "(list)", "alias of list_unique"},
    {"ceil", "scalar", "(x)", "smallest integer value not below x"},
    {"ceiling", "scalar", "(x)", "alias of ceil"},
    {"char_length", "scalar", "(s)", "alias of length"},
    {"character_length", "scalar", "(s)", "alias of length"},
    {"coalesce", "scalar", "(x, ...)", "the first argument that is not NULL"},
    {"concat", "scalar", "(x, ...)", "the arguments as text, NULLs skipped"},
    {"concat_ws", "scalar", "(sep, x, ...)", "the arguments that are not NULL as text, joined by sep"},
    {"contains", "scalar", "(s, part)", "true when part occurs in s"},
    {"cosine_distance", "scalar", "(a, b)", "alias of array_cosine_distance"},
    {"current_date", "scalar", "", "the statement's date (UTC); also today()"},
    {"date_part", "scalar", "(part, t)", "a field of a date or timestamp as a number; also EXTRACT(part FROM t)"},
    {"date_trunc", "scalar", "(part, t)", "t cut down to the start of its year, month, day, hour, ..."},
    {"epoch", "scalar", "(t)", "seconds since 1970-01-01 UTC, with the fraction"},
    {"exp", "scalar", "(x)", "e to the power x"},
    {"floor", "scalar", "(x)", "largest integer value not above x"},
    {"greatest", "scalar", "(x, ...)", "the largest argument, NULLs skipped"},
    {"hash", "scalar", "(x, ...)", "a UBIGINT hash of the values (XXH3; not DuckDB's values)"},
    {"inner_product", "scalar", "(a, b)", "alias of array_inner_product"},
    {"l2_distance", "scalar", "(a, b)", "squared Euclidean distance (Lance's l2 metric)"},
    {"least", "scalar", "(x, ...)", "the smallest argument, NULLs skipped"},
    {"left", "scalar", "(s, n)", "the first n characters of s"},
    {"len", "scalar", "(list)", "the number of items of a list"},
    {"length", "scalar", "(s)", "the number of characters of s"},
    {"list_avg", "scalar", "(list)", "the mean of the items"},
    {"list_cat", "scalar", "(a, b)", "alias of list_concat"},
    {"list_concat", "scalar", "(a, b)", "the items of a, then those of b"},
    {"list_contains", "scalar", "(list, x)", "true when x is an item of list"},
    {"list_cosine_distance", "scalar", "(a, b)", "alias of array_cosine_distance"},
    {"list_cosine_similarity", "scalar", "(a, b)", "alias of array_cosine_similarity"},
    {"list_distance", "scalar", "(a, b)", "alias of array_distance"},
    {"list_distinct", "scalar", "(list)", "the items without repeats and NULLs"},
    {"list_dot_product", "scalar", "(a, b)", "alias of array_inner_product"},
    {"list_element", "scalar", "(list, i)", "the item at 1-based i (negative: from the end); also list[i]"},
    {"list_extract", "scalar", "(list, i)", "alias of list_element"},
    {"list_has", "scalar", "(list, x)", "alias of list_contains"},
    {"list_indexof", "scalar", "(list, x)", "alias of list_position"},
    {"list_inner_product", "scalar", "(a, b)", "alias of array_inner_product"},
    {"list_length", "scalar", "(list)", "alias of len"},
    {"list_max", "scalar", "(list)", "the largest item"},
    {"list_min", "scalar", "(list)", "the smallest item"},
    {"list_negative_inner_product", "scalar", "(a, b)", "alias of array_negative_inner_product"},
    {"list_pack", "scalar", "(x, ...)", "alias of list_value"},
    {"list_position", "scalar", "(list, x)", "the 1-based position of x in list, or NULL"},
    {"list_product", "scalar", "(list)", "the product of the items"},
    {"list_reverse", "scalar", "(list)", "the items in reverse order"},
    {"list_reverse_sort", "scalar", "(list)", "the items sorted in descending order"},
    {"list_slice", "scalar", "(list, begin, end)", "the items from begin to end, 1-based and inclusive"},
    {"list_sort", "scalar", "(list)", "the items sorted in ascending order"},
    {"list_sum", "scalar", "(list)", "the sum of the items"},
    {"list_to_string", "scalar", "(list, sep)", "alias of array_to_string"},
    {"list_unique", "scalar", "(list)", "the number of distinct items that are not NULL"},
    {"list_value", "scalar", "(x, ...)", "a list of the arguments; also [x, ...]"},
    {"ln", "scalar", "(x)", "natural logarithm"},
    {"lower", "scalar", "(s)", "s in lower case (every code point)"},
    {"ltrim", "scalar", "(s [, chars])", "s without leading spaces (or chars)"},
    {"now", "scalar", "()", "the statement's time, UTC; also current_timestamp"},
    {"nullif", "scalar", "(a, b)", "NULL when a = b, else a"},
    {"octet_length", "scalar", "(s)", "the number of bytes of s"},
    {"pow", "scalar", "(x, y)", "alias of power"},
    {"power", "scalar", "(x, y)", "x to the power y"},
    {"random", "scalar", "()", "a uniform DOUBLE in [0, 1), new for every row"},
    {"regexp_extract", "scalar", "(s, pattern [, group])", "the first match of pattern in s (or its group)"},
    {"regexp_matches", "scalar", "(s, pattern)", "true when pattern matches somewhere in s"},
    {"regexp_replace", "scalar", "(s, pattern, replacement [, 'g'])", "s with the first (or every) match replaced"},
    {"replace", "scalar", "(s, from, to)", "s with every occurrence of from replaced by to"},
    {"right", "scalar", "(s, n)", "the last n characters of s"},
    {"round", "scalar", "(x [, digits])", "x rounded to digits places (0 by default)"},
    {"rtrim", "scalar", "(s [, chars])", "s without trailing spaces (or chars)"},
    {"split", "scalar", "(s, sep)", "alias of string_split"},
    {"sqrt", "scalar", "(x)", "square root"},
    {"starts_with", "scalar", "(s, prefix)", "true when s begins with prefix"},
    {"strftime", "scalar", "(t, format)", "a date or timestamp as text by a strftime format"},
    {"string_split", "scalar", "(s, sep)", "the parts of s between the separators, as a list"},
    {"strptime", "scalar", "(s, format)", "text read back to a TIMESTAMP by a strftime format; an error if it does not match"},
    {"substr", "scalar", "(s, start [, n])", "n characters of s from 1-based start"},
    {"substring", "scalar", "(s, start [, n])", "alias of substr"},
    {"trim", "scalar", "(s [, chars])", "s without leading and trailing spaces (or chars)"},
    {"try_strptime", "scalar", "(s, format)", "as strptime, NULL where it does not match"},
    {"typeof", "scalar", "(x)", "the name of x's type, as DuckDB spells it"},
    {"unnest", "scalar", "(list)", "a row for each item of the list (a whole select item only)"},
    {"upper", "scalar", "(s)", "s in upper case (every code point)"},
    // aggregate
    {"approx_count_distinct", "aggregate", "(x)", "the number of distinct values (exact here)"},
    {"arg_max", "aggregate", "(arg, val)", "arg at the row of the largest val"},
    {"arg_min", "aggregate", "(arg, val)", "arg at the row of the smallest val"},
    {"array_agg", "aggregate", "(x [ORDER BY ...])", "alias of list"},
    {"avg", "aggregate", "(x)", "the mean"},
    {"bool_and", "aggregate", "(b)", "true when every value is true"},
    {"bool_or", "aggregate", "(b)", "true when any value is true"},
    {"count", "aggregate", "(x) or (*)", "the number of values that are not NULL (of rows, for *)"},
    {"list", "aggregate", "(x [ORDER BY ...])", "the values as a list (in the ORDER BY's order, if given)"},
    {"max", "aggregate", "(x)", "the largest value"},
    {"median", "aggregate", "(x)", "the middle value (the mean of the two middle ones)"},
    {"min", "aggregate", "(x)", "the smallest value"},
    {"quantile_cont", "aggregate", "(x, q)", "the q quantile, interpolated"},
    {"quantile_disc", "aggregate", "(x, q)", "the q quantile, a value of x"},
    {"stddev", "aggregate", "(x)", "alias of stddev_samp"},
    {"stddev_pop", "aggregate", "(x)", "the population standard deviation"},
    {"stddev_samp", "aggregate", "(x)", "the sample standard deviation"},
    {"string_agg", "aggregate", "(s [, sep] [ORDER BY ...])", "the values joined by sep (',' by default; in the ORDER BY's order, if given)"},
    {"sum", "aggregate", "(x)", "the sum"},
    {"var_pop", "aggregate", "(x)", "the population variance"},
    {"var_samp", "aggregate", "(x)", "the sample variance"},
    {"variance", "aggregate", "(x)", "alias of var_samp"},
    // window (and every aggregate, with OVER)
    {"cume_dist", "window", "()", "the fraction of the partition's rows up to this row's peers"},
    {"dense_rank", "window", "()", "the rank without gaps"},
    {"first_value", "window", "(x)", "x at the frame's first row"},
    {"lag", "window", "(x [, offset [, default]])", "x offset rows before"},
    {"last_value", "window", "(x)", "x at the frame's last row"},
    {"lead", "window", "(x [, offset [, default]])", "x offset rows after"},
    {"nth_value", "window", "(x, n)", "x at the frame's nth row"},
    {"ntile", "window", "(n)", "the bucket 1..n of the row"},
    {"percent_rank", "window", "()", "(rank - 1) / (rows - 1)"},
    {"rank", "window", "()", "the rank with gaps"},
    {"row_number", "window", "()", "the row's 1-based number in its partition"},
    // table
    {"duckdb_functions", "table", "()", "alias of lancelet_functions"},
    {"generate_series", "table", "([start,] stop [, step])", "the integers from start to stop, stop included"},
    {"lancelet_functions", "table", "()", "this list: name, kind, arguments, description"},
    {"range", "table", "([start,] stop [, step])", "the integers from start up to stop, stop left out"},
    {"read_csv", "table", "('path' [, delim=, header=, columns=])", "a CSV file's rows"},
    {"read_csv_auto", "table", "('path' [, ...])", "alias of read_csv"},
    {"read_json", "table", "('path' [, columns=])", "a JSON-lines file's rows"},
    {"read_json_auto", "table", "('path' [, ...])", "alias of read_json"},
    {"table_changes", "table", "('table', from [, to])", "the rows inserted, updated and deleted after version from"},
    {"vector_search", "table", "('table', 'column', vector, k [, nprobes [, refine]])", "the k rows nearest vector, with _distance"},
};

}  // namespace

std::span<const FunctionDoc> FunctionCatalog() { return kCatalog; }

std::string FunctionNames(std::string_view kind) {
  std::string out;
  for (const FunctionDoc& f : kCatalog) {
    if (f.kind != kind) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

namespace {

// Levenshtein distance, in bytes.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string UnknownFunctionMessage(std::string_view name) {
  std::vector<std::pair<size_t, std::string_view>> near;
  for (const FunctionDoc& f : kCatalog)
    if (const size_t d = EditDistance(name, f.name); d <= 2) near.push_back({d, f.name});
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "unknown function '" + std::string(name) + "'";
  for (size_t i = 0; i < near.size() && i < 3; ++i) out += (i ? ", " : "; did you mean ") + std::string(near[i].second);
  if (!near.empty()) out += "?";
  return out + " (SELECT * FROM lancelet_functions() lists every function)";
}

}  // namespace lancelet
