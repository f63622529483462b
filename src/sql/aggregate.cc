#include "sql/aggregate.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "array/shared_source.h"
#include "array/worker_thread.h"
#include "expr/functions.h"
#include "expr/numeric.h"
#include "sql/sort.h"

namespace lancelet::sql {

const std::vector<std::string>& AggregateNames() {
  static const std::vector<std::string> kNames = {
      "approx_count_distinct", "arg_max", "arg_min", "array_agg", "avg",          "bool_and", "bool_or",    "count",
      "list",                  "max",       "median",       "min",      "quantile_cont", "quantile_disc",
      "stddev",                "stddev_pop", "stddev_samp", "string_agg", "sum",     "var_pop",
      "var_samp",              "variance"};
  return kNames;
}

bool IsAggregateName(const std::string& function) {
  const auto& names = AggregateNames();
  return std::find(names.begin(), names.end(), function) != names.end();
}

namespace {

// The call's arguments, without its ORDER BY keys and FILTER's condition.
size_t ArgumentCount(const Expr& call) {
  return call.args.size() - (call.order ? call.order->descending.size() : 0) - (call.has_filter ? 1 : 0);
}

// The separator of string_agg(x, sep): a string literal, ',' without one.
std::string AggregateSeparator(const Context& ctx, const Expr& call) {
  if (ArgumentCount(call) < 2) return ",";
  const Expr& sep = *call.args[1];
  if (sep.kind != ExprKind::kLiteral || sep.literal.is_null() || !sep.literal.type || !sep.literal.type->is_string())
    ctx.Fail(sep.position, "string_agg's separator must be a string literal");
  return sep.literal.as_string();
}

bool IsListAggregate(const std::string& f) { return f == "list" || f == "array_agg"; }
bool IsArgExtreme(const std::string& f) { return f == "arg_min" || f == "arg_max"; }
// The aggregates whose result an ORDER BY inside the call changes; the others ignore it,
// as in DuckDB.
bool IsOrderSensitive(const std::string& f) { return IsListAggregate(f) || f == "string_agg"; }
bool IsQuantile(const std::string& f) { return f == "quantile_cont" || f == "quantile_disc"; }

// The fraction of quantile_cont(x, q) / quantile_disc(x, q): a number literal in [0, 1].
double QuantileFraction(const Context& ctx, const Expr& call) {
  const Expr& q = *call.args[1];
  const bool number = q.kind == ExprKind::kLiteral && !q.literal.is_null() && q.literal.type && q.literal.type->is_numeric();
  const double fraction = number ? q.literal.as_double() : -1;
  if (!(fraction >= 0 && fraction <= 1))
    ctx.Fail(q.position, fmt::format("{}'s fraction must be a number literal from 0 to 1", call.function));
  return fraction;
}

// DuckDB's quantiles of n sorted values: quantile_cont interpolates between the values at
// floor and ceil of (n - 1) q, weighting both ends (so -inf and a number give -inf);
// quantile_disc takes the value at ceil(n q) - 1, n q taken as exact when within rounding
// of a whole number, as DuckDB's decimal q is.
Scalar Quantile(const AggregateCall& agg, double q, std::vector<Scalar> values) {
  std::sort(values.begin(), values.end(), [](const Scalar& a, const Scalar& b) { return CompareScalars(a, b) < 0; });
  const double n = double(values.size());
  if (agg.call->function == "quantile_disc") {
    double at = n * q;
    if (std::abs(at - std::round(at)) < 1e-9 * std::max(1.0, n)) at = std::round(at);
    return values[size_t(std::max(1.0, std::ceil(at)) - 1)];
  }
  const double position = (n - 1) * q;
  const double low = values[size_t(std::floor(position))].as_double();
  if (position == std::floor(position)) return Scalar{agg.type, low};  // exact, even for ±inf
  const double high = values[size_t(std::ceil(position))].as_double();
  const double d = position - std::floor(position);
  return Scalar{agg.type, low * (1 - d) + high * d};  // an infinite end stays infinite, as in DuckDB
}

TypePtr AggregateType(const Context& ctx, const Expr& call, const TypePtr& arg) {
  const std::string& f = call.function;
  if (f == "count") return DataType::Int64();
  if (!arg) ctx.Fail(call.position, fmt::format("{}(*) is not allowed; only count(*) takes *", f));
  if (f == "avg") {
    if (!arg->is_numeric()) ctx.Fail(call.position, fmt::format("avg needs a numeric argument, not {}", arg->ToString()));
    return DataType::Float64();
  }
  if (f == "sum") {
    if (arg->is_integer()) return arg->is_signed_integer() ? DataType::Int64() : DataType::UInt64();
    if (arg->is_floating()) return DataType::Float64();
    ctx.Fail(call.position, fmt::format("sum needs a numeric argument, not {}", arg->ToString()));
  }
  if (f == "quantile_disc") return arg;
  if (f == "median" || f == "quantile_cont" || f.starts_with("stddev") || f.starts_with("var")) {
    if (!arg->is_numeric()) ctx.Fail(call.position, fmt::format("{} needs a numeric argument, not {}", f, arg->ToString()));
    return DataType::Float64();
  }
  if (f == "string_agg") {
    if (!arg->is_string()) ctx.Fail(call.position, fmt::format("string_agg needs a string argument, not {}", arg->ToString()));
    return arg;
  }
  if (f == "bool_and" || f == "bool_or") {
    if (arg->id() != TypeId::kBool) ctx.Fail(call.position, fmt::format("{} needs a boolean argument, not {}", f, arg->ToString()));
    return arg;
  }
  if (IsListAggregate(f)) return DataType::List(Field::Make("item", arg));
  if (IsArgExtreme(f)) return arg->child(1)->type;  // the {val, arg} pair's arg
  return arg;  // min, max
}

bool IsStatistic(const std::string& f) { return f.starts_with("stddev") || f.starts_with("var"); }

// The variance (or standard deviation) of n values with sum of squared deviations m2.
Scalar Statistic(const std::string& f, const TypePtr& type, int64_t n, double m2) {
  const bool population = f.ends_with("_pop");
  if (n == 0 || (!population && n < 2)) return Scalar::Null(type);
  const double variance = m2 / double(population ? n : n - 1);
  return Scalar{type, f.starts_with("stddev") ? std::sqrt(variance) : variance};
}

// Calls f(row, value) for the valid rows of a numeric array, as doubles.
template <typename F>
void ForEachDouble(const ArrayData& a, F&& f) {
  const TypeId id = a.type->id();
  if (id != TypeId::kFloat16 && a.type->is_numeric()) {
    VisitStorage(id, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) {
        const T* values = a.values<T>();
        for (int64_t r = 0; r < a.length; ++r)
          if (a.IsValid(r)) f(r, double(values[r]));
      }
    });
    return;
  }
  for (int64_t r = 0; r < a.length; ++r)
    if (a.IsValid(r)) f(r, GetScalar(a, r).as_double());
}

// One aggregate over the non-null values it saw, in row order (DISTINCT ones already
// reduced): the general form, which holds the values.
Scalar AggregateOfValues(const Context& ctx, const AggregateCall& agg, const std::vector<Scalar>& values) {
  const Expr& call = *agg.call;
  const std::string& f = call.function;
  if (f == "count") return Scalar{DataType::Int64(), int64_t(values.size())};
  if (values.empty()) return Scalar::Null(agg.type);
  if (f == "string_agg") {
    const std::string separator = AggregateSeparator(ctx, call);
    std::string out;
    for (size_t k = 0; k < values.size(); ++k) out += (k ? separator : "") + values[k].as_string();
    return Scalar{agg.type, out};
  }
  if (f == "bool_and" || f == "bool_or") {
    const bool all = f == "bool_and";
    for (const auto& v : values)
      if (std::get<bool>(v.value) != all) return Scalar{agg.type, !all};
    return Scalar{agg.type, all};
  }
  if (IsQuantile(f)) return Quantile(agg, QuantileFraction(ctx, call), values);
  if (f == "median") {  // the middle value, or the mean of the middle two
    std::vector<double> x;
    for (const auto& v : values) x.push_back(v.as_double());
    std::sort(x.begin(), x.end());
    const size_t m = x.size() / 2;
    return Scalar{agg.type, x.size() % 2 ? x[m] : (x[m - 1] + x[m]) / 2};
  }
  if (IsStatistic(f)) {  // two passes: the mean, then the squares
    double mean = 0;
    for (const auto& v : values) mean += v.as_double();
    mean /= double(values.size());
    double squares = 0;
    for (const auto& v : values) squares += (v.as_double() - mean) * (v.as_double() - mean);
    return Statistic(f, agg.type, int64_t(values.size()), squares);
  }
  if (f == "min" || f == "max") {
    Scalar best = values[0];
    for (const auto& v : values) {
      int c = CompareScalars(v, best);
      if ((f == "min" && c < 0) || (f == "max" && c > 0)) best = v;
    }
    return best;
  }
  if (agg.type->id() == TypeId::kInt64 && f == "sum") {
    int64_t sum = 0;
    for (const auto& v : values)
      if (__builtin_add_overflow(sum, v.as_int(), &sum)) ctx.Fail(call.position, "sum overflows int64");
    return Scalar{agg.type, sum};
  }
  if (agg.type->id() == TypeId::kUInt64) {
    uint64_t sum = 0;
    for (const auto& v : values)
      if (__builtin_add_overflow(sum, v.as_uint(), &sum)) ctx.Fail(call.position, "sum overflows uint64");
    return Scalar{agg.type, sum};
  }
  double sum = 0;
  for (const auto& v : values) sum += v.as_double();
  if (f == "avg") sum /= double(values.size());
  return Scalar{DataType::Float64(), sum};
}

