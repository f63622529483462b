// Date and time parts (date_part / extract, date_trunc, strftime), lists (list_element
// and x[i], len, and the vector measures: distance, inner product, cosine similarity;
// the other list functions are list_functions.cc's), and strings by pattern
// (regexp_matches in POSIX extended syntax, and split). Semantics follow DuckDB's:
// positions count from 1, NULL in gives NULL out.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <tuple>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "expr/cast.h"
#include "expr/errors.h"
#include "expr/functions.h"
#include "expr/numeric.h"
#include "expr/regex.h"
#include "expr/temporal.h"
#include "lancelet/builder.h"

namespace lancelet {

namespace {

bool IsTemporal(const DataType& t) {
  return t.id() == TypeId::kDate32 || t.id() == TypeId::kDate64 || t.id() == TypeId::kTimestamp;
}

// A date or timestamp broken down (UTC).
struct Civil {
  std::chrono::year_month_day date;
  int64_t days;            // since the epoch
  int64_t micros_of_day;   // microseconds since midnight
};

Civil ToCivil(const Scalar& value, const DataType& type, const Expr* origin) {
  auto micros = TemporalToUnit(value.as_int(), type, TimeUnit::kMicro);
  if (!micros) ThrowAt(origin, fmt::format("{} is out of range for microseconds", value.as_int()));
  int64_t days = *micros / kMicrosPerDay;
  int64_t rest = *micros % kMicrosPerDay;
  if (rest < 0) rest += kMicrosPerDay, --days;
  return {std::chrono::year_month_day{std::chrono::sys_days(std::chrono::days(days))}, days, rest};
}

const std::vector<std::string>& DateParts() {
  static const std::vector<std::string> kParts = {"year", "quarter", "month",  "week",  "day",         "dow",
                                                  "isodow", "doy",   "hour",   "minute", "second",     "epoch",
                                                  "millisecond", "microsecond"};
  return kParts;
}

std::string PartName(const Scalar& part, const std::string& function, const Expr* origin) {
  std::string p = AsciiLower(part.as_string());
  if (p == "dayofweek") p = "dow";
  if (p == "dayofyear") p = "doy";
  if (p == "years") p = "year";
  if (p == "months") p = "month";
  if (p == "days") p = "day";
  if (std::find(DateParts().begin(), DateParts().end(), p) == DateParts().end())
    ThrowAt(origin, fmt::format("{}(): unknown part '{}' (known: {})", function, part.as_string(),
                                fmt::join(DateParts(), ", ")));
  return p;
}

int64_t DatePart(const std::string& part, const Civil& c) {
  using namespace std::chrono;
  const int64_t year = int(c.date.year());
  const int64_t month = unsigned(c.date.month());
  if (part == "year") return year;
  if (part == "quarter") return (month - 1) / 3 + 1;
  if (part == "month") return month;
  if (part == "day") return unsigned(c.date.day());
  if (part == "dow") return weekday(sys_days(c.date)).c_encoding();  // Sunday 0
  if (part == "isodow") return weekday(sys_days(c.date)).iso_encoding();  // Monday 1 .. Sunday 7
  if (part == "doy") return (sys_days(c.date) - sys_days(c.date.year() / January / 1)).count() + 1;
  if (part == "week") {  // ISO 8601: weeks start on Monday; week 1 holds the year's first Thursday
    const sys_days d = sys_days(c.date);
    const sys_days thursday = d + days(3 - int64_t(weekday(d).iso_encoding() - 1));
    const sys_days first = sys_days(year_month_day(thursday).year() / January / 1);
    return (thursday - first).count() / 7 + 1;
  }
  if (part == "hour") return c.micros_of_day / 3'600'000'000;
  if (part == "minute") return c.micros_of_day / 60'000'000 % 60;
  if (part == "second") return c.micros_of_day / 1'000'000 % 60;
  if (part == "millisecond") return c.micros_of_day / 1000 % 60'000;
  if (part == "microsecond") return c.micros_of_day % 60'000'000;
  return c.days * 86400 + c.micros_of_day / 1'000'000;  // epoch
}

// The start of the `part` holding c, in microseconds since the epoch.
int64_t TruncatedMicros(const std::string& part, const Civil& c, const Expr* origin) {
  using namespace std::chrono;
  auto at = [](sys_days d) { return int64_t(d.time_since_epoch().count()) * kMicrosPerDay; };
  const auto y = c.date.year();
  const unsigned m = unsigned(c.date.month());
  if (part == "year") return at(sys_days(y / January / 1));
  if (part == "quarter") return at(sys_days(y / month((m - 1) / 3 * 3 + 1) / 1));
  if (part == "month") return at(sys_days(y / c.date.month() / 1));
  if (part == "week") return at(sys_days(c.date) - days(weekday(sys_days(c.date)).iso_encoding() - 1));
  const int64_t day = at(sys_days(c.date));
  if (part == "day") return day;
  if (part == "hour") return day + c.micros_of_day / 3'600'000'000 * 3'600'000'000;
  if (part == "minute") return day + c.micros_of_day / 60'000'000 * 60'000'000;
  if (part == "second") return day + c.micros_of_day / 1'000'000 * 1'000'000;
  ThrowAt(origin, fmt::format("date_trunc(): cannot truncate to '{}'", part));
}

// strftime's conversions: %Y %m %d %H %I %p %M %S %f (microseconds) %j %y %b %B %a %A %%.
std::string Strftime(const Civil& c, const std::string& format, const Expr* origin) {
  using namespace std::chrono;
  static const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                  "July",    "August",   "September", "October", "November", "December"};
  static const char* kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 == format.size()) {
      out += format[i];
      continue;
    }
    const char f = format[++i];
    const unsigned month = unsigned(c.date.month()), dow = weekday(sys_days(c.date)).c_encoding();
    switch (f) {
      case 'Y': out += fmt::format("{:04}", int(c.date.year())); break;
      case 'y': out += fmt::format("{:02}", (int(c.date.year()) % 100 + 100) % 100); break;
      case 'm': out += fmt::format("{:02}", month); break;
      case 'd': out += fmt::format("{:02}", unsigned(c.date.day())); break;
      case 'H': out += fmt::format("{:02}", c.micros_of_day / 3'600'000'000); break;
      case 'I': out += fmt::format("{:02}", (c.micros_of_day / 3'600'000'000 + 11) % 12 + 1); break;
      case 'p': out += c.micros_of_day / 3'600'000'000 < 12 ? "AM" : "PM"; break;
      case 'M': out += fmt::format("{:02}", c.micros_of_day / 60'000'000 % 60); break;
      case 'S': out += fmt::format("{:02}", c.micros_of_day / 1'000'000 % 60); break;
      case 'f': out += fmt::format("{:06}", c.micros_of_day % 1'000'000); break;
      case 'j': out += fmt::format("{:03}", DatePart("doy", c)); break;
      case 'b': out += std::string(kMonths[month - 1]).substr(0, 3); break;
      case 'B': out += kMonths[month - 1]; break;
      case 'a': out += std::string(kDays[dow]).substr(0, 3); break;
      case 'A': out += kDays[dow]; break;
      case '%': out += '%'; break;
      default: ThrowAt(origin, fmt::format("strftime(): unknown conversion '%{}' (known: %Y %y %m %d %H %I %p %M %S %f %j %b %B %a %A %%)", f));
    }
  }
  return out;
}

// strptime's reading of `text` by `format` (the conversions strftime writes, and %I %p
// %h %%), as microseconds since the epoch; nullopt when the text does not match whole or
// names no real date. Numbers take up to their width of digits (%f: 1 to 6, scaled).
std::optional<int64_t> Strptime(std::string_view text, std::string_view format, const Expr* origin) {
  using namespace std::chrono;
  static const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  int64_t year = 1900, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0, day_of_year = 0;
  bool pm = false, twelve_hour = false;
  size_t at = 0;
  auto number = [&](size_t width, int64_t& out) {
    size_t n = 0;
    out = 0;
    while (n < width && at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) out = out * 10 + (text[at++] - '0'), ++n;
    return n > 0;
  };
  auto word = [&] {
    std::string w;
    while (at < text.size() && std::isalpha(static_cast<unsigned char>(text[at]))) w += char(std::tolower(text[at++]));
    return w;
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 == format.size()) {
      if (at >= text.size() || text[at] != format[i]) return std::nullopt;
      ++at;
      continue;
    }
    const char f = format[++i];
    bool ok = true;
    switch (f) {
      case 'Y': ok = number(4, year); break;
      case 'y': ok = number(2, year), year += year < 69 ? 2000 : 1900; break;
      case 'm': ok = number(2, month); break;
      case 'd': ok = number(2, day); break;
      case 'H': ok = number(2, hour); break;
      case 'I': ok = number(2, hour), twelve_hour = true; break;
      case 'M': ok = number(2, minute); break;
      case 'S': ok = number(2, second); break;
      case 'j': ok = number(3, day_of_year); break;
      case 'f': {
        const size_t start = at;
        ok = number(6, micros);
        for (size_t digits = at - start; ok && digits < 6; ++digits) micros *= 10;
        break;
      }
      case 'b': case 'B': case 'h': {
        const std::string w = word();
        const auto it = std::find_if(std::begin(kMonths), std::end(kMonths), [&](const char* m) {
          return w.size() >= 3 && std::string_view(m) == std::string_view(w).substr(0, 3);
        });
        ok = it != std::end(kMonths);
        month = it - std::begin(kMonths) + 1;
        break;
      }
      case 'a': case 'A': ok = !word().empty(); break;
      case 'p': {
        const std::string w = word();
        ok = w == "am" || w == "pm";
        pm = w == "pm";
        break;
      }
      case '%': ok = at < text.size() && text[at++] == '%'; break;
      default: ThrowAt(origin, fmt::format("strptime(): unknown conversion '%{}' (known: %Y %y %m %d %H %I %M %S %f %j %b %B %h %a %A %p %%)", f));
    }
    if (!ok) return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  if (twelve_hour) {
    if (hour < 1 || hour > 12) return std::nullopt;
    hour = hour % 12 + (pm ? 12 : 0);
  }
  if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  year_month_day date{std::chrono::year(int(year)), std::chrono::month(unsigned(month)), std::chrono::day(unsigned(day))};
  if (day_of_year > 0) date = year_month_day(sys_days(std::chrono::year(int(year)) / January / 1) + days(day_of_year - 1));
  if (!date.ok() || (day_of_year > 0 && int(date.year()) != year)) return std::nullopt;
  const int64_t epoch_days = sys_days(date).time_since_epoch().count();
  return epoch_days * kMicrosPerDay + ((hour * 60 + minute) * 60 + second) * 1'000'000 + micros;
}

// A date or timestamp of `type` from microseconds since the epoch (a date: the day
// holding it).
Scalar FromMicros(int64_t micros, const TypePtr& type) {
  const int64_t days = micros / kMicrosPerDay - (micros % kMicrosPerDay < 0);  // floored: before 1970 too
  if (type->id() == TypeId::kDate32) return Scalar{type, days};
  if (type->id() == TypeId::kDate64) return Scalar{type, days * 86'400'000};
  return Scalar{type, *ConvertTimeUnit(micros, TimeUnit::kMicro, type->unit())};
}

// c plus `count` units. Months, quarters and years move the calendar date and keep the
// day, clamped to the month's last (Jan 31 + 1 month = Feb 28 or 29), as DuckDB; the
// other units add a fixed time. The result is `type`: a timestamp for a date (its time of
// day midnight), as DuckDB and PostgreSQL type date + INTERVAL.
Scalar AddInterval(const Civil& c, int64_t count, const std::string& unit_name, const TypePtr& type,
                   const Expr* origin) {
  using namespace std::chrono;
  const IntervalUnit* unit = FindIntervalUnit(unit_name);
  if (!unit) ThrowAt(origin, fmt::format("unknown INTERVAL unit '{}'", unit_name));
  if (unit->micros) {
    int64_t micros = 0;
    const int64_t at = c.days * kMicrosPerDay + c.micros_of_day;
    if (__builtin_mul_overflow(count, unit->micros, &micros) || __builtin_add_overflow(at, micros, &micros))
      ThrowAt(origin, fmt::format("adding {} {}s overflows a timestamp", count, unit_name));
    return FromMicros(micros, type);
  }
  int64_t months = 0;
  if (__builtin_mul_overflow(count, unit->months, &months) || months > 12 * 100000 || months < -12 * 100000)
    ThrowAt(origin, fmt::format("adding {} {}s leaves the calendar's range", count, unit_name));
  const int64_t from = int64_t(int(c.date.year())) * 12 + (unsigned(c.date.month()) - 1) + months;
  const int64_t year = from >= 0 ? from / 12 : (from - 11) / 12;
  const year_month ym{std::chrono::year(int(year)), month(unsigned(from - year * 12 + 1))};
  const day last = year_month_day_last(ym.year(), month_day_last(ym.month())).day();
  const year_month_day moved{ym.year(), ym.month(), std::min(c.date.day(), last)};
  return FromMicros(int64_t(sys_days(moved).time_since_epoch().count()) * kMicrosPerDay + c.micros_of_day, type);
}

// list_element(list, i): item i (from 1; negative from the end), NULL when out of range,
// gathered from the list's items without building a value per row.
ArrayPtr ListElement(const Datum& list, const Datum& index, int64_t n, const TypePtr& type) {
  const ArrayPtr lists = Materialize(list, n);
  const ArrayData& items = *lists->child(0);
  std::vector<int64_t> take(size_t(n), 0);
  auto valid = Buffer::Allocate(size_t((n + 7) / 8));
  int64_t nulls = 0;
  for (int64_t r = 0; r < n; ++r) {
    const Scalar i = index.is_array() ? GetScalar(*index.array, r) : index.scalar;
    int64_t k = 0, begin = 0, length = 0;
    if (!lists->IsNull(r) && !i.is_null()) {
      std::tie(begin, length) = ListSpan(*lists, r);
      k = i.as_int();
      if (k < 0) k += length + 1;
    }
    if (k >= 1 && k <= length && items.IsValid(begin + k - 1)) {
      take[size_t(r)] = begin + k - 1;
      SetBit(valid->mutable_data(), r);
    } else {
      ++nulls;
    }
  }
  if (items.length == 0) return MakeNullArray(type, n);
  ArrayPtr out = Take(items, take);
  if (nulls > 0) {  // rows without an item (index 0 stands in for them) become NULL
    auto copy = std::make_shared<ArrayData>(*out);
    copy->buffers[0] = valid;
    copy->null_count = nulls;
    out = copy;
  }
  return out;
}

// One side of a vector measure: every row's list, or one list for all rows (a literal
// such as [0.1, 0.2], read once rather than copied per row).
class VectorSide {
 public:
  VectorSide(const Datum& d, int64_t n, const std::string& name, const Expr* origin) {
    if (d.is_array()) {
      lists_ = Materialize(d, n);
      items_.emplace(*lists_->child(0));
      return;
    }
    if (d.scalar.is_null()) return;
    for (const Scalar& item : d.scalar.as_list()) {
      if (item.is_null()) NullItem(name, int64_t(constant_.size()), origin);
      constant_.push_back(item.as_double());
    }
    constant_valid_ = true;
  }
  bool IsNull(int64_t r) const { return lists_ ? lists_->IsNull(r) : !constant_valid_; }
  // Row r's items (r not NULL), and their count; NULL items are an error.
  std::pair<const double*, int64_t> Items(int64_t r, const std::string& name, const Expr* origin) const {
    if (!lists_) return {constant_.data(), int64_t(constant_.size())};
    const auto [begin, length] = ListSpan(*lists_, r);
    const ArrayData& items = *lists_->child(0);
    if (items.null_count > 0)
      for (int64_t k = 0; k < length; ++k)
        if (items.IsNull(begin + k)) NullItem(name, k, origin);
    return {items_->data() + begin, length};
  }

 private:
  [[noreturn]] static void NullItem(const std::string& name, int64_t k, const Expr* origin) {
    ThrowAt(origin, fmt::format("{}(): item {} of a list is NULL, expected a number", name, k + 1));
  }

  ArrayPtr lists_;
  std::optional<Widened<double>> items_;
  std::vector<double> constant_;
  bool constant_valid_ = false;
};

// The measure of two vectors of n items. Four running sums, not one: a single chain of
// dependent additions ran at a quarter of the speed.
// The sums of two vectors of n items: the squared difference, or the inner product and,
// for the cosine, the two squared norms. Four running sums each, not one: a single chain
// of dependent additions ran at a quarter of the speed.
template <bool kDifference, bool kNorms>
void SumsOf(const double* p, const double* q, int64_t n, double& sum, double& pp_sum, double& qq_sum) {
  constexpr int kLanes = 4;
  double sums[kLanes] = {}, pp[kLanes] = {}, qq[kLanes] = {};
  auto step = [&](int lane, int64_t k) {
    if constexpr (kDifference) {
      const double d = p[k] - q[k];
      sums[lane] += d * d;
    } else {
      sums[lane] += p[k] * q[k];
    }
    if constexpr (kNorms) {
      pp[lane] += p[k] * p[k];
      qq[lane] += q[k] * q[k];
    }
  };
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int lane = 0; lane < kLanes; ++lane) step(lane, k + lane);
  for (int lane = 0; k < n; ++k, ++lane) step(lane, k);
  auto total = [](const double* lanes) { return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]); };
  sum = total(sums);
  pp_sum = total(pp);
  qq_sum = total(qq);
}

