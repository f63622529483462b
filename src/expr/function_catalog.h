// The functions SQL and filter expressions can call, with a line on each: the one list
// behind the unknown-function message, the shell's tab completion, the table function
// lancelet_functions() (duckdb_functions()) and the function reference in docs/sql.md,
// which a test regenerates from it.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace lancelet {

struct FunctionDoc {
  std::string_view name;
  std::string_view kind;       // "scalar", "aggregate", "window" or "table"
  std::string_view arguments;  // e.g. "(s, start [, n])"
  std::string_view description;
};

// Every function, sorted by kind (scalar, aggregate, window, table), then name.
std::span<const FunctionDoc> FunctionCatalog();

// "a, b, c": the names of one kind, sorted.
std::string FunctionNames(std::string_view kind);

// The one line for a call of a function the catalog lacks: the names within two edits of
// it (of any kind), and where the whole list is.
std::string UnknownFunctionMessage(std::string_view name);

}  // namespace lancelet