// The general form: keeps each group's values (its distinct ones under DISTINCT).
class ValuesAccumulator final : public Accumulator {
 public:
  ValuesAccumulator(const Context& ctx, const AggregateCall& agg) : ctx_(ctx), agg_(agg) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    // A new group's vector and set, and the buckets the set allocates on its first value.
    held_ += (group_count - values_.size()) * (sizeof values_[0] + sizeof seen_[0] + 128);
    values_.resize(group_count);
    seen_.resize(group_count);
    keys_.resize(group_count);
    for (int64_t r = 0; r < a->length; ++r) {
      if (a->IsNull(r)) continue;
      const uint32_t g = groups[size_t(r)];
      if (agg_.call->distinct) {
        auto [at, added] = seen_[g].insert(ValueKey(*a, r));
        if (!added) continue;
        keys_[g].push_back(&*at);
        held_ += 104 + at->size();  // the set's node (its string, hash, link) and bucket, the key's bytes and pointer
      }
      values_[g].push_back(GetScalar(*a, r));
      // a Scalar in a vector that grows by doubling, and a string's bytes
      held_ += 2 * sizeof(Scalar) + (a->type->is_variable_binary() ? uint64_t(a->GetView(r).size()) : 0);
    }
  }
  uint64_t HeldBytes() const override { return held_; }
  bool Mergeable() const override { return !IsOrderSensitive(agg_.call->function); }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    auto& from = static_cast<ValuesAccumulator&>(other);
    values_.resize(group_count);
    seen_.resize(group_count);
    keys_.resize(group_count);
    for (size_t g = 0; g < from.values_.size(); ++g) {
      const uint32_t t = into[g];
      for (size_t k = 0; k < from.values_[g].size(); ++k) {
        if (agg_.call->distinct) {
          auto [at, added] = seen_[t].insert(*from.keys_[g][k]);
          if (!added) continue;
          keys_[t].push_back(&*at);
        }
        values_[t].push_back(std::move(from.values_[g][k]));
      }
      std::vector<Scalar>().swap(from.values_[g]);
    }
    held_ += from.held_;
  }
  ArrayPtr Finish(size_t group_count) override {
    values_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count),
                   [&](int64_t g) { return AggregateOfValues(ctx_, agg_, values_[size_t(g)]); });
  }

 private:
  const Context& ctx_;
  const AggregateCall& agg_;
  std::vector<std::vector<Scalar>> values_;
  std::vector<std::unordered_set<std::string>> seen_;
  // Under DISTINCT: the key in seen_ of each of values_ (set nodes do not move).
  std::vector<std::vector<const std::string*>> keys_;
  uint64_t held_ = 0;
};

// The int64 column of `counts`, one per group (0 for groups past its end).
ArrayPtr Counts(std::vector<int64_t>& counts, size_t group_count) {
  counts.resize(group_count);
  FixedWidthBuilder<int64_t> out(DataType::Int64());
  for (int64_t n : counts) out.Append(n);
  return out.Finish();
}

// count(DISTINCT x): the (group, value) pairs seen (the value keyed as a GROUP BY key is,
// AppendKey); a new pair counts one for its group. The pairs are numbered in kParts tables
// by their value's hash, so that the parts of a parallel GROUP BY merge table by table on
// several threads: a merge that numbered one part's pairs into the other's on one thread
// took as long as building them (count(DISTINCT) of 2M strings ran 1.1x faster on 2 cores
// than on 1).
class CountDistinctAccumulator final : public Accumulator {
 public:
  explicit CountDistinctAccumulator(const AggregateCall& agg) : form_(KeyFormOf(*agg.argument->type)) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    counts_.resize(group_count);
    for (int64_t r = 0; r < a->length; ++r) {
      if (a->IsNull(r)) continue;
      const uint32_t g = groups[size_t(r)];
      key_.assign(reinterpret_cast<const char*>(&g), sizeof g);
      AppendKey(key_, *a, r, form_);
      const uint64_t value_hash = KeyNumbering::Hash(std::string_view(key_).substr(sizeof g));
      if (seen_[PartOf(value_hash)].Number(key_, PairHash(value_hash, g)).second) ++counts_[g];
    }
  }
  uint64_t HeldBytes() const override {
    uint64_t bytes = counts_.capacity() * sizeof(int64_t);
    for (const KeyNumbering& part : seen_) bytes += part.MemoryBytes();
    return bytes;
  }
  bool Mergeable() const override { return true; }
  // Tables are merged on up to ReadAheadThreads() threads when there are few groups (each
  // thread counts its new pairs per group apart, then they are added up), else on this one.
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    auto& from = static_cast<CountDistinctAccumulator&>(other);
    counts_.resize(group_count);
    const size_t threads = group_count <= kParallelMergeGroups ? std::min<size_t>(ReadAheadThreads(), kParts) : 1;
    std::vector<std::vector<int64_t>> added(threads, std::vector<int64_t>(threads > 1 ? group_count : 0));
    auto merge_parts = [&](size_t t) {
      std::string key;
      std::vector<int64_t>& counts = threads > 1 ? added[t] : counts_;
      for (size_t p = t; p < kParts; p += threads) {
        const KeyNumbering& source = from.seen_[p];
        for (uint32_t n = 0; n < source.size(); ++n) {
          const std::string_view pair = source.Key(n);
          uint32_t g;
          std::memcpy(&g, pair.data(), sizeof g);
          const uint32_t group = into[g];
          key.assign(reinterpret_cast<const char*>(&group), sizeof group);
          key.append(pair.substr(sizeof group));
          const uint64_t value_hash = KeyNumbering::Hash(pair.substr(sizeof group));
          if (seen_[p].Number(key, PairHash(value_hash, group)).second) ++counts[group];
        }
        from.seen_[p] = KeyNumbering{};  // its memory goes as soon as it is merged
      }
    };
    if (threads == 1) return merge_parts(0);
    RunOnThreads(threads, merge_parts);
    for (const auto& counts : added)
      for (size_t g = 0; g < counts.size(); ++g) counts_[g] += counts[g];
  }
  ArrayPtr Finish(size_t group_count) override { return Counts(counts_, group_count); }

 private:
  static constexpr size_t kParts = 16;
  static constexpr size_t kParallelMergeGroups = 1 << 16;
  // A pair's table follows its value alone, so that a pair whose group is numbered
  // differently in the merged part stays in the same table: threads merging different
  // tables never meet. The low bits: KeyNumbering finds a slot by the high ones.
  static size_t PartOf(uint64_t value_hash) { return size_t(value_hash & (kParts - 1)); }
  static uint64_t PairHash(uint64_t value_hash, uint32_t group) {
    const uint64_t h = (value_hash ^ (uint64_t(group) * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
  }

  KeyForm form_;
  std::array<KeyNumbering, kParts> seen_;
  std::vector<int64_t> counts_;
  std::string key_;  // scratch
};

class CountAccumulator final : public Accumulator {
 public:
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    counts_.resize(group_count);
    if (!a) {
      for (uint32_t g : groups) ++counts_[g];
      return;
    }
    for (int64_t r = 0; r < a->length; ++r) counts_[groups[size_t(r)]] += a->IsValid(r);
  }
  bool Mergeable() const override { return true; }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    const auto& from = static_cast<const CountAccumulator&>(other);
    counts_.resize(group_count);
    for (size_t g = 0; g < from.counts_.size(); ++g) counts_[into[g]] += from.counts_[g];
  }
  ArrayPtr Finish(size_t group_count) override { return Counts(counts_, group_count); }

 private:
  std::vector<int64_t> counts_;
};