double Measure(VectorMeasure measure, const double* p, const double* q, int64_t n) {
  double sum = 0, pp = 0, qq = 0;
  switch (measure) {
    case VectorMeasure::kDistance:
    case VectorMeasure::kL2Squared:
      SumsOf<true, false>(p, q, n, sum, pp, qq);
      return measure == VectorMeasure::kDistance ? std::sqrt(sum) : sum;
    case VectorMeasure::kInnerProduct:
    case VectorMeasure::kNegativeInnerProduct:
      SumsOf<false, false>(p, q, n, sum, pp, qq);
      return measure == VectorMeasure::kInnerProduct ? sum : -sum;
    case VectorMeasure::kCosineSimilarity:
    case VectorMeasure::kCosineDistance: {
      SumsOf<false, true>(p, q, n, sum, pp, qq);
      const double cosine = sum / (std::sqrt(pp) * std::sqrt(qq));
      return measure == VectorMeasure::kCosineSimilarity ? cosine : 1.0 - cosine;
    }
  }
  return 0;
}

// Row r of each side pairs its items with the other's; a NULL list gives NULL, lists of
// different lengths or with NULL items are an error, as in DuckDB.
ArrayPtr MeasureVectors(VectorMeasure measure, const std::string& name, const Datum& left, const Datum& right,
                        int64_t n, const Expr* origin) {
  const VectorSide a(left, n, name, origin), b(right, n, name, origin);
  FixedWidthBuilder<double> out(DataType::Float64());
  for (int64_t r = 0; r < n; ++r) {
    if (a.IsNull(r) || b.IsNull(r)) {
      out.AppendNull();
      continue;
    }
    const auto [p, length] = a.Items(r, name, origin);
    const auto [q, other_length] = b.Items(r, name, origin);
    if (length != other_length)
      ThrowAt(origin, fmt::format("{}(): the lists have {} and {} items, expected the same number", name, length,
                                  other_length));
    out.Append(Measure(measure, p, q, length));
  }
  return out.Finish();
}

}  // namespace

