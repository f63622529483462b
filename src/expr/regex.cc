#include "expr/regex.h"

#include <memory>

#include <fmt/format.h>

#include "expr/errors.h"

namespace lancelet {

const Regex& Regex::Of(const std::string& pattern, const std::string& options, const char* function,
                       const Expr* origin) {
  int flags = REG_EXTENDED;
  for (char o : options) {
    if (o == 'i') flags |= REG_ICASE;
    else if (o == 'c') flags &= ~REG_ICASE;
    else if (o != 'g') ThrowAt(origin, fmt::format("{}(): unknown option '{}' (expected i, c or g)", function, o));
  }
  thread_local std::unique_ptr<Regex> last;
  if (!last || last->pattern_ != pattern || last->flags_ != flags)
    last = std::make_unique<Regex>(pattern, flags, function, origin);
  return *last;
}

Regex::Regex(const std::string& pattern, int flags, const char* function, const Expr* origin)
    : pattern_(pattern), flags_(flags) {
  if (const int error = regcomp(&compiled_, pattern.c_str(), flags)) {
    char message[256];
    regerror(error, &compiled_, message, sizeof message);
    ThrowAt(origin, fmt::format("{}(): invalid pattern '{}': {}", function, pattern, message));
  }
}

Regex::~Regex() { regfree(&compiled_); }

bool Regex::Search(const std::string& text) const { return regexec(&compiled_, text.c_str(), 0, nullptr, 0) == 0; }

bool Regex::Find(const std::string& text, size_t from, std::vector<regoff_t>& spans) const {
  std::vector<regmatch_t> match(compiled_.re_nsub + 1);
  // REG_STARTEND: the match runs over [from, size) of the whole text, so offsets are the
  // text's and a NUL byte inside it is just a byte.
  match[0].rm_so = regoff_t(from);
  match[0].rm_eo = regoff_t(text.size());
  if (regexec(&compiled_, text.c_str(), match.size(), match.data(), REG_STARTEND | (from > 0 ? REG_NOTBOL : 0)) != 0)
    return false;
  spans.clear();
  for (const regmatch_t& m : match) {
    spans.push_back(m.rm_so);
    spans.push_back(m.rm_eo);
  }
  return true;
}

}  // namespace lancelet
