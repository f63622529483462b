#include "sql/completion.h"

#include <algorithm>
#include <map>
#include <set>

#include "array/ascii_case.h"
#include "expr/function_catalog.h"

namespace lancelet::sql {

namespace {

constexpr std::string_view kKeywords[] = {
    "ADD",      "ALL",       "ALTER",    "AND",       "AS",        "ASC",      "BETWEEN",  "BY",
    "CASE",     "CAST",      "COLUMN",   "COPY",      "CREATE",    "CROSS",    "DELETE",   "DESC",
    "DESCRIBE", "DISTINCT",  "DROP",     "ELSE",      "END",       "EXCLUDE",  "EXISTS",   "EXPLAIN",
    "FALSE",    "FILTER",    "FIRST",    "FROM",      "FULL",      "GROUP",    "HAVING",   "ILIKE",
    "IN",       "INDEX",     "INNER",    "INSERT",    "INTO",      "IS",       "JOIN",     "LAST",
    "LEFT",     "LIKE",      "LIMIT",    "MATCHED",   "MERGE",     "NOT",      "NULL",     "NULLS",
    "OF",       "OFFSET",    "ON",       "OPTIMIZE",  "OR",        "ORDER",    "OUTER",    "OVER",
    "PARTITION", "QUALIFY",  "RENAME",   "REPLACE",   "RIGHT",     "ROWS",     "SELECT",   "SET",
    "SHOW",     "SUMMARIZE", "TABLE",    "TABLES",    "THEN",      "TIMESTAMP", "TO",      "TRUE",
    "UNION",    "UPDATE",    "USING",    "VALUES",    "VERSION",   "WHEN",     "WHERE",    "WITH",
};

constexpr std::string_view kDotCommands[] = {".bail", ".exit",   ".help", ".import", ".maxrows", ".mode",
                                             ".once", ".output", ".quit", ".read",   ".schema",  ".tables",
                                             ".timer"};

bool IsWordByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '"' || static_cast<unsigned char>(c) >= 0x80;
}

// The words of `text` (names, keywords, q.c), quotes around names dropped.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (IsWordByte(c)) {
      if (c != '"') word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoringAsciiCase(s.substr(0, prefix.size()), prefix);
}

}  // namespace

std::vector<std::string> CompleteWord(std::string_view text, size_t word_start, size_t cursor,
                                      const CompletionSource& source) {
  const std::string_view word = text.substr(word_start, cursor - word_start);
  const std::vector<std::string> before = Words(text.substr(0, word_start));
  std::set<std::string> out;
  auto offer = [&](std::string_view candidate) {
    if (StartsWithIgnoringCase(candidate, word)) out.insert(std::string(candidate));
  };
  auto offer_tables = [&] {
    for (const auto& t : source.tables) offer(t);
  };

  // Dot commands: the first word of a line that starts with '.'; a table as .schema's
  // argument or .import's second.
  const size_t first = text.find_first_not_of(" \t\n");
  if (first != std::string_view::npos && text[first] == '.') {
    if (before.empty()) {
      for (auto c : kDotCommands) offer(c);
    } else if ((before[0] == ".schema" && before.size() == 1) || (before[0] == ".import" && before.size() == 2)) {
      offer_tables();
    }
    return {out.begin(), out.end()};
  }

  // The tables the statement names, and the aliases it gives them (t AS a, t a).
  std::map<std::string, std::string> table_of;  // name or alias -> table
  const std::vector<std::string> all = Words(text);
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::find(source.tables.begin(), source.tables.end(), all[i]) == source.tables.end()) continue;
    table_of[all[i]] = all[i];
    size_t next = i + 1;
    if (next < all.size() && AsciiLower(all[next]) == "as") ++next;
    if (next < all.size()) {
      const std::string upper = AsciiUpper(all[next]);
      const bool keyword = std::find(std::begin(kKeywords), std::end(kKeywords), upper) != std::end(kKeywords);
      if (!keyword) table_of.emplace(all[next], all[i]);
    }
  }

  // q.col: the columns of the table q names.
  if (const size_t dot = word.rfind('.'); dot != std::string_view::npos) {
    const std::string qualifier(word.substr(0, dot));
    if (auto it = table_of.find(qualifier); it != table_of.end() && source.columns)
      for (const auto& c : source.columns(it->second)) offer(qualifier + "." + c);
    return {out.begin(), out.end()};
  }

  const std::string previous = before.empty() ? "" : AsciiUpper(before.back());
  if (previous == "FROM" || previous == "JOIN" || previous == "INTO" || previous == "UPDATE" ||
      previous == "TABLE" || previous == "DESCRIBE" || previous == "SUMMARIZE") {
    offer_tables();
    if (previous == "FROM" || previous == "JOIN")
      for (const FunctionDoc& f : FunctionCatalog())
        if (f.kind == "table") offer(f.name);
    return {out.begin(), out.end()};
  }

  // Columns of the tables named (of every table while none is, if there are few).
  std::set<std::string> tables;
  for (const auto& [name, table] : table_of) tables.insert(table);
  if (tables.empty() && source.tables.size() <= 16) tables.insert(source.tables.begin(), source.tables.end());
  if (source.columns)
    for (const auto& t : tables)
      for (const auto& c : source.columns(t)) offer(c);
  for (const FunctionDoc& f : FunctionCatalog())
    if (f.kind != "table") offer(f.name);
  const bool lower = std::any_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  for (auto k : kKeywords) offer(lower ? AsciiLower(std::string(k)) : std::string(k));
  return {out.begin(), out.end()};
}

}  // namespace lancelet::sql