// sum, avg, min and max of an integer or float32/64 column, read in place.
template <typename T>
class NumericAccumulator final : public Accumulator {
  using Wide = std::conditional_t<std::is_floating_point_v<T>, double,
                                  std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

 public:
  NumericAccumulator(const Context& ctx, const AggregateCall& agg) : ctx_(ctx), agg_(agg) {
    const std::string& f = agg.call->function;
    kind_ = f == "sum" ? kSum : f == "avg" ? kAvg : f == "min" ? kMin : kMax;
  }
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    acc_.resize(group_count);
    sum_.resize(group_count);
    n_.resize(group_count);
    const T* values = a->values<T>();
    for (int64_t r = 0; r < a->length; ++r) {
      if (!a->IsValid(r)) continue;
      const uint32_t g = groups[size_t(r)];
      const Wide v = Wide(values[r]);
      if (kind_ == kAvg || (kind_ == kSum && std::is_floating_point_v<T>)) {
        sum_[g] += double(values[r]);
      } else if (kind_ == kSum) {
        if constexpr (std::is_integral_v<T>) {
          if (__builtin_add_overflow(acc_[g], v, &acc_[g]))
            ctx_.Fail(agg_.call->position, std::is_signed_v<T> ? "sum overflows int64" : "sum overflows uint64");
        }
      } else {
        Keep(g, v);
      }
      ++n_[g];
    }
  }
  bool Mergeable() const override { return true; }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    const auto& from = static_cast<const NumericAccumulator&>(other);
    acc_.resize(group_count);
    sum_.resize(group_count);
    n_.resize(group_count);
    for (size_t g = 0; g < from.n_.size(); ++g) {
      if (from.n_[g] == 0) continue;
      const uint32_t t = into[g];
      if (kind_ == kAvg || (kind_ == kSum && std::is_floating_point_v<T>)) {
        sum_[t] += from.sum_[g];
      } else if (kind_ == kSum) {
        if constexpr (std::is_integral_v<T>) {
          if (__builtin_add_overflow(acc_[t], from.acc_[g], &acc_[t]))
            ctx_.Fail(agg_.call->position, std::is_signed_v<T> ? "sum overflows int64" : "sum overflows uint64");
        }
      } else {
        Keep(t, from.acc_[g]);
      }
      n_[t] += from.n_[g];
    }
  }
  ArrayPtr Finish(size_t group_count) override {
    acc_.resize(group_count);
    sum_.resize(group_count);
    n_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t i) {
      const size_t g = size_t(i);
      if (n_[g] == 0) return Scalar::Null(agg_.type);
      if (kind_ == kAvg || (kind_ == kSum && std::is_floating_point_v<T>))
        return Scalar{agg_.type, kind_ == kAvg ? sum_[g] / double(n_[g]) : sum_[g]};
      return Scalar{agg_.type, acc_[g]};
    });
  }

 private:
  enum Kind { kSum, kAvg, kMin, kMax };
  // min / max: v replaces group g's value when it is better (of equal values the first).
  void Keep(uint32_t g, Wide v) {
    if (n_[g] == 0 || Before(kind_ == kMin ? v : acc_[g], kind_ == kMin ? acc_[g] : v)) acc_[g] = v;
  }
  // As CompareScalars orders values: NaN above every number.
  static bool Before(Wide x, Wide y) {
    if constexpr (std::is_floating_point_v<Wide>) return std::isnan(y) ? !std::isnan(x) : !std::isnan(x) && x < y;
    return x < y;
  }

  const Context& ctx_;
  const AggregateCall& agg_;
  Kind kind_;
  std::vector<Wide> acc_;
  std::vector<double> sum_;
  std::vector<int64_t> n_;
};

// min and max of any other comparable type: the best value so far.
class ExtremeAccumulator final : public Accumulator {
 public:
  ExtremeAccumulator(const AggregateCall& agg) : agg_(agg), min_(agg.call->function == "min") {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    best_.resize(group_count);
    for (int64_t r = 0; r < a->length; ++r) {
      if (a->IsNull(r)) continue;
      Keep(best_[groups[size_t(r)]], GetScalar(*a, r));
    }
  }
  bool Mergeable() const override { return true; }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    auto& from = static_cast<ExtremeAccumulator&>(other);
    best_.resize(group_count);
    for (size_t g = 0; g < from.best_.size(); ++g)
      if (from.best_[g]) Keep(best_[into[g]], std::move(*from.best_[g]));
  }
  ArrayPtr Finish(size_t group_count) override {
    best_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const auto& b = best_[size_t(g)];
      return b ? *b : Scalar::Null(agg_.type);
    });
  }

 private:
  void Keep(std::optional<Scalar>& best, Scalar v) const {
    if (!best || CompareScalars(v, *best) * (min_ ? 1 : -1) < 0) best = std::move(v);
  }

  const AggregateCall& agg_;
  bool min_;
  std::vector<std::optional<Scalar>> best_;
};

// arg_min(arg, val) / arg_max(arg, val), over the {val, arg} rows BindAggregate makes:
// arg at the group's first row of least (greatest) val. Rows where either is NULL are
// left out, as DuckDB's.
class ArgExtremeAccumulator final : public Accumulator {
 public:
  ArgExtremeAccumulator(const AggregateCall& agg) : agg_(agg), min_(agg.call->function == "arg_min") {}
  void Add(const ArrayData* pair, const std::vector<uint32_t>& groups, size_t group_count) override {
    best_.resize(group_count);
    const ArrayData& val = *pair->child(0);
    const ArrayData& arg = *pair->child(1);
    for (int64_t r = 0; r < pair->length; ++r) {
      if (pair->IsNull(r) || val.IsNull(r) || arg.IsNull(r)) continue;
      auto& best = best_[groups[size_t(r)]];
      Scalar v = GetScalar(val, r);
      if (!best || CompareScalars(v, best->first) * (min_ ? 1 : -1) < 0) best.emplace(std::move(v), GetScalar(arg, r));
    }
  }
  ArrayPtr Finish(size_t group_count) override {
    best_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const auto& b = best_[size_t(g)];
      return b ? b->second : Scalar::Null(agg_.type);
    });
  }

 private:
  const AggregateCall& agg_;
  bool min_;
  std::vector<std::optional<std::pair<Scalar, Scalar>>> best_;  // per group: (val, arg)
};

// stddev and variance: Welford's running mean and sum of squared deviations.
class StatisticAccumulator final : public Accumulator {
 public:
  explicit StatisticAccumulator(const AggregateCall& agg) : agg_(agg) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    state_.resize(group_count);
    ForEachDouble(*a, [&](int64_t r, double x) {
      State& s = state_[groups[size_t(r)]];
      ++s.n;
      const double delta = x - s.mean;
      s.mean += delta / double(s.n);
      s.m2 += delta * (x - s.mean);
    });
  }
  bool Mergeable() const override { return true; }
  // Chan et al.'s pairwise update of the count, mean and squared deviations.
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    const auto& from = static_cast<const StatisticAccumulator&>(other);
    state_.resize(group_count);
    for (size_t g = 0; g < from.state_.size(); ++g) {
      const State& b = from.state_[g];
      if (b.n == 0) continue;
      State& a = state_[into[g]];
      const int64_t n = a.n + b.n;
      const double delta = b.mean - a.mean;
      a.mean += delta * double(b.n) / double(n);
      a.m2 += b.m2 + delta * delta * double(a.n) * double(b.n) / double(n);
      a.n = n;
    }
  }
  ArrayPtr Finish(size_t group_count) override {
    state_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const State& s = state_[size_t(g)];
      return Statistic(agg_.call->function, agg_.type, s.n, s.m2);
    });
  }

 private:
  struct State {
    int64_t n = 0;
    double mean = 0, m2 = 0;
  };
  const AggregateCall& agg_;
  std::vector<State> state_;
};

