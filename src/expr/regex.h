// POSIX extended regular expressions for the SQL functions that take a pattern
// (regexp_matches, regexp_replace, regexp_extract), compiled once while a column repeats
// the same pattern.
#pragma once

#include <regex.h>

#include <string>
#include <vector>

#include "lancelet/expr.h"

namespace lancelet {

class Regex {
 public:
  // The compiled `pattern` (the one this thread compiled last when it is the same), for
  // `function`: an invalid pattern is an error naming both. `options` are DuckDB's
  // letters: 'i' ignores case, 'c' respects it, 'g' (global) is the caller's.
  static const Regex& Of(const std::string& pattern, const std::string& options, const char* function,
                         const Expr* origin);
  Regex(const std::string& pattern, int flags, const char* function, const Expr* origin);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Whether `text` holds a match anywhere.
  bool Search(const std::string& text) const;
  // The first match in text[from..) as [begin, end) offsets into `text`, the whole match
  // first and then each group (-1 for a group that took no part); false when none.
  // `from` > 0 does not make text[from] the start of a line for ^.
  bool Find(const std::string& text, size_t from, std::vector<regoff_t>& spans) const;
  size_t groups() const { return compiled_.re_nsub; }

 private:
  std::string pattern_;
  int flags_;
  regex_t compiled_;
};

}  // namespace lancelet