std::optional<VectorMeasure> VectorMeasureOf(const std::string& name) {
  if (name == "list_distance" || name == "array_distance") return VectorMeasure::kDistance;
  if (name == "l2_distance") return VectorMeasure::kL2Squared;
  if (name == "list_inner_product" || name == "array_inner_product" || name == "list_dot_product" ||
      name == "inner_product")
    return VectorMeasure::kInnerProduct;
  if (name == "list_negative_inner_product" || name == "array_negative_inner_product")
    return VectorMeasure::kNegativeInnerProduct;
  if (name == "list_cosine_similarity" || name == "array_cosine_similarity") return VectorMeasure::kCosineSimilarity;
  if (name == "cosine_distance" || name == "list_cosine_distance" || name == "array_cosine_distance")
    return VectorMeasure::kCosineDistance;
  return std::nullopt;
}

bool IsListLike(const DataType& t) { return t.id() == TypeId::kList || t.id() == TypeId::kLargeList || t.id() == TypeId::kFixedSizeList; }

std::pair<int64_t, int64_t> ListSpan(const ArrayData& lists, int64_t r) {
  if (lists.type->id() == TypeId::kFixedSizeList) {
    const int64_t width = lists.type->fixed_size();
    return {r * width, width};
  }
  const int64_t begin = lists.offset(r);
  return {begin, lists.offset(r + 1) - begin};
}