// median: the group's values as doubles (a median needs them all).
class MedianAccumulator final : public Accumulator {
 public:
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    held_ += (group_count - values_.size()) * sizeof values_[0];
    values_.resize(group_count);
    ForEachDouble(*a, [&](int64_t r, double x) {
      values_[groups[size_t(r)]].push_back(x);
      held_ += 2 * sizeof x;  // vectors grow by doubling
    });
  }
  uint64_t HeldBytes() const override { return held_; }
  bool Mergeable() const override { return true; }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    auto& from = static_cast<MedianAccumulator&>(other);
    values_.resize(group_count);
    for (size_t g = 0; g < from.values_.size(); ++g) {
      std::vector<double>& to = values_[into[g]];
      if (to.empty()) to.swap(from.values_[g]);
      else to.insert(to.end(), from.values_[g].begin(), from.values_[g].end());
      std::vector<double>().swap(from.values_[g]);
    }
    held_ += from.held_;
  }
  ArrayPtr Finish(size_t group_count) override {
    values_.resize(group_count);
    FixedWidthBuilder<double> out(DataType::Float64());
    for (auto& x : values_) {
      if (x.empty()) {
        out.AppendNull();
        continue;
      }
      // NaN above every number, as ORDER BY and DuckDB order it (a bare < is no strict
      // weak order with NaN, and nth_element then picks an arbitrary value).
      auto less = [](double p, double q) { return std::isnan(q) ? !std::isnan(p) : p < q; };
      const size_t m = x.size() / 2;
      std::nth_element(x.begin(), x.begin() + ptrdiff_t(m), x.end(), less);
      double middle = x[m];
      if (x.size() % 2 == 0) middle = (*std::max_element(x.begin(), x.begin() + ptrdiff_t(m), less) + middle) / 2;
      out.Append(middle);
    }
    return out.Finish();
  }

 private:
  std::vector<std::vector<double>> values_;
  uint64_t held_ = 0;
};

// bool_and / bool_or: false (true) once any value is.
class BoolAccumulator final : public Accumulator {
 public:
  explicit BoolAccumulator(const AggregateCall& agg) : agg_(agg), all_(agg.call->function == "bool_and") {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    state_.resize(group_count, kNone);
    for (int64_t r = 0; r < a->length; ++r) {
      if (a->IsNull(r)) continue;
      int8_t& s = state_[groups[size_t(r)]];
      const bool v = GetBit(a->buffers[1]->data(), r);
      if (s == kNone) s = int8_t(all_);
      if (v != all_) s = int8_t(!all_);
    }
  }
  bool Mergeable() const override { return true; }
  void Merge(Accumulator& other, const std::vector<uint32_t>& into, size_t group_count) override {
    const auto& from = static_cast<const BoolAccumulator&>(other);
    state_.resize(group_count, kNone);
    for (size_t g = 0; g < from.state_.size(); ++g) {
      int8_t& s = state_[into[g]];
      if (from.state_[g] == kNone) continue;
      if (s == kNone || from.state_[g] == int8_t(!all_)) s = from.state_[g];
    }
  }
  ArrayPtr Finish(size_t group_count) override {
    state_.resize(group_count, kNone);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const int8_t s = state_[size_t(g)];
      return s == kNone ? Scalar::Null(agg_.type) : Scalar{agg_.type, s == 1};
    });
  }

 private:
  static constexpr int8_t kNone = -1;
  const AggregateCall& agg_;
  bool all_;
  std::vector<int8_t> state_;
};

// string_agg: the values joined so far, in row order.
class StringAggAccumulator final : public Accumulator {
 public:
  StringAggAccumulator(const AggregateCall& agg, std::string separator) : agg_(agg), separator_(std::move(separator)) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    joined_.resize(group_count);
    for (int64_t r = 0; r < a->length; ++r) {
      if (a->IsNull(r)) continue;
      auto& j = joined_[groups[size_t(r)]];
      if (j) *j += separator_;
      else j.emplace();
      *j += a->GetView(r);
      held_ += separator_.size() + a->GetView(r).size();
    }
  }
  uint64_t HeldBytes() const override { return held_; }
  ArrayPtr Finish(size_t group_count) override {
    joined_.resize(group_count);
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const auto& j = joined_[size_t(g)];
      return j ? Scalar{agg_.type, *j} : Scalar::Null(agg_.type);
    });
  }

 private:
  const AggregateCall& agg_;
  std::string separator_;
  std::vector<std::optional<std::string>> joined_;
  uint64_t held_ = 0;
};

// Input arrays an accumulator keeps whole, and the rows it has seen: a group's rows are
// numbers into their concatenation.
struct KeptArrays {
  std::vector<ArrayPtr> arrays;
  int64_t rows = 0;
  // Keeps `a` (after its rows are numbered from `rows`); adds what it takes to `held`.
  void Keep(const ArrayData& a, uint64_t& held) {
    arrays.push_back(std::make_shared<ArrayData>(a));
    rows += a.length;
    held += BufferBytes(a);
  }
  // Every kept row, in order (an empty array of `type` when none was kept).
  ArrayPtr All(const TypePtr& type) const {
    return arrays.empty() ? MakeEmptyArray(type) : arrays.size() == 1 ? arrays[0] : Concatenate(arrays);
  }
};

// A list per group: group g's items are values[rows[g]...], in that order; NULL for a
// group without rows.
ArrayPtr ListsOf(const TypePtr& type, const ArrayData& values, const std::vector<std::vector<int64_t>>& rows,
                 const std::string& function) {
  std::vector<int64_t> take;
  auto offsets = Buffer::Allocate((rows.size() + 1) * sizeof(int32_t));
  ValidityBuilder valid;
  for (size_t g = 0; g < rows.size(); ++g) {
    take.insert(take.end(), rows[g].begin(), rows[g].end());
    if (take.size() > size_t(INT32_MAX)) ThrowInvalid("{}: more than {} values in one result", function, INT32_MAX);
    offsets->mutable_as<int32_t>()[g + 1] = int32_t(take.size());
    valid.Append(!rows[g].empty());
  }
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = int64_t(rows.size());
  out->null_count = valid.null_count();
  out->buffers = {valid.Finish(), offsets};
  out->children = {Take(values, take)};
  return out;
}

// list / array_agg / string_agg with an ORDER BY inside the call, over the {value, key, ...}
// rows BindAggregate makes: each group's rows are kept (indices into the kept arrays) and
// sorted by the keys at the end, stably (rows with equal keys stay in row order), then
// listed (NULL values kept) or joined (NULL values left out); under DISTINCT a value
// counts at its first place in that order.
class OrderedAccumulator final : public Accumulator {
 public:
  // `separator`: string_agg's, else the result is a list.
  OrderedAccumulator(const AggregateCall& agg, std::optional<std::string> separator)
      : agg_(agg), separator_(std::move(separator)) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    rows_.resize(group_count);
    for (int64_t r = 0; r < a->length; ++r) {
      if (separator_ && a->child(0)->IsNull(r)) continue;
      rows_[groups[size_t(r)]].push_back(kept_.rows + r);
      held_ += sizeof(int64_t);
    }
    kept_.Keep(*a, held_);
  }
  uint64_t HeldBytes() const override { return held_; }
  ArrayPtr Finish(size_t group_count) override {
    rows_.resize(group_count);
    const AggregateOrder& order = *agg_.call->order;
    const ArrayPtr all = kept_.arrays.empty() ? nullptr : kept_.All(nullptr);
    // ORDER BY's rule (sort.h's RowOrder) over the kept rows' key columns.
    std::vector<OrderItem> items(order.descending.size());
    std::vector<ArrayPtr> keys;
    for (size_t k = 0; k < items.size(); ++k) {
      items[k].descending = order.descending[k];
      items[k].nulls_first = order.nulls_first[k];
      if (all) keys.push_back(all->child(1 + k));
    }
    std::optional<RowOrder> rows_order;
    if (all) rows_order.emplace(keys, keys, items);
    for (auto& rows : rows_) {
      std::stable_sort(rows.begin(), rows.end(), [&](int64_t x, int64_t y) { return rows_order->Before(x, y); });
      if (agg_.call->distinct) {
        std::unordered_set<std::string> seen;
        std::erase_if(rows, [&](int64_t r) { return !seen.insert(ValueKey(*all->child(0), r)).second; });
      }
    }
    if (!separator_) {
      const ArrayPtr values = all ? all->child(0) : MakeEmptyArray(agg_.type->child(0)->type);
      return ListsOf(agg_.type, *values, rows_, agg_.call->function);
    }
    return RowWise(agg_.type, int64_t(group_count), [&](int64_t g) {
      const auto& rows = rows_[size_t(g)];
      if (rows.empty()) return Scalar::Null(agg_.type);
      std::string joined;
      for (size_t k = 0; k < rows.size(); ++k) (joined += k ? *separator_ : "") += all->child(0)->GetView(rows[k]);
      return Scalar{agg_.type, std::move(joined)};
    });
  }

 private:
  const AggregateCall& agg_;
  std::optional<std::string> separator_;
  std::vector<std::vector<int64_t>> rows_;  // per group: rows of the kept arrays, concatenated
  KeptArrays kept_;
  uint64_t held_ = 0;
};

