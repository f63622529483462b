// SQL LIKE patterns: % matches any run of characters, _ exactly one character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "expr/datum.h"
#include "lancelet/expr.h"

namespace lancelet {

class LikePattern {
 public:
  // `escape` == '\0' means no escape character. `utf8`: _ matches one UTF-8 code point
  // (else one byte). `case_insensitive` folds letters: every letter of UTF-8 text, as
  // lower() maps it, ASCII letters of binary values. Throws InvalidArgument when
  // the pattern ends with the escape character.
  LikePattern(std::string_view pattern, char escape, bool case_insensitive, bool utf8);
  bool Matches(std::string_view text) const;

 private:
  enum class Kind : uint8_t { kByte, kOne, kAny };
  struct Element {
    Kind kind;
    char byte;
  };
  size_t CharLength(std::string_view text, size_t i) const;

  std::vector<Element> elements_;
  bool case_insensitive_;
  bool utf8_;
};

// Row-wise LIKE; NULL text or pattern gives NULL.
ArrayPtr Like(const Datum& text, const Datum& pattern, int64_t length, char escape, bool case_insensitive,
              bool negated, const Expr* origin);

}  // namespace lancelet
