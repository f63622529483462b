#include "expr/like.h"

#include <algorithm>
#include <cctype>

#include "expr/errors.h"
#include "expr/functions.h"

namespace lancelet {

namespace {

inline char FoldAscii(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

}  // namespace

LikePattern::LikePattern(std::string_view original, char escape, bool case_insensitive, bool utf8)
    : case_insensitive_(case_insensitive), utf8_(utf8) {
  // ILIKE on text folds letters past ASCII as lower() does (ASCII ones fold below, so
  // that an ASCII escape character keeps its case).
  const std::string folded = case_insensitive && utf8 ? ChangeCase(original, false, false) : std::string();
  const std::string_view pattern = case_insensitive && utf8 ? std::string_view(folded) : original;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (escape != '\0' && c == escape) {
      if (i + 1 == pattern.size()) ThrowInvalid("LIKE pattern '{}' ends with the escape character", pattern);
      char next = pattern[++i];
      elements_.push_back({Kind::kByte, case_insensitive ? FoldAscii(next) : next});
    } else if (c == '%') {
      if (elements_.empty() || elements_.back().kind != Kind::kAny) elements_.push_back({Kind::kAny, 0});
    } else if (c == '_') {
      elements_.push_back({Kind::kOne, 0});
    } else {
      elements_.push_back({Kind::kByte, case_insensitive ? FoldAscii(c) : c});
    }
  }
}

size_t LikePattern::CharLength(std::string_view text, size_t i) const {
  if (!utf8_) return 1;
  auto lead = static_cast<unsigned char>(text[i]);
  size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 1;
  return std::min(n, text.size() - i);
}

// Greedy matching that remembers the last % and retries it one character further on a
// mismatch; O(text * pattern) at worst.
bool LikePattern::Matches(std::string_view original) const {
  std::string folded;
  std::string_view text = original;
  if (case_insensitive_ && utf8_ &&
      std::any_of(original.begin(), original.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    folded = ChangeCase(original, false, false);
    text = folded;
  }
  size_t p = 0, i = 0;
  size_t star_p = SIZE_MAX, star_i = 0;
  const size_t np = elements_.size();
  while (i < text.size()) {
    if (p < np && elements_[p].kind == Kind::kOne) {
      i += CharLength(text, i);
      ++p;
    } else if (p < np && elements_[p].kind == Kind::kByte &&
               (case_insensitive_ ? FoldAscii(text[i]) : text[i]) == elements_[p].byte) {
      ++i;
      ++p;
    } else if (p < np && elements_[p].kind == Kind::kAny) {
      star_p = p++;
      star_i = i;
    } else if (star_p != SIZE_MAX) {
      p = star_p + 1;
      star_i += CharLength(text, star_i);
      i = star_i;
    } else {
      return false;
    }
  }
  while (p < np && elements_[p].kind == Kind::kAny) ++p;
  return p == np;
}

ArrayPtr Like(const Datum& text, const Datum& pattern, int64_t n, char escape, bool case_insensitive, bool negated,
              const Expr* origin) {
  if (text.all_null() || pattern.all_null()) return MakeNullArray(DataType::Bool(), n);
  ArrayPtr column = Materialize(text, n);
  bool utf8 = column->type->is_string();
  auto compile = [&](std::string_view p) {
    try {
      return LikePattern(p, escape, case_insensitive, utf8);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      ThrowAt(origin, e.what());
    }
  };
  BufferPtr values;
  if (!pattern.is_array()) {
    LikePattern compiled = compile(pattern.scalar.as_string());
    values = BuildBitmap(n, [&](int64_t i) {
      return column->IsValid(i) && compiled.Matches(column->GetView(i)) != negated;
    });
  } else {
    const ArrayData& p = *pattern.array;
    values = BuildBitmap(n, [&](int64_t i) {
      if (column->IsNull(i) || p.IsNull(i)) return false;
      return compile(p.GetView(i)).Matches(column->GetView(i)) != negated;
    });
  }
  return MakeBoolArray(n, IntersectValidity({&text, &pattern}, n), std::move(values));
}

}  // namespace lancelet