// list / array_agg: each group's values in row order, NULLs included, as DuckDB's; under
// DISTINCT each value's first row (NULL among them: DuckDB's order there is its hash
// table's). A group with no rows is NULL. The
// input arrays are kept (their buffers shared) and the lists gathered from them at the end.
class ListAccumulator final : public Accumulator {
 public:
  explicit ListAccumulator(const AggregateCall& agg) : agg_(agg) {}
  void Add(const ArrayData* a, const std::vector<uint32_t>& groups, size_t group_count) override {
    rows_.resize(group_count);
    if (agg_.call->distinct) seen_.resize(group_count);
    bool used = false;
    for (int64_t r = 0; r < a->length; ++r) {
      const uint32_t g = groups[size_t(r)];
      if (agg_.call->distinct) {
        auto [at, added] = seen_[g].insert(ValueKey(*a, r));
        if (!added) continue;
        held_ += 96 + at->size();  // as ValuesAccumulator's set
      }
      rows_[g].push_back(kept_.rows + r);
      held_ += 2 * sizeof(int64_t);
      used = true;
    }
    if (used) kept_.Keep(*a, held_);
  }
  uint64_t HeldBytes() const override { return held_; }
  ArrayPtr Finish(size_t group_count) override {
    rows_.resize(group_count);
    return ListsOf(agg_.type, *kept_.All(agg_.type->child(0)->type), rows_, agg_.call->function);
  }

 private:
  const AggregateCall& agg_;
  std::vector<std::vector<int64_t>> rows_;  // per group: rows of the kept arrays, concatenated
  std::vector<std::unordered_set<std::string>> seen_;
  KeptArrays kept_;
  uint64_t held_ = 0;
};

}  // namespace

std::unique_ptr<Accumulator> MakeAccumulator(const Context& ctx, const AggregateCall& agg) {
  const Expr& call = *agg.call;
  const std::string& f = call.function;
  if (!agg.argument) return std::make_unique<CountAccumulator>();
  if (call.order && IsOrderSensitive(f))
    return std::make_unique<OrderedAccumulator>(agg, f == "string_agg" ? std::optional<std::string>(AggregateSeparator(ctx, call))
                                                                       : std::nullopt);
  if (IsListAggregate(f)) return std::make_unique<ListAccumulator>(agg);
  if (call.distinct && f == "count") return std::make_unique<CountDistinctAccumulator>(agg);
  if (call.distinct) return std::make_unique<ValuesAccumulator>(ctx, agg);
  if (f == "count") return std::make_unique<CountAccumulator>();
  const DataType& arg = *agg.argument->type;
  const bool in_place = arg.is_integer() || arg.id() == TypeId::kFloat32 || arg.id() == TypeId::kFloat64;
  if (in_place && (f == "sum" || f == "avg" || f == "min" || f == "max")) {
    return VisitStorage(arg.id(), [&](auto tag) -> std::unique_ptr<Accumulator> {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) return std::make_unique<NumericAccumulator<T>>(ctx, agg);
      ThrowNotSupported("no in-place aggregate over {}", arg.ToString());  // excluded above
    });
  }
  if (f == "min" || f == "max") return std::make_unique<ExtremeAccumulator>(agg);
  if (IsArgExtreme(f)) return std::make_unique<ArgExtremeAccumulator>(agg);
  if (IsStatistic(f)) return std::make_unique<StatisticAccumulator>(agg);
  if (f == "median") return std::make_unique<MedianAccumulator>();
  if (f == "bool_and" || f == "bool_or") return std::make_unique<BoolAccumulator>(agg);
  if (f == "string_agg") return std::make_unique<StringAggAccumulator>(agg, AggregateSeparator(ctx, call));
  return std::make_unique<ValuesAccumulator>(ctx, agg);  // sum and avg of float16
}

KeyForm KeyFormOf(const DataType& type) {
  const TypeId id = type.id();
  if (type.is_integer() || id == TypeId::kDate32 || id == TypeId::kDate64 || id == TypeId::kTimestamp)
    return KeyForm::kBits;
  if (id == TypeId::kUtf8 || id == TypeId::kLargeUtf8 || id == TypeId::kBinary || id == TypeId::kLargeBinary)
    return KeyForm::kBytes;
  if (type.is_floating()) return KeyForm::kFloat;
  return KeyForm::kText;
}

int64_t KeyBits(const ArrayData& a, int64_t r) {
  return VisitStorage(a.type->id(), [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) return int64_t(a.values<T>()[r]);
    return 0;  // not a kBits type
  });
}

std::vector<int64_t> KeyBitsColumn(const ArrayData& a) {
  std::vector<int64_t> bits(size_t(a.length));
  VisitStorage(a.type->id(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T* values = a.values<T>();
      for (int64_t r = 0; r < a.length; ++r) bits[size_t(r)] = int64_t(values[r]);
    }
  });
  return bits;
}

ByteViews::ByteViews(const ArrayData& a) : data_(reinterpret_cast<const char*>(a.buffers[2]->data())) {
  if (a.type->has_large_offsets()) wide_ = a.buffers[1]->as<int64_t>();
  else narrow_ = a.buffers[1]->as<int32_t>();
}

void AppendKey(std::string& key, const ArrayData& a, int64_t r, KeyForm form) {
  if (a.IsNull(r)) {
    key += '\x01';
    return;
  }
  switch (form) {
    case KeyForm::kText:
      key += ValueKey(a, r);
      key += '\0';
      return;
    case KeyForm::kBytes: {
      const std::string_view bytes = a.GetView(r);
      const uint64_t size = bytes.size();
      char head[9] = {'\x02'};
      std::memcpy(head + 1, &size, 8);
      key.append(head, 9);
      key.append(bytes);
      return;
    }
    case KeyForm::kBits: {
      const int64_t bits = KeyBits(a, r);
      char bytes[9] = {'\x02'};
      std::memcpy(bytes + 1, &bits, 8);
      key.append(bytes, 9);
      return;
    }
    case KeyForm::kFloat: {
      double value = VisitStorage(a.type->id(), [&](auto tag) -> double {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, Half> || std::is_floating_point_v<T>) return ToDomain<double>(a.values<T>()[r]);
        return 0;  // not a kFloat type
      });
      // Values SQL calls equal key alike: -0.0 as 0.0, and every NaN as one (NaN = NaN here).
      if (value == 0) value = 0;
      if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
      char bytes[9] = {'\x02'};
      std::memcpy(bytes + 1, &value, 8);
      key.append(bytes, 9);
      return;
    }
  }
}

namespace {

// A fast hash of short byte strings: 8 bytes a step, mixed by multiply and shift.
// a == b, inline for keys up to 16 bytes (two loads a side, overlapping when shorter):
// group keys are mostly short, and a call to memcmp cost as much as the hash.
bool SameBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  auto load8 = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  auto load4 = [](const char* p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  };
  if (n > 16) return std::memcmp(a.data(), b.data(), n) == 0;
  if (n >= 8)
    return ((load8(a.data()) ^ load8(b.data())) | (load8(a.data() + n - 8) ^ load8(b.data() + n - 8))) == 0;
  if (n >= 4) return ((load4(a.data()) ^ load4(b.data())) | (load4(a.data() + n - 4) ^ load4(b.data() + n - 4))) == 0;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

uint64_t HashKey(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&tail, s.data() + s.size() - 8, 8);  // the last 8 bytes, overlapping
  } else {
    for (size_t k = 0; k < s.size(); ++k) tail |= uint64_t(uint8_t(s[k])) << (8 * k);
  }
  h = (h ^ tail) * 0x94d049bb133111ebull;
  return h ^ (h >> 29);
}

}  // namespace

