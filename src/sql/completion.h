// What the shell's tab key offers for the word under the cursor: dot commands at the
// start of a line, table names after FROM / JOIN / INTO / UPDATE / TABLE / DESCRIBE,
// `q.column` after a table name or alias and a dot, and otherwise the columns of the
// tables the statement names, the functions and the keywords.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lancelet::sql {

struct CompletionSource {
  std::vector<std::string> tables;
  // A table's column names (empty when it cannot be opened).
  std::function<std::vector<std::string>(const std::string& table)> columns;
};

// The candidates for the word at [word_start, cursor) of `text` (the statement typed so
// far, earlier lines included): those starting with the word, ASCII case ignored, sorted
// and without repeats. Keywords come in the case of the word (lower when it has a lower-
// case letter).
std::vector<std::string> CompleteWord(std::string_view text, size_t word_start, size_t cursor,
                                      const CompletionSource& source);

}  // namespace lancelet::sql