TypePtr ResolveMoreFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  if (TypePtr type = ResolveListFunction(name, arg_types, origin)) return type;
  if (TypePtr type = ResolveStringFunction(name, arg_types, origin)) return type;
  auto& types = *arg_types;
  if (name == "date_part" || name == "date_trunc") {
    ExpectArgCount(name, types, 2, 2, origin);
    if (types[0] && !types[0]->is_string()) ThrowAt(origin, fmt::format("{}() expects a part name first, got {}", name, TypeName(types[0])));
    types[0] = DataType::Utf8();
    if (!types[1] || !IsTemporal(*types[1]))
      ThrowAt(origin, fmt::format("{}() expects a date or timestamp, got {}", name, TypeName(types[1])));
    return name == "date_part" ? DataType::Int64() : types[1];
  }
  if (name == "interval")
    ThrowAt(origin, "an INTERVAL can only be added to, or subtracted from, a date or timestamp");
  if (name == "random") {
    ExpectArgCount(name, types, 0, 0, origin);
    return DataType::Float64();
  }
  if (name == "now" || name == "current_date") {  // the parser's: the statement's time as the argument
    ExpectArgCount(name, types, 1, 1, origin);
    return types[0];
  }
  if (name == "epoch") {  // also date_part('epoch', x)
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0] || !IsTemporal(*types[0]))
      ThrowAt(origin, fmt::format("epoch() expects a date or timestamp, got {}", TypeName(types[0])));
    return DataType::Float64();
  }
  if (name == "date_add_days" || name == "date_diff_days") {  // date ± n, date - date (the binder's forms)
    types[1] = name == "date_add_days" ? DataType::Int64() : DataType::Date32();
    return name == "date_add_days" ? DataType::Date32() : DataType::Int64();
  }
  if (name == "add_interval") {  // x + INTERVAL (the binder's form of it)
    ExpectArgCount(name, types, 3, 3, origin);
    if (!types[0] || !IsTemporal(*types[0]))
      ThrowAt(origin, fmt::format("an INTERVAL can only be added to a date or timestamp, not {}", TypeName(types[0])));
    types[1] = DataType::Int64();
    types[2] = DataType::Utf8();
    return types[0]->id() == TypeId::kDate32 || types[0]->id() == TypeId::kDate64 ? DataType::Timestamp(TimeUnit::kMicro)
                                                                                   : types[0];
  }
  if (name == "strptime" || name == "try_strptime") {
    ExpectArgCount(name, types, 2, 2, origin);
    for (const auto& t : types)
      if (t && !t->is_string()) ThrowAt(origin, fmt::format("{}() expects a string and a format, got {}", name, TypeName(t)));
    types = {DataType::Utf8(), DataType::Utf8()};
    return DataType::Timestamp(TimeUnit::kMicro);
  }
  if (name == "strftime") {
    ExpectArgCount(name, types, 2, 2, origin);
    if (!types[0] || !IsTemporal(*types[0]))
      ThrowAt(origin, fmt::format("strftime() expects a date or timestamp, got {}", TypeName(types[0])));
    if (types[1] && !types[1]->is_string()) ThrowAt(origin, fmt::format("strftime() expects a format string, got {}", TypeName(types[1])));
    types[1] = DataType::Utf8();
    return DataType::Utf8();
  }
  if (name == "list_element" || name == "list_extract" || name == "array_extract") {
    ExpectArgCount(name, types, 2, 2, origin);
    if (!types[0] || !IsListLike(*types[0])) ThrowAt(origin, fmt::format("[] needs a list, got {}", TypeName(types[0])));
    if (types[1] && !types[1]->is_integer()) ThrowAt(origin, fmt::format("a list index is an integer, got {}", TypeName(types[1])));
    types[1] = DataType::Int64();
    return types[0]->child(0)->type;
  }
  if (name == "len" || name == "array_length" || name == "list_length") {
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0] || !IsListLike(*types[0])) ThrowAt(origin, fmt::format("{}() expects a list, got {}", name, TypeName(types[0])));
    return DataType::Int64();
  }
  if (VectorMeasureOf(name)) {
    ExpectArgCount(name, types, 2, 2, origin);
    for (const auto& t : types)
      if (!t || !IsListLike(*t) || !t->child(0)->type->is_numeric())
        ThrowAt(origin, fmt::format("{}() expects two lists of numbers, got {}", name, TypeName(t)));
    return DataType::Float64();
  }
  if (name == "regexp_matches" || name == "split" || name == "string_split") {
    ExpectArgCount(name, types, 2, 2, origin);
    for (auto& t : types) {
      if (t && !t->is_string()) ThrowAt(origin, fmt::format("{}() expects strings, got {}", name, TypeName(t)));
      t = DataType::Utf8();
    }
    return name == "regexp_matches" ? DataType::Bool() : DataType::List(DataType::Utf8());
  }
  return nullptr;
}