uint64_t KeyNumbering::Hash(std::string_view key) { return HashKey(key); }

std::pair<uint32_t, bool> KeyNumbering::Number(std::string_view key, uint64_t hash) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(hash);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.number_plus_one == 0) {
      if (blocks_.empty() || block_used_ + key.size() > block_size_) {
        block_size_ = std::max<size_t>(key.size(), 1 << 16);
        blocks_.push_back(std::make_unique<char[]>(block_size_));
        block_bytes_ += block_size_;
        block_used_ = 0;
      }
      char* copy = blocks_.back().get() + block_used_;
      std::memcpy(copy, key.data(), key.size());
      block_used_ += key.size();
      keys_.emplace_back(copy, key.size());
      slot = {hash, uint32_t(keys_.size())};
      if (2 * keys_.size() > slots_.size()) Grow();
      return {uint32_t(keys_.size() - 1), true};
    }
    if (slot.hash == hash && SameBytes(keys_[slot.number_plus_one - 1], key)) return {slot.number_plus_one - 1, false};
  }
}

std::optional<uint32_t> KeyNumbering::Find(std::string_view key) const {
  const uint64_t hash = HashKey(key);
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(hash);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.number_plus_one == 0) return std::nullopt;
    if (slot.hash == hash && SameBytes(keys_[slot.number_plus_one - 1], key)) return slot.number_plus_one - 1;
  }
}

void KeyNumbering::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  --shift_;
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.number_plus_one == 0) continue;
    size_t i = Home(slot.hash);
    while (slots_[i].number_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

bool ContainsAggregate(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::kCall && IsAggregateName(e->function) && !e->window) return true;
  return std::any_of(e->args.begin(), e->args.end(), ContainsAggregate);
}

AggregateCall BindAggregate(const Context& ctx, const ExprPtr& call, const Schema& input) {
  const Expr& e = *call;
  const size_t arguments = ArgumentCount(e);
  if (e.function == "string_agg" && (arguments == 1 || arguments == 2)) {
    AggregateSeparator(ctx, e);  // checked before any row is read
  } else if (IsQuantile(e.function) && arguments == 2) {
    QuantileFraction(ctx, e);
  } else if (IsQuantile(e.function)) {
    ctx.Fail(e.position, fmt::format("{} takes two arguments: a value and a fraction from 0 to 1", e.function));
  } else if (IsArgExtreme(e.function)) {
    if (arguments != 2 || e.star_argument)
      ctx.Fail(e.position, fmt::format("{} takes two arguments: the value to return and the one to compare", e.function));
  } else if (!e.star_argument && arguments != 1) {
    ctx.Fail(e.position, fmt::format("{} takes exactly one argument", e.function));
  }
  AggregateCall agg;
  agg.call = call;
  if (e.function == "approx_count_distinct") {  // exact here: count(DISTINCT x)
    auto exact = std::make_shared<Expr>(e);
    exact->function = "count";
    exact->distinct = true;
    agg.call = exact;
  }
  if (e.order && IsOrderSensitive(e.function)) {
    // One argument for the aggregation: the row {value, key, ...}; the type is the value's.
    const size_t keys = e.order->descending.size(), first_key = e.args.size() - keys - (e.has_filter ? 1 : 0);
    auto row = std::make_shared<Expr>(*e.args[0]);
    row->kind = ExprKind::kCall;
    row->function = "__values";
    row->args = {e.args[0]};
    row->args.insert(row->args.end(), e.args.begin() + long(first_key), e.args.begin() + long(first_key + keys));
    row->position = e.position;
    agg.argument = Bind(*row, input);
    agg.type = AggregateType(ctx, e, agg.argument->type->child(0)->type);
  } else if (IsArgExtreme(e.function)) {  // one argument for the aggregation: the pair {val, arg}
    auto pair = std::make_shared<Expr>(*e.args[1]);
    pair->kind = ExprKind::kCall;
    pair->function = "__values";
    pair->args = {e.args[1], e.args[0]};
    pair->position = e.position;
    agg.argument = Bind(*pair, input);
  } else if (!e.star_argument) {
    agg.argument = Bind(*e.args[0], input);
  }
  if (!agg.type) agg.type = AggregateType(ctx, *agg.call, agg.argument ? agg.argument->type : nullptr);
  if (e.has_filter) {
    agg.filter = Bind(*e.args.back(), input);
    if (!agg.filter->type) agg.filter = Bind(*Expr::Cast(e.args.back(), DataType::Bool()), input);  // a bare NULL
    if (agg.filter->type->id() != TypeId::kBool)
      ctx.Fail(e.args.back()->position,
               fmt::format("FILTER (WHERE ...) needs a boolean condition, not {}", agg.filter->type->ToString()));
  }
  return agg;
}

// The group of a row that went to a spill partition, in row_groups_.
constexpr uint32_t kSpilled = UINT32_MAX;

HashAggregate::HashAggregate(const Context& ctx, std::vector<BoundExprPtr> keys, std::vector<AggregateCall> aggregates,
                             int depth)
    : ctx_(ctx), keys_(std::move(keys)), aggregates_(std::move(aggregates)), depth_(depth) {
  for (const auto& k : keys_) key_values_.push_back(ArrayBuilder::Make(k->type));
  for (const auto& a : aggregates_) accumulators_.push_back(MakeAccumulator(ctx_, a));
  if (keys_.empty()) groups_ = 1;
}

HashAggregate::~HashAggregate() = default;

void HashAggregate::Add(const RecordBatch& batch, uint64_t sequence) {
  const int64_t rows = batch.num_rows();
  row_groups_.assign(size_t(rows), 0);
  std::vector<ArrayPtr> keys, arguments;
  std::vector<int64_t> spilled;
  std::vector<uint64_t> spilled_hashes;
  std::vector<std::vector<int64_t>> selected(aggregates_.size());  // [i]: the rows FILTER holds for
  for (size_t i = 0; i < aggregates_.size(); ++i) {
    const AggregateCall& a = aggregates_[i];
    arguments.push_back(a.argument ? Evaluate(*a.argument, batch) : nullptr);
    if (a.filter) selected[i] = EvaluateSelection(*a.filter, batch);
  }
  if (!keys_.empty()) {
    std::vector<KeyForm> forms;
    for (const auto& k : keys_) {
      keys.push_back(Evaluate(*k, batch));
      forms.push_back(KeyFormOf(*k->type));
    }
    // A group's number, made on its first row.
    auto new_group = [&](int64_t r, size_t key_bytes) { return NewGroup(keys, r, key_bytes, sequence << 32 | uint64_t(r)); };
    // A batch that comes after later ones (AddShared's leftovers) may see a group first.
    auto seen_again = [&](uint32_t group, int64_t r) {
      if (early_batches_) first_seen_[group] = std::min(first_seen_[group], sequence << 32 | uint64_t(r));
    };
    auto spill = [&](int64_t r, std::string_view key) {
      row_groups_[size_t(r)] = kSpilled;
      spilled.push_back(r);
      spilled_hashes.push_back(std::hash<std::string_view>{}(key));
    };
    // One key column of bits or bytes is keyed by its raw value, NULL apart.
    const bool raw = keys.size() == 1 && (forms[0] == KeyForm::kBits || forms[0] == KeyForm::kBytes);
    std::optional<ByteViews> raw_bytes;
    std::vector<int64_t> raw_bits;
    if (raw && forms[0] == KeyForm::kBytes) raw_bytes.emplace(*keys[0]);
    if (raw && forms[0] == KeyForm::kBits) raw_bits = KeyBitsColumn(*keys[0]);
    for (int64_t r = 0; r < rows; ++r) {
      std::string_view key;
      int64_t bits;
      if (!raw) {
        key_.clear();
        for (size_t j = 0; j < keys.size(); ++j) AppendKey(key_, *keys[j], r, forms[j]);
        key = key_;
      } else if (keys[0]->IsNull(r)) {
        if (null_group_ < 0 && full_) spill(r, {});
        else if (null_group_ < 0) row_groups_[size_t(r)] = uint32_t(null_group_ = new_group(r, 0));
        else seen_again(row_groups_[size_t(r)] = uint32_t(null_group_), r);
        continue;
      } else if (raw_bytes) {
        key = (*raw_bytes)[r];
      } else {
        bits = raw_bits[size_t(r)];
        key = std::string_view(reinterpret_cast<const char*>(&bits), sizeof bits);
      }
      if (full_) {
        if (const auto number = group_of_.Find(key)) seen_again(row_groups_[size_t(r)] = group_of_number_[*number], r);
        else spill(r, key);
        continue;
      }
      const auto [number, added] = group_of_.Number(key);
      if (added) group_of_number_.push_back(new_group(r, key.size()));
      else seen_again(group_of_number_[number], r);
      row_groups_[size_t(r)] = group_of_number_[number];
    }
  }
  if (!spilled.empty()) {
    std::vector<ArrayPtr> filters;  // the FILTER values, for the rows' second pass
    for (const auto& a : aggregates_) filters.push_back(a.filter ? Evaluate(*a.filter, batch) : nullptr);
    Spill(keys, arguments, filters, spilled, spilled_hashes);
  }
  for (size_t i = 0; i < aggregates_.size(); ++i)
    Accumulate(i, arguments[i], aggregates_[i].filter ? &selected[i] : nullptr, !spilled.empty());
  StopNewGroupsPastBudget();
}

