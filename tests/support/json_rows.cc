#include "support/json_rows.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lancelet/float16.h"
#include "support/test_env.h"

namespace lancelet::testing {

namespace {

using Json = nlohmann::ordered_json;

bool NumbersMatch(const Json& a, const Json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    if (a.is_number_unsigned() || b.is_number_unsigned()) return a.get<uint64_t>() == b.get<uint64_t>();
    return a.get<int64_t>() == b.get<int64_t>();
  }
  double x = a.get<double>(), y = b.get<double>();
  if (x == y) return std::signbit(x) == std::signbit(y);
  if (float(x) == float(y)) return true;
  return FloatToHalf(float(x)) == FloatToHalf(float(y));
}

std::string Diff(const Json& a, const Json& b, const std::string& where) {
  if (a.is_number() && b.is_number()) {
    return NumbersMatch(a, b) ? "" : fmt::format("{}: {} vs {}", where, a.dump(), b.dump());
  }
  if (a.type() != b.type()) return fmt::format("{}: {} vs {}", where, a.dump(), b.dump());
  if (a.is_object()) {
    if (a.size() != b.size()) return fmt::format("{}: keys differ: {} vs {}", where, a.dump(), b.dump());
    auto ia = a.begin();
    auto ib = b.begin();
    for (; ia != a.end(); ++ia, ++ib) {
      if (ia.key() != ib.key()) return fmt::format("{}: key '{}' vs '{}'", where, ia.key(), ib.key());
      auto d = Diff(ia.value(), ib.value(), where + "." + ia.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return fmt::format("{}: {} vs {}", where, a.dump(), b.dump());
    for (size_t i = 0; i < a.size(); ++i) {
      auto d = Diff(a[i], b[i], fmt::format("{}[{}]", where, i));
      if (!d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : fmt::format("{}: {} vs {}", where, a.dump(), b.dump());
}

}  // namespace

std::string DiffJsonLines(const std::string& expected, const std::string& actual) {
  auto e = SplitLines(expected), a = SplitLines(actual);
  if (e.size() != a.size()) return fmt::format("{} rows expected, {} rows read", e.size(), a.size());
  for (size_t i = 0; i < e.size(); ++i) {
    Json je, ja;
    try {
      je = Json::parse(e[i]);
      ja = Json::parse(a[i]);
    } catch (const std::exception& ex) {
      return fmt::format("row {}: not JSON ({}): {} | {}", i, ex.what(), e[i], a[i]);
    }
    auto d = Diff(je, ja, fmt::format("row {}", i));
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace lancelet::testing