ArrayPtr CallMoreFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                          const Expr* origin) {
  if (ArrayPtr out = CallListFunction(name, args, n, type, origin)) return out;
  if (ArrayPtr out = CallStringFunction(name, args, n, type, origin)) return out;
  if (name == "date_part" || name == "date_trunc") {
    const DataType& input = *args[1].type();
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar part = RowValue(args[0], i), value = RowValue(args[1], i);
      if (part.is_null() || value.is_null()) return Scalar::Null(type);
      const std::string p = PartName(part, name, origin);
      const Civil c = ToCivil(value, input, origin);
      if (name == "date_part") return Scalar{type, DatePart(p, c)};
      return FromMicros(TruncatedMicros(p, c, origin), type);
    });
  }
  if (name == "now" || name == "current_date") return RowWise(type, n, [&](int64_t i) { return RowValue(args[0], i); });
  if (name == "random") {  // uniform in [0, 1), as DuckDB's; a generator per thread
    thread_local std::mt19937_64 engine{std::random_device{}()};
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    FixedWidthBuilder<double> out(DataType::Float64());
    for (int64_t i = 0; i < n; ++i) out.Append(uniform(engine));
    return out.Finish();
  }
  if (name == "epoch") {
    const DataType& input = *args[0].type();
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar value = RowValue(args[0], i);
      if (value.is_null()) return Scalar::Null(type);
      const Civil c = ToCivil(value, input, origin);
      return Scalar{type, double(c.days * kMicrosPerDay + c.micros_of_day) / 1e6};  // as DuckDB divides
    });
  }
  if (name == "date_add_days" || name == "date_diff_days") {
    const bool add = name == "date_add_days";
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar a = RowValue(args[0], i), b = RowValue(args[1], i);
      if (a.is_null() || b.is_null()) return Scalar::Null(type);
      if (!add) return Scalar{type, a.as_int() - b.as_int()};  // days of two int32 counts: no overflow
      int64_t days = 0;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &days) || days < INT32_MIN || days > INT32_MAX)
        ThrowAt(origin, fmt::format("date out of range: {} days after {}", b.as_int(), DescribeValue(a)));
      return Scalar{type, days};
    });
  }
  if (name == "add_interval") {
    const DataType& input = *args[0].type();
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar value = RowValue(args[0], i), count = RowValue(args[1], i), unit = RowValue(args[2], i);
      if (value.is_null() || count.is_null() || unit.is_null()) return Scalar::Null(type);
      return AddInterval(ToCivil(value, input, origin), count.as_int(), unit.as_string(), type, origin);
    });
  }
  if (name == "strptime" || name == "try_strptime") {  // try_: NULL where strptime fails
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar text = RowValue(args[0], i), format = RowValue(args[1], i);
      if (text.is_null() || format.is_null()) return Scalar::Null(type);
      if (const auto micros = Strptime(text.as_string(), format.as_string(), origin)) return Scalar{type, *micros};
      if (name == "try_strptime") return Scalar::Null(type);
      ThrowAt(origin, fmt::format("strptime(): '{}' does not match the format '{}'", EscapeForMessage(text.as_string()),
                                  format.as_string()));
    });
  }
  if (name == "strftime") {
    const DataType& input = *args[0].type();
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar value = RowValue(args[0], i), format = RowValue(args[1], i);
      if (value.is_null() || format.is_null()) return Scalar::Null(type);
      return Scalar{type, Strftime(ToCivil(value, input, origin), format.as_string(), origin)};
    });
  }
  if (name == "list_element" || name == "list_extract" || name == "array_extract")
    return ListElement(args[0], args[1], n, type);
  if (name == "len" || name == "array_length" || name == "list_length") {
    const ArrayPtr lists = Materialize(args[0], n);
    FixedWidthBuilder<int64_t> out(DataType::Int64());
    for (int64_t r = 0; r < n; ++r) {
      if (lists->IsNull(r)) out.AppendNull();
      else out.Append(ListSpan(*lists, r).second);
    }
    return out.Finish();
  }
  if (const auto measure = VectorMeasureOf(name)) return MeasureVectors(*measure, name, args[0], args[1], n, origin);
  if (name == "regexp_matches") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), pattern = RowValue(args[1], i);
      if (s.is_null() || pattern.is_null()) return Scalar::Null(type);
      return Scalar{type, Regex::Of(pattern.as_string(), "", "regexp_matches", origin).Search(s.as_string())};
    });
  }
  if (name == "split" || name == "string_split") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), sep = RowValue(args[1], i);
      if (s.is_null() || sep.is_null()) return Scalar::Null(type);
      const std::string& text = s.as_string();
      const std::string& by = sep.as_string();
      std::vector<Scalar> parts;
      if (by.empty()) {  // every character (UTF-8 sequence) apart, as DuckDB
        for (size_t b = 0; b < text.size();) {
          size_t e = b + 1;
          while (e < text.size() && (static_cast<unsigned char>(text[e]) & 0xC0) == 0x80) ++e;
          parts.push_back(Scalar{DataType::Utf8(), text.substr(b, e - b)});
          b = e;
        }
      } else {
        for (size_t at = 0;;) {
          const size_t hit = text.find(by, at);
          parts.push_back(Scalar{DataType::Utf8(), text.substr(at, hit == std::string::npos ? std::string::npos : hit - at)});
          if (hit == std::string::npos) break;
          at = hit + by.size();
        }
      }
      return Scalar{type, std::move(parts)};
    });
  }
  return nullptr;
}

}  // namespace lancelet