uint32_t HashAggregate::NewGroup(const std::vector<ArrayPtr>& keys, int64_t row, size_t key_bytes,
                                 uint64_t first_seen) {
  for (size_t j = 0; j < keys.size(); ++j) key_values_[j]->AppendFrom(*keys[j], row);
  if (keep_first_seen_) first_seen_.push_back(first_seen);
  // What a group costs beyond its key's bytes (counted twice: the numbering's copy and
  // the key column's): hash slots at most half full, the key columns' value slots, the
  // aggregates' state; growing vectors double, so up to twice that.
  held_bytes_ += 2 * (32 + 12 * keys.size() + 24 * aggregates_.size()) + 2 * key_bytes;
  const uint64_t budget = uint64_t(std::max<int64_t>(ctx_.memory_budget, 1)) / 2;
  if (share_of_ > 0) over_share_ |= held_bytes_ > budget / share_of_;
  else if (held_bytes_ > budget && depth_ < kMaxSpillDepth) full_ = true;
  return uint32_t(groups_++);
}

bool HashAggregate::Mergeable() const {
  return std::all_of(accumulators_.begin(), accumulators_.end(), [](const auto& a) { return a->Mergeable(); });
}

void HashAggregate::Merge(HashAggregate& other) {
  merged_ = true;
  std::vector<uint32_t> into(other.groups_, 0);
  if (!keys_.empty()) {
    std::vector<ArrayPtr> keys;
    for (auto& values : other.key_values_) keys.push_back(values->Finish());
    auto join = [&](uint32_t from, int64_t& group, bool added, size_t key_bytes) {
      const uint64_t seen = other.first_seen_[from];
      if (added) group = NewGroup(keys, int64_t(from), key_bytes, seen);
      else first_seen_[size_t(group)] = std::min(first_seen_[size_t(group)], seen);
      into[from] = uint32_t(group);
    };
    for (uint32_t n = 0; n < other.group_of_.size(); ++n) {
      const std::string_view key = other.group_of_.Key(n);
      const auto [number, added] = group_of_.Number(key);
      int64_t group = added ? -1 : int64_t(group_of_number_[number]);
      join(other.group_of_number_[n], group, added, key.size());
      if (added) group_of_number_.push_back(uint32_t(group));
    }
    if (other.null_group_ >= 0) {
      const bool added = null_group_ < 0;
      join(uint32_t(other.null_group_), null_group_, added, 0);
    }
  }
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->Merge(*other.accumulators_[i], into, groups_);
}

std::vector<std::unique_ptr<HashAggregate>> HashAggregate::StartParts(int threads) {
  // One share more than there are parts: merging a part copies its groups into this one
  // while the part still holds them.
  share_of_ = size_t(threads) + 1;
  if (!std::exchange(keep_first_seen_, true) && keys_.empty()) first_seen_.assign(groups_, 0);
  std::vector<std::unique_ptr<HashAggregate>> parts;
  for (int t = 1; t < threads; ++t) {
    parts.push_back(std::make_unique<HashAggregate>(ctx_, keys_, aggregates_));
    parts.back()->share_of_ = share_of_;
    parts.back()->keep_first_seen_ = true;
    if (keys_.empty()) parts.back()->first_seen_.assign(1, 0);
  }
  return parts;
}

void HashAggregate::MergeParts(std::vector<std::unique_ptr<HashAggregate>>& parts) {
  for (auto& part : parts) {
    Merge(*part);
    part.reset();  // its memory goes before the next part's groups are copied
  }
  // Past the parallel phase the budget is this aggregate's alone.
  share_of_ = 0;
  over_share_ = false;
  if (held_bytes_ > uint64_t(std::max<int64_t>(ctx_.memory_budget, 1)) / 2 && depth_ < kMaxSpillDepth) full_ = true;
  StopNewGroupsPastBudget();
}

void HashAggregate::AddAll(RecordBatchReader& input) {
  const int threads = ReadAheadThreads();
  if (threads < 2 || depth_ > 0 || !Mergeable()) {
    while (auto batch = input.Next()) Add(*batch);
    return;
  }
  if (SharedSource* shared = SharedSourceOf(input)) return AddShared(*shared, threads);
  // An input of one batch stays on this thread.
  RecordBatchPtr pending = input.Next();
  if (!pending) return;
  keep_first_seen_ = true;
  if (keys_.empty()) first_seen_.assign(groups_, 0);
  RecordBatchPtr second = input.Next();
  Add(*pending, 0);
  if (!second) return;
  if (full_) {  // past the whole budget already: spilling parts could not merge
    Add(*second, 1);
    for (uint64_t sequence = 2; auto batch = input.Next(); ++sequence) Add(*batch, sequence);
    return;
  }
  pending = std::move(second);
  std::vector<std::unique_ptr<HashAggregate>> parts = StartParts(threads);
  std::mutex mutex;
  uint64_t next_sequence = 1;
  bool stop = false, ended = false;
  std::exception_ptr error;
  uint64_t error_sequence = UINT64_MAX;
  auto fail = [&](uint64_t sequence) {  // under the lock: the earliest batch's error wins
    if (sequence < error_sequence) error = std::current_exception(), error_sequence = sequence;
    stop = true;
  };
  auto work = [&](HashAggregate& part) {
    for (;;) {
      RecordBatchPtr batch;
      uint64_t sequence;
      {
        std::lock_guard lock(mutex);
        if (stop) return;
        sequence = next_sequence++;
        try {
          batch = pending ? std::exchange(pending, nullptr) : input.Next();
        } catch (...) {
          return fail(sequence);
        }
        if (!batch) {
          stop = ended = true;
          return;
        }
      }
      try {
        part.Add(*batch, sequence);
      } catch (...) {
        std::lock_guard lock(mutex);
        return fail(sequence);
      }
      if (part.over_share_) {
        std::lock_guard lock(mutex);
        stop = true;
        return;
      }
    }
  };
  RunOnThreads(parts.size() + 1, [&](size_t t) { work(t == 0 ? *this : *parts[t - 1]); });
  if (error) std::rethrow_exception(error);
  MergeParts(parts);
  if (ended) return;
  while (auto batch = input.Next()) Add(*batch, next_sequence++);
}

