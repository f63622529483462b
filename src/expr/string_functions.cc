// String functions with DuckDB's semantics: left and right (counted in code points, a
// negative count dropping from the other end), concat_ws (NULL arguments skipped), and
// regexp_replace / regexp_extract over POSIX extended patterns (DuckDB's are RE2: the
// shorthand classes \d, \w, \s and lazy quantifiers are not available here).
#include <optional>

#include <fmt/format.h>

#include "expr/errors.h"
#include "expr/functions.h"
#include "expr/regex.h"

namespace lancelet {

namespace {

// Byte offset of the code point `count` code points into `s` (its size when it has fewer).
size_t CodePointOffset(std::string_view s, int64_t count) {
  size_t at = 0;
  for (int64_t k = 0; k < count && at < s.size(); ++k) {
    ++at;
    while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// left(s, n): the first n code points, or all but the last -n; right: the last n, or all
// but the first -n.
std::string LeftOrRight(const std::string& s, int64_t n, bool left) {
  const int64_t length = CodePoints(s);
  const int64_t keep = n >= 0 ? std::min(n, length) : std::max<int64_t>(0, length + n);
  if (left) return s.substr(0, CodePointOffset(s, keep));
  return s.substr(CodePointOffset(s, length - keep));
}

// regexp_replace's replacement for one match: \0 to \9 name the match and its groups, and a
// doubled backslash is one.
void AppendReplacement(std::string& out, const std::string& text, const std::string& replacement,
                       const std::vector<regoff_t>& spans) {
  for (size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c != '\\' || i + 1 == replacement.size()) {
      out += c;
      continue;
    }
    const char next = replacement[++i];
    if (next >= '0' && next <= '9') {
      const size_t group = size_t(next - '0');
      if (2 * group + 1 < spans.size() && spans[2 * group] >= 0)
        out.append(text, size_t(spans[2 * group]), size_t(spans[2 * group + 1] - spans[2 * group]));
    } else {
      out += next;
    }
  }
}

// A replacement naming a group the pattern lacks is an error, as in DuckDB.
void CheckReplacement(const std::string& replacement, const Regex& re, const Expr* origin) {
  for (size_t i = 0; i + 1 < replacement.size(); ++i) {
    if (replacement[i] != '\\') continue;
    const char next = replacement[++i];
    if (next >= '1' && next <= '9' && size_t(next - '0') > re.groups())
      ThrowAt(origin, fmt::format("regexp_replace(): the replacement names group {} but the pattern has {}", next,
                                  re.groups()));
  }
}

// Each match (the first, or every one with `global`) replaced. As RE2's global replace, an
// empty match right where the previous match ended is no match ('x?' over "x%" gives
// "<x>%<>", not "<x><>%<>").
std::string Replace(const std::string& text, const Regex& re, const std::string& replacement, bool global) {
  std::string out;
  std::vector<regoff_t> spans;
  size_t at = 0;                              // text before `at` is in `out`
  std::optional<size_t> previous_end;         // where the last match ended
  for (size_t from = 0; from <= text.size() && re.Find(text, from, spans);) {
    const size_t begin = size_t(spans[0]), end = size_t(spans[1]);
    if (begin == end && previous_end == begin) {  // skip it: search again one code point on
      if (begin == text.size()) break;
      from = begin + CodePointOffset(std::string_view(text).substr(begin), 1);
      continue;
    }
    out.append(text, at, begin - at);
    AppendReplacement(out, text, replacement, spans);
    at = end;
    previous_end = end;
    if (!global) break;
    from = end > begin ? end : end + CodePointOffset(std::string_view(text).substr(end), 1);
    if (end == begin && end < text.size()) {  // an empty match: the character after it stays
      out.append(text, end, from - end);
      at = from;
    }
  }
  if (at < text.size()) out.append(text, at, std::string::npos);
  return out;
}

void ExpectStrings(const std::string& name, std::vector<TypePtr>& types, size_t from, size_t to, const Expr* origin) {
  for (size_t i = from; i < to && i < types.size(); ++i) {
    if (types[i] && !types[i]->is_string())
      ThrowAt(origin, fmt::format("{}() expects a string as argument {}, got {}", name, i + 1, TypeName(types[i])));
    types[i] = DataType::Utf8();
  }
}

void ExpectInteger(const std::string& name, std::vector<TypePtr>& types, size_t i, const Expr* origin) {
  if (types[i] && !types[i]->is_integer())
    ThrowAt(origin, fmt::format("{}() expects an integer as argument {}, got {}", name, i + 1, TypeName(types[i])));
  types[i] = DataType::Int64();
}

}  // namespace

TypePtr ResolveStringFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (name == "left" || name == "right") {
    ExpectArgCount(name, types, 2, 2, origin);
    ExpectStrings(name, types, 0, 1, origin);
    ExpectInteger(name, types, 1, origin);
    return DataType::Utf8();
  }
  if (name == "concat_ws") {
    if (types.size() < 2) ThrowAt(origin, fmt::format("concat_ws() takes a separator and at least 1 value, got {} argument{}",
                                                      types.size(), types.size() == 1 ? "" : "s"));
    ExpectStrings(name, types, 0, 1, origin);
    for (size_t i = 1; i < types.size(); ++i) {
      if (types[i] && (IsListLike(*types[i]) || types[i]->id() == TypeId::kStruct))
        ThrowAt(origin, fmt::format("concat_ws() expects scalar values, got {}", TypeName(types[i])));
      types[i] = DataType::Utf8();  // any other value joins as its text, as in concat
    }
    return DataType::Utf8();
  }
  if (name == "regexp_replace") {
    ExpectArgCount(name, types, 3, 4, origin);
    ExpectStrings(name, types, 0, types.size(), origin);
    return DataType::Utf8();
  }
  if (name == "regexp_extract") {
    ExpectArgCount(name, types, 2, 4, origin);
    ExpectStrings(name, types, 0, 2, origin);
    if (types.size() > 2) ExpectInteger(name, types, 2, origin);
    if (types.size() > 3) ExpectStrings(name, types, 3, 4, origin);
    return DataType::Utf8();
  }
  return nullptr;
}

ArrayPtr CallStringFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                            const Expr* origin) {
  if (name == "left" || name == "right") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), count = RowValue(args[1], i);
      if (s.is_null() || count.is_null()) return Scalar::Null(type);
      return Scalar{type, LeftOrRight(s.as_string(), count.as_int(), name == "left")};
    });
  }
  if (name == "concat_ws") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar separator = RowValue(args[0], i);
      if (separator.is_null()) return Scalar::Null(type);
      std::string out;
      bool first = true;
      for (size_t a = 1; a < args.size(); ++a) {
        Scalar v = RowValue(args[a], i);
        if (v.is_null()) continue;
        if (!first) out += separator.as_string();
        out += v.as_string();
        first = false;
      }
      return Scalar{type, std::move(out)};
    });
  }
  if (name == "regexp_replace") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), pattern = RowValue(args[1], i), replacement = RowValue(args[2], i);
      Scalar options = args.size() > 3 ? RowValue(args[3], i) : Scalar{DataType::Utf8(), std::string()};
      if (s.is_null() || pattern.is_null() || replacement.is_null() || options.is_null()) return Scalar::Null(type);
      const std::string& o = options.as_string();
      const Regex& re = Regex::Of(pattern.as_string(), o, "regexp_replace", origin);
      CheckReplacement(replacement.as_string(), re, origin);
      return Scalar{type, Replace(s.as_string(), re, replacement.as_string(), o.find('g') != std::string::npos)};
    });
  }
  if (name == "regexp_extract") {
    std::vector<regoff_t> spans;
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), pattern = RowValue(args[1], i);
      Scalar group = args.size() > 2 ? RowValue(args[2], i) : Scalar{DataType::Int64(), int64_t(0)};
      Scalar options = args.size() > 3 ? RowValue(args[3], i) : Scalar{DataType::Utf8(), std::string()};
      if (s.is_null() || pattern.is_null() || group.is_null() || options.is_null()) return Scalar::Null(type);
      const Regex& re = Regex::Of(pattern.as_string(), options.as_string(), "regexp_extract", origin);
      const int64_t g = group.as_int();
      if (g < 0 || g > 9) ThrowAt(origin, fmt::format("regexp_extract(): group {} is not between 0 and 9", g));
      const std::string& text = s.as_string();
      // A group the pattern lacks, or one that took no part in the match, extracts '' (DuckDB's).
      if (!re.Find(text, 0, spans) || 2 * size_t(g) >= spans.size() || spans[2 * size_t(g)] < 0)
        return Scalar{type, std::string()};
      const size_t begin = size_t(spans[2 * size_t(g)]), end = size_t(spans[2 * size_t(g) + 1]);
      return Scalar{type, text.substr(begin, end - begin)};
    });
  }
  return nullptr;
}

}  // namespace lancelet