void HashAggregate::AddShared(SharedSource& source, int threads) {
  std::vector<std::unique_ptr<HashAggregate>> parts = StartParts(threads);
  std::vector<SharedPiece> pieces(static_cast<size_t>(threads));  // [thread]: the piece it read last
  std::vector<size_t> added(size_t(threads), 0);     // [thread]: batches of that piece added
  std::mutex mutex;
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  uint64_t error_position = UINT64_MAX;
  auto fail = [&](uint64_t position) {  // the earliest batch's error wins
    std::lock_guard lock(mutex);
    if (position < error_position) error = std::current_exception(), error_position = position;
    stop = true;
  };
  RunOnThreads(size_t(threads), [&](size_t t) {
    HashAggregate& part = t == 0 ? *this : *parts[t - 1];
    SharedPiece& piece = pieces[t];
    while (!stop) {
      try {
        added[t] = 0;
        if (!source.NextPiece(piece)) return;
      } catch (...) {
        return fail(piece.first_position);
      }
      for (; added[t] < piece.batches.size() && !stop; ++added[t]) {
        try {
          part.Add(*piece.batches[added[t]], piece.positions[added[t]]);
        } catch (...) {
          return fail(piece.positions[added[t]]);
        }
        if (part.over_share_) stop = true;
      }
    }
  });
  if (error) std::rethrow_exception(error);
  MergeParts(parts);
  // A part past its share stopped the threads: the batches of their pieces not added yet
  // come first, in order; the groups merged may hold rows of later batches, so a group's
  // first appearance may be among these (early_batches_).
  std::vector<std::pair<uint64_t, RecordBatchPtr>> rest;
  for (size_t t = 0; t < pieces.size(); ++t)
    for (size_t b = std::min(added[t], pieces[t].batches.size()); b < pieces[t].batches.size(); ++b)
      rest.emplace_back(pieces[t].positions[b], std::move(pieces[t].batches[b]));
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  early_batches_ = true;
  for (auto& [position, batch] : rest) Add(*batch, position);
  early_batches_ = false;
  SharedPiece piece;
  while (source.NextPiece(piece))
    for (size_t b = 0; b < piece.batches.size(); ++b) Add(*piece.batches[b], piece.positions[b]);
}

// Hands aggregate i the rows of the batch in row_groups_ that it takes: those held (not
// spilled) and, under FILTER, `selected` (ascending).
void HashAggregate::Accumulate(size_t i, const ArrayPtr& argument, const std::vector<int64_t>* selected,
                               bool any_spilled) {
  if (!selected && !any_spilled) return accumulators_[i]->Add(argument.get(), row_groups_, groups_);
  std::vector<int64_t> kept;
  std::vector<uint32_t> kept_groups;
  auto keep = [&](int64_t r) {
    if (row_groups_[size_t(r)] == kSpilled) return;
    kept.push_back(r);
    kept_groups.push_back(row_groups_[size_t(r)]);
  };
  if (selected) {
    for (const int64_t r : *selected) keep(r);
  } else {
    for (size_t r = 0; r < row_groups_.size(); ++r) keep(int64_t(r));
  }
  const ArrayPtr taken = argument ? Take(*argument, kept) : nullptr;
  accumulators_[i]->Add(taken.get(), kept_groups, groups_);
}

// The values that median, string_agg and DISTINCT keep count against the budget too: past
// it, rows of new groups spill. (The groups held keep growing: a group is never split.)
void HashAggregate::StopNewGroupsPastBudget() {
  if (full_ || keys_.empty() || depth_ >= kMaxSpillDepth) return;
  uint64_t values = 0;
  for (const auto& a : accumulators_) values += a->HeldBytes();
  const uint64_t budget = uint64_t(std::max<int64_t>(ctx_.memory_budget, 1)) / 2;
  if (share_of_ > 0) over_share_ |= held_bytes_ + values > budget / share_of_;
  else if (held_bytes_ + values > budget) full_ = true;
}

void HashAggregate::Spill(const std::vector<ArrayPtr>& keys, const std::vector<ArrayPtr>& arguments,
                          const std::vector<ArrayPtr>& filters, const std::vector<int64_t>& rows,
                          const std::vector<uint64_t>& hashes) {
  if (!spill_schema_) {
    std::vector<FieldPtr> fields;
    for (size_t j = 0; j < keys_.size(); ++j) fields.push_back(Field::Make(fmt::format("__k{}", j), keys_[j]->type));
    for (size_t i = 0; i < aggregates_.size(); ++i)
      if (aggregates_[i].argument)
        fields.push_back(Field::Make(fmt::format("__a{}", i), aggregates_[i].argument->type));
    for (size_t i = 0; i < aggregates_.size(); ++i)
      if (aggregates_[i].filter) fields.push_back(Field::Make(fmt::format("__f{}", i), aggregates_[i].filter->type));
    spill_schema_ = std::make_shared<Schema>(std::move(fields));
    partitions_.resize(kSpillPartitions);
  }
  std::vector<std::vector<int64_t>> by_partition(kSpillPartitions);
  for (size_t k = 0; k < rows.size(); ++k) by_partition[SpillPartitionOf(hashes[k], depth_)].push_back(rows[k]);
  for (size_t p = 0; p < kSpillPartitions; ++p) {
    if (by_partition[p].empty()) continue;
    std::vector<ArrayPtr> columns;
    for (const auto& k : keys) columns.push_back(Take(*k, by_partition[p]));
    for (const auto& a : arguments)
      if (a) columns.push_back(Take(*a, by_partition[p]));
    for (const auto& f : filters)
      if (f) columns.push_back(Take(*f, by_partition[p]));
    if (!partitions_[p]) partitions_[p] = std::make_unique<SpillFile>(*spill_schema_, "a GROUP BY partition");
    partitions_[p]->Write(RecordBatch(spill_schema_, std::move(columns), int64_t(by_partition[p].size())));
  }
}

RecordBatchPtr HashAggregate::HeldGroups() {
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (size_t j = 0; j < keys_.size(); ++j) {
    fields.push_back(Field::Make(fmt::format("__grp{}", j), keys_[j]->type));
    columns.push_back(key_values_[j]->Finish());
  }
  for (size_t i = 0; i < aggregates_.size(); ++i) {
    fields.push_back(Field::Make(fmt::format("__agg{}", i), aggregates_[i].type));
    columns.push_back(accumulators_[i]->Finish(groups_));
  }
  if (merged_ && !keys_.empty()) {  // the parts' groups, back in order of first appearance
    std::vector<int64_t> order(groups_);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return first_seen_[size_t(a)] < first_seen_[size_t(b)]; });
    for (auto& column : columns) column = Take(*column, order);
  }
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, int64_t(groups_));
}

// The held groups, then each partition grouped in turn by an aggregate one level down
// (which may spill again), one partition in memory at a time.
class HashAggregate::PartitionReader final : public RecordBatchReader {
 public:
  PartitionReader(const Context& ctx, RecordBatchPtr held, SchemaPtr spill_schema,
                  std::vector<std::unique_ptr<SpillFile>> partitions, const std::vector<BoundExprPtr>& keys,
                  const std::vector<AggregateCall>& aggregates, int depth)
      : ctx_(ctx), held_(std::move(held)), schema_(held_->schema()), spill_schema_(std::move(spill_schema)),
        partitions_(std::move(partitions)), depth_(depth) {
    for (size_t j = 0; j < keys.size(); ++j)
      keys_.push_back(Bind(*Expr::Column(fmt::format("__k{}", j)), *spill_schema_));
    for (size_t i = 0; i < aggregates.size(); ++i) {
      AggregateCall call = aggregates[i];
      if (call.argument) call.argument = Bind(*Expr::Column(fmt::format("__a{}", i)), *spill_schema_);
      if (call.filter) call.filter = Bind(*Expr::Column(fmt::format("__f{}", i)), *spill_schema_);
      aggregates_.push_back(std::move(call));
    }
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (held_) return std::exchange(held_, nullptr);
    while (true) {
      if (current_)
        if (RecordBatchPtr batch = current_->Next()) return batch;
      current_.reset();
      while (next_ < partitions_.size() && !partitions_[next_]) ++next_;
      if (next_ == partitions_.size()) return nullptr;
      HashAggregate part(ctx_, keys_, aggregates_, depth_ + 1);
      const auto rows = partitions_[next_]->Read();
      partitions_[next_++].reset();
      while (auto batch = rows->Next()) part.Add(*batch);
      current_ = part.Finish();
    }
  }

 private:
  const Context& ctx_;
  RecordBatchPtr held_;
  SchemaPtr schema_, spill_schema_;
  std::vector<std::unique_ptr<SpillFile>> partitions_;
  size_t next_ = 0;
  std::vector<BoundExprPtr> keys_;
  std::vector<AggregateCall> aggregates_;
  int depth_;
  std::unique_ptr<RecordBatchReader> current_;
};

std::unique_ptr<RecordBatchReader> HashAggregate::Finish() {
  RecordBatchPtr held = HeldGroups();
  if (!spill_schema_) return BatchesReader(held->schema(), {held});
  return std::make_unique<PartitionReader>(ctx_, std::move(held), spill_schema_, std::move(partitions_), keys_,
                                           aggregates_, depth_);
}

}  // namespace lancelet::sql
