// List functions with DuckDB's semantics: searching (list_contains, list_position),
// aggregating (list_sum, list_avg, list_min, list_max, list_product), slicing
// (list_slice, and x[a:b] in the parser), concatenating (list_concat, and || on two
// lists), ordering (list_reverse, list_sort, list_reverse_sort, list_distinct,
// list_unique), building (list_value) and printing (array_to_string). Positions count
// from 1 and a NULL list gives NULL. Each works on the lists' items array as a whole:
// searches run one comparison over every item, and results are gathered from the items
// by index, not built from a value per row.
#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "lancelet/decimal.h"
#include "expr/cast.h"
#include "expr/compare.h"
#include "expr/errors.h"
#include "expr/functions.h"
#include "expr/numeric.h"
#include "expr/type_rules.h"
#include "lancelet/builder.h"

namespace lancelet {

namespace {

enum class ListFn {
  kContains, kPosition,
  kSum, kAvg, kMin, kMax, kProduct,
  kSlice,
  kConcat,        // list_concat: a NULL list counts as empty; NULL only when both are
  kConcatStrict,  // ||: NULL when either list is
  kReverse, kSort, kReverseSort, kDistinct, kUnique,
  kValue,
  kToString,
};

std::optional<ListFn> ListFunctionOf(const std::string& name) {
  static const std::unordered_map<std::string, ListFn> kNames = {
      {"list_contains", ListFn::kContains},     {"list_has", ListFn::kContains},
      {"array_contains", ListFn::kContains},    {"array_has", ListFn::kContains},
      {"list_position", ListFn::kPosition},     {"list_indexof", ListFn::kPosition},
      {"array_position", ListFn::kPosition},    {"array_indexof", ListFn::kPosition},
      {"list_sum", ListFn::kSum},               {"list_avg", ListFn::kAvg},
      {"list_min", ListFn::kMin},               {"list_max", ListFn::kMax},
      {"list_product", ListFn::kProduct},       {"list_slice", ListFn::kSlice},
      {"array_slice", ListFn::kSlice},          {"list_concat", ListFn::kConcat},
      {"list_cat", ListFn::kConcat},            {"array_concat", ListFn::kConcat},
      {"array_cat", ListFn::kConcat},           {"||", ListFn::kConcatStrict},
      {"list_reverse", ListFn::kReverse},       {"array_reverse", ListFn::kReverse},
      {"list_sort", ListFn::kSort},             {"array_sort", ListFn::kSort},
      {"list_reverse_sort", ListFn::kReverseSort}, {"array_reverse_sort", ListFn::kReverseSort},
      {"list_distinct", ListFn::kDistinct},     {"array_distinct", ListFn::kDistinct},
      {"list_unique", ListFn::kUnique},         {"array_unique", ListFn::kUnique},
      {"list_value", ListFn::kValue},           {"list_pack", ListFn::kValue},
      {"array_to_string", ListFn::kToString},   {"list_to_string", ListFn::kToString},
  };
  auto it = kNames.find(name);
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }

// The order of the items of one type, for sorting, min/max and distinct: numbers exactly
// across widths (NaN equal to NaN and above every number, as ORDER BY), bools, dates,
// timestamps, times and durations by their count, decimals by value, strings and
// binaries bytewise.
class ItemOrder {
 public:
  static bool Supports(const DataType& t) {
    return t.is_numeric() || t.id() == TypeId::kBool || t.is_temporal() || t.is_time_count() || t.is_decimal() ||
           IsBytes(t);
  }

  explicit ItemOrder(const ArrayData& items) : items_(items) {
    const DataType& t = *items.type;
    if (t.is_decimal()) {
      kind_ = Kind::kDecimal;
    } else if (IsBytes(t)) {
      kind_ = Kind::kBytes;
    } else if (items.length == 0) {
      kind_ = Kind::kSigned;  // no item to compare
    } else if (t.is_time_count()) {
      kind_ = Kind::kSigned;
      owned_.resize(size_t(items.length));
      for (int64_t i = 0; i < items.length; ++i)
        owned_[size_t(i)] = t.bit_width() == 32 ? items.values<int32_t>()[i] : items.values<int64_t>()[i];
      signed_ = owned_.data();
    } else {
      switch (DomainOf(t)) {
        case Domain::kSigned: signed_ = wide_signed_.emplace(items).data(); kind_ = Kind::kSigned; break;
        case Domain::kUnsigned: unsigned_ = wide_unsigned_.emplace(items).data(); kind_ = Kind::kUnsigned; break;
        case Domain::kFloat: float_ = wide_float_.emplace(items).data(); kind_ = Kind::kFloat; break;
      }
    }
  }

  // -1, 0 or 1 as item a is below, equal to or above item b (both valid).
  int Compare(int64_t a, int64_t b) const {
    switch (kind_) {
      case Kind::kSigned: return Cmp3(signed_[a], signed_[b]);
      case Kind::kUnsigned: return Cmp3(unsigned_[a], unsigned_[b]);
      case Kind::kFloat: return Cmp3(float_[a], float_[b]);
      case Kind::kDecimal: return CompareDecimals(items_.GetView(a), items_.GetView(b));
      case Kind::kBytes: {
        const int c = items_.GetView(a).compare(items_.GetView(b));
        return (c > 0) - (c < 0);
      }
    }
    return 0;
  }

 private:
  enum class Kind { kSigned, kUnsigned, kFloat, kDecimal, kBytes };
  const ArrayData& items_;
  Kind kind_ = Kind::kSigned;
  std::optional<Widened<int64_t>> wide_signed_;
  std::optional<Widened<uint64_t>> wide_unsigned_;
  std::optional<Widened<double>> wide_float_;
  std::vector<int64_t> owned_;
  const int64_t* signed_ = nullptr;
  const uint64_t* unsigned_ = nullptr;
  const double* float_ = nullptr;
};

// A list-like array of `type` whose items are picked, row after row, from an items array
// by index.
class ListOut {
 public:
  ListOut(TypePtr type, int64_t rows) : type_(std::move(type)), fixed_(type_->id() == TypeId::kFixedSizeList) {
    if (!fixed_) {
      offsets_.reserve(size_t(rows) + 1);
      offsets_.push_back(0);
    }
  }
  void Add(int64_t item) { take_.push_back(item); }
  void EndRow() {
    valid_.Append(true);
    if (!fixed_) offsets_.push_back(int64_t(take_.size()));
  }
  // A NULL row. A fixed_size_list keeps its slots: `begin` is the row's first item.
  void NullRow(int64_t begin = 0) {
    valid_.Append(false);
    if (fixed_) {
      for (int64_t k = 0; k < type_->fixed_size(); ++k) take_.push_back(begin + k);
    } else {
      offsets_.push_back(int64_t(take_.size()));
    }
  }
  ArrayPtr Finish(const ArrayData& items, const Expr* origin) {
    auto out = std::make_shared<ArrayData>();
    out->type = type_;
    out->length = valid_.length();
    out->null_count = valid_.null_count();
    out->buffers.push_back(valid_.Finish());
    if (!fixed_) {
      const bool large = type_->has_large_offsets();
      if (!large && take_.size() > size_t(std::numeric_limits<int32_t>::max()))
        ThrowAt(origin, fmt::format("the lists hold {} items, more than a list<> holds (2^31 - 1)", take_.size()));
      auto offsets = Buffer::Allocate(offsets_.size() * (large ? 8 : 4));
      for (size_t i = 0; i < offsets_.size(); ++i) {
        if (large) offsets->mutable_as<int64_t>()[i] = offsets_[i];
        else offsets->mutable_as<int32_t>()[i] = int32_t(offsets_[i]);
      }
      out->buffers.push_back(offsets);
    }
    out->children.push_back(take_.empty() ? MakeEmptyArray(type_->child(0)->type) : Take(items, take_));
    return out;
  }

 private:
  TypePtr type_;
  bool fixed_;
  ValidityBuilder valid_;
  std::vector<int64_t> offsets_;
  std::vector<int64_t> take_;
};

// The item picked for each row (-1: NULL), gathered from `items` as an array of `type`.
ArrayPtr GatherItems(const ArrayData& items, std::vector<int64_t> pick, const TypePtr& type) {
  const int64_t n = int64_t(pick.size());
  int64_t nulls = 0;
  for (int64_t k : pick) nulls += k < 0;
  if (nulls == n) return MakeNullArray(type, n);
  const BufferPtr valid = nulls ? BuildBitmap(n, [&](int64_t r) { return pick[size_t(r)] >= 0; }) : nullptr;
  for (int64_t& k : pick) k = std::max<int64_t>(k, 0);  // any item stands in for a NULL row
  ArrayPtr out = Take(items, pick);
  if (nulls == 0) return out;  // every picked item is valid
  auto copy = std::make_shared<ArrayData>(*out);
  copy->buffers[0] = valid;
  copy->null_count = nulls;
  return copy;
}

// A row's int64 argument (NULL: nullopt).
std::optional<int64_t> IntAt(const Datum& d, int64_t r) {
  if (d.is_array()) {
    if (d.array->IsNull(r)) return std::nullopt;
    return d.array->values<int64_t>()[r];
  }
  if (d.scalar.is_null()) return std::nullopt;
  return d.scalar.as_int();
}

bool NullAt(const Datum& d, int64_t r) { return d.is_array() ? d.array->IsNull(r) : d.scalar.is_null(); }

// ---- binding ----

// Argument i, which must be a list; an untyped NULL becomes a list of `item_if_null`.
const TypePtr& ListArgument(const std::string& name, std::vector<TypePtr>& types, size_t i,
                            const TypePtr& item_if_null, const Expr* origin) {
  if (!types[i]) types[i] = DataType::List(item_if_null);
  if (!IsListLike(*types[i]))
    ThrowAt(origin, fmt::format("{}() expects a list{}, got {}", name, types.size() > 1 ? " first" : "",
                                TypeName(types[i])));
  return types[i];
}

const TypePtr& ItemType(const TypePtr& list) { return list->child(0)->type; }

// A variable-length list of `item`, large when `like` is.
TypePtr ListOf(const TypePtr& item, const DataType& like) {
  return like.id() == TypeId::kLargeList ? DataType::LargeList(item) : DataType::List(item);
}

// Whether the comparison kernel compares the two types as they are (no cast).
bool DirectlyComparable(const DataType& a, const DataType& b) {
  return (a.is_numeric() && b.is_numeric()) || (a.id() == TypeId::kBool && b.id() == TypeId::kBool) ||
         (IsBytes(a) && IsBytes(b)) || a.Equals(b);
}

void ExpectSortable(const std::string& name, const TypePtr& list, const Expr* origin) {
  if (!ItemOrder::Supports(*ItemType(list)))
    ThrowAt(origin, fmt::format("{}() expects a list of numbers, strings, booleans, decimals or dates and times, "
                                "got {}",
                                name, TypeName(list)));
}

TypePtr ResolveConcat(const std::string& name, std::vector<TypePtr>& types, bool strict, const Expr* origin) {
  ExpectArgCount(name, types, 2, 2, origin);
  for (const auto& t : types)
    if (t && !IsListLike(*t)) {
      if (strict)
        ThrowAt(origin, fmt::format("|| concatenates two strings or two lists, got {} and {}", TypeName(types[0]),
                                    TypeName(types[1])));
      ThrowAt(origin, fmt::format("{}() expects lists, got {}", name, TypeName(t)));
    }
  if (!types[0] && !types[1]) ThrowAt(origin, fmt::format("{}() expects lists, got NULL and NULL", name));
  const TypePtr& a = types[0] ? types[0] : types[1];
  const TypePtr& b = types[1] ? types[1] : types[0];
  TypePtr item = CommonType(ItemType(a), ItemType(b));
  if (!item)
    ThrowAt(origin, fmt::format("{} cannot concatenate {} and {}", strict ? "||" : name + "()", TypeName(a),
                                TypeName(b)));
  const bool large = a->id() == TypeId::kLargeList || b->id() == TypeId::kLargeList;
  TypePtr result = large ? DataType::LargeList(item) : DataType::List(item);
  for (auto& t : types)
    if (!t) t = result;
  return result;
}

// ---- evaluation ----

// list_contains (bool) or list_position (int64, from 1) of each row's needle.
ArrayPtr Search(bool position, const Datum& list, const Datum& needle, int64_t n) {
  const ArrayPtr lists = Materialize(list, n);
  const ArrayPtr& items = lists->child(0);
  // Whether each item equals its row's needle (NULL where either is NULL), by one
  // comparison over the whole items array.
  ArrayPtr equal;
  if (n > 0 && items->length > 0 && !needle.all_null()) {
    if (needle.is_array()) {
      std::vector<int64_t> row_of(size_t(items->length), 0);
      for (int64_t r = 0; r < n; ++r) {
        if (lists->IsNull(r)) continue;
        const auto [begin, length] = ListSpan(*lists, r);
        std::fill(row_of.begin() + begin, row_of.begin() + begin + length, r);
      }
      equal = Compare(BinaryOp::kEq, Datum(items), Datum(Take(*needle.array, row_of)), items->length);
    } else {
      equal = Compare(BinaryOp::kEq, Datum(items), needle, items->length);
    }
  }
  auto holds = [&](int64_t k) { return equal->IsValid(k) && GetBit(equal->buffers[1]->data(), k); };
  BoolBuilder found(DataType::Bool());
  FixedWidthBuilder<int64_t> at(DataType::Int64());
  for (int64_t r = 0; r < n; ++r) {
    const bool null_needle = NullAt(needle, r);
    if (lists->IsNull(r) || (null_needle && !position)) {
      position ? at.AppendNull() : found.AppendNull();
      continue;
    }
    const auto [begin, length] = ListSpan(*lists, r);
    int64_t hit = -1;
    for (int64_t k = 0; k < length && hit < 0; ++k)
      if (null_needle ? items->IsNull(begin + k) : holds(begin + k)) hit = k;
    if (!position) found.Append(hit >= 0);
    else if (hit >= 0) at.Append(hit + 1);
    else at.AppendNull();
  }
  return position ? at.Finish() : found.Finish();
}

// list_sum, list_avg, list_product: over the valid items; NULL when there is none.
ArrayPtr Summarize(ListFn fn, const std::string& name, const Datum& list, int64_t n, const TypePtr& type,
                   const Expr* origin) {
  const ArrayPtr lists = Materialize(list, n);
  const ArrayData& items = *lists->child(0);
  FixedWidthBuilder<int64_t> ints(type);
  FixedWidthBuilder<double> doubles(type);
  const bool integer_sum = fn == ListFn::kSum && type->id() == TypeId::kInt64;
  VisitDomain(*items.type, [&](auto tag) {
    using D = decltype(tag);
    std::optional<Widened<D>> values;
    if (items.length > 0) values.emplace(items);
    for (int64_t r = 0; r < n; ++r) {
      int64_t count = 0;
      __int128 whole = 0;  // integers: exact (2^63 items of 2^64 cannot reach 2^127)
      double real = fn == ListFn::kProduct ? 1 : 0;
      if (!lists->IsNull(r)) {
        const auto [begin, length] = ListSpan(*lists, r);
        for (int64_t k = begin; k < begin + length; ++k) {
          if (items.IsNull(k)) continue;
          ++count;
          const D v = values->data()[k];
          if (fn == ListFn::kProduct) real *= double(v);
          else if constexpr (std::is_integral_v<D>) whole += v;
          else real += v;
        }
      }
      if (count == 0) {
        integer_sum ? ints.AppendNull() : doubles.AppendNull();
        continue;
      }
      if (integer_sum) {
        if (whole > std::numeric_limits<int64_t>::max() || whole < std::numeric_limits<int64_t>::min())
          ThrowAt(origin, fmt::format("{}(): the sum overflows int64", name));
        ints.Append(int64_t(whole));
        continue;
      }
      if constexpr (std::is_integral_v<D>) {
        if (fn != ListFn::kProduct) real = double(whole);
      }
      doubles.Append(fn == ListFn::kAvg ? real / double(count) : real);
    }
  });
  return integer_sum ? ints.Finish() : doubles.Finish();
}

// list_min, list_max: the least or greatest valid item, gathered from the items.
ArrayPtr Extreme(bool greatest, const Datum& list, int64_t n, const TypePtr& type) {
  const ArrayPtr lists = Materialize(list, n);
  const ArrayData& items = *lists->child(0);
  const ItemOrder order(items);
  std::vector<int64_t> pick(size_t(n), -1);
  for (int64_t r = 0; r < n; ++r) {
    if (lists->IsNull(r)) continue;
    const auto [begin, length] = ListSpan(*lists, r);
    int64_t best = -1;
    for (int64_t k = begin; k < begin + length; ++k) {
      if (items.IsNull(k)) continue;
      if (best < 0 || (greatest ? order.Compare(k, best) > 0 : order.Compare(k, best) < 0)) best = k;
    }
    pick[size_t(r)] = best;
  }
  return GatherItems(items, std::move(pick), type);
}

// list_slice(list, begin, end): items begin..end, both included, from 1; a negative bound
// counts from the end (-1 the last item); a begin before the first item starts at it, an
// end past the last stops at it, and an end before the begin gives [] (DuckDB's rules).
ArrayPtr SliceLists(const std::vector<Datum>& args, int64_t n, const TypePtr& type, const Expr* origin) {
  const ArrayPtr lists = Materialize(args[0], n);
  ListOut out(type, n);
  for (int64_t r = 0; r < n; ++r) {
    const std::optional<int64_t> from = IntAt(args[1], r), to = IntAt(args[2], r);
    if (lists->IsNull(r) || !from || !to) {
      out.NullRow();
      continue;
    }
    const auto [begin, length] = ListSpan(*lists, r);
    // Negatives move by length + 1 without overflow: k + 1 >= INT64_MIN + 1, then + length.
    int64_t first = *from < 0 ? *from + 1 + length : *from;
    int64_t last = *to < 0 ? *to + 1 + length : *to;
    first = std::max<int64_t>(first, 1);
    last = std::min(last, length);
    for (int64_t k = first; k <= last; ++k) out.Add(begin + k - 1);
    out.EndRow();
  }
  return out.Finish(*lists->child(0), origin);
}

// list_concat and ||: the items of the first list, then the second's, cast to the
// result's item type.
ArrayPtr ConcatLists(bool strict, const std::vector<Datum>& args, int64_t n, const TypePtr& type, const Expr* origin) {
  const TypePtr& item = ItemType(type);
  ArrayPtr lists[2];
  std::vector<ArrayPtr> parts;
  for (int k = 0; k < 2; ++k) {
    lists[k] = Materialize(args[size_t(k)], n);
    ArrayPtr items = lists[k]->child(0);
    parts.push_back(items->type->Equals(*item) ? items : CastArray(*items, item));
  }
  const int64_t second_base = parts[0]->length;
  const ArrayPtr all = Concatenate(parts);
  ListOut out(type, n);
  for (int64_t r = 0; r < n; ++r) {
    const bool null0 = lists[0]->IsNull(r), null1 = lists[1]->IsNull(r);
    if (strict ? (null0 || null1) : (null0 && null1)) {
      out.NullRow();
      continue;
    }
    for (int k = 0; k < 2; ++k) {
      if (lists[k]->IsNull(r)) continue;
      const auto [begin, length] = ListSpan(*lists[k], r);
      const int64_t base = k == 0 ? 0 : second_base;
      for (int64_t i = 0; i < length; ++i) out.Add(base + begin + i);
    }
    out.EndRow();
  }
  return out.Finish(*all, origin);
}

std::string Normalized(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += char(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// list_sort's 'ASC' / 'DESC' (descending?) and 'NULLS FIRST' / 'NULLS LAST' (first?).
bool ParseSortWord(const std::string& name, const Scalar& word, bool nulls, const Expr* origin) {
  const char* expected = nulls ? "'NULLS FIRST' or 'NULLS LAST'" : "'ASC' or 'DESC'";
  if (word.is_null())
    ThrowAt(origin, fmt::format("{}(): the {}order is NULL, expected {}", name, nulls ? "NULL " : "", expected));
  const std::string w = Normalized(word.as_string());
  if (w == (nulls ? "NULLS FIRST" : "DESC")) return true;
  if (w == (nulls ? "NULLS LAST" : "ASC")) return false;
  ThrowAt(origin, fmt::format("{}(): unknown {}order '{}' (expected {})", name, nulls ? "NULL " : "", word.as_string(),
                              expected));
}

// list_reverse, list_sort, list_reverse_sort: each row's items reordered; the result has
// the input's type (a fixed_size_list stays one).
ArrayPtr Reorder(ListFn fn, const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                 const Expr* origin) {
  const ArrayPtr lists = Materialize(args[0], n);
  const ArrayData& items = *lists->child(0);
  std::optional<ItemOrder> order;
  if (fn != ListFn::kReverse) order.emplace(items);
  const size_t nulls_arg = fn == ListFn::kSort ? 2 : 1;
  ListOut out(type, n);
  std::vector<int64_t> valid, nulls;
  for (int64_t r = 0; r < n; ++r) {
    const auto [begin, length] = ListSpan(*lists, r);
    if (lists->IsNull(r)) {
      out.NullRow(begin);
      continue;
    }
    if (fn == ListFn::kReverse) {
      for (int64_t k = begin + length - 1; k >= begin; --k) out.Add(k);
      out.EndRow();
      continue;
    }
    // NULLS LAST unless asked otherwise, as DuckDB's default null order.
    const bool descending =
        fn == ListFn::kReverseSort ||
        (args.size() > 1 && fn == ListFn::kSort && ParseSortWord(name, RowValue(args[1], r), false, origin));
    const bool nulls_first = args.size() > nulls_arg && ParseSortWord(name, RowValue(args[nulls_arg], r), true, origin);
    valid.clear();
    nulls.clear();
    for (int64_t k = begin; k < begin + length; ++k) (items.IsNull(k) ? nulls : valid).push_back(k);
    std::stable_sort(valid.begin(), valid.end(), [&](int64_t a, int64_t b) {
      const int c = order->Compare(a, b);
      return descending ? c > 0 : c < 0;
    });
    if (nulls_first)
      for (int64_t k : nulls) out.Add(k);
    for (int64_t k : valid) out.Add(k);
    if (!nulls_first)
      for (int64_t k : nulls) out.Add(k);
    out.EndRow();
  }
  return out.Finish(items, origin);
}

// list_distinct (the valid items without repeats, in the order of their first
// occurrence) or list_unique (how many there are).
ArrayPtr Distinct(bool count_only, const Datum& list, int64_t n, const TypePtr& type, const Expr* origin) {
  const ArrayPtr lists = Materialize(list, n);
  const ArrayData& items = *lists->child(0);
  const ItemOrder order(items);
  std::optional<ListOut> out;
  if (!count_only) out.emplace(type, n);
  FixedWidthBuilder<int64_t> counts(DataType::Int64());
  std::vector<int64_t> valid, kept;
  for (int64_t r = 0; r < n; ++r) {
    if (lists->IsNull(r)) {
      count_only ? counts.AppendNull() : out->NullRow();
      continue;
    }
    const auto [begin, length] = ListSpan(*lists, r);
    valid.clear();
    kept.clear();
    for (int64_t k = begin; k < begin + length; ++k)
      if (items.IsValid(k)) valid.push_back(k);
    // Stable, so the first of each run of equal items is its first occurrence.
    std::stable_sort(valid.begin(), valid.end(), [&](int64_t a, int64_t b) { return order.Compare(a, b) < 0; });
    for (size_t i = 0; i < valid.size(); ++i)
      if (i == 0 || order.Compare(valid[i - 1], valid[i]) != 0) kept.push_back(valid[i]);
    if (count_only) {
      counts.Append(int64_t(kept.size()));
      continue;
    }
    std::sort(kept.begin(), kept.end());
    for (int64_t k : kept) out->Add(k);
    out->EndRow();
  }
  if (count_only) return counts.Finish();
  return out->Finish(items, origin);
}

// list_value(a, b, ...): one list per row of its arguments' values (each already of the
// item type); never NULL.
ArrayPtr BuildLists(const std::vector<Datum>& args, int64_t n, const TypePtr& type, const Expr* origin) {
  ListOut out(type, n);
  std::vector<ArrayPtr> columns;
  for (const Datum& a : args) columns.push_back(Materialize(a, n));
  const int64_t m = int64_t(columns.size());
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < m; ++k) out.Add(k * n + r);  // row r of argument k in `all`
    out.EndRow();
  }
  if (columns.empty()) return out.Finish(*MakeEmptyArray(ItemType(type)), origin);
  return out.Finish(*Concatenate(columns), origin);
}

// array_to_string(list, separator): the valid items as text, joined; a NULL separator is
// a comma, as DuckDB's (string_agg's default). As DuckDB's too, a list of NULLs alone gives
// NULL (as string_agg of no values), an empty list ''.
ArrayPtr JoinItems(const std::vector<Datum>& args, int64_t n, const TypePtr& type) {
  const ArrayPtr lists = Materialize(args[0], n);
  const ArrayPtr& items = lists->child(0);
  const ArrayPtr text = items->type->is_string() ? items : CastArray(*items, DataType::Utf8());
  BinaryBuilder out(type);
  std::string joined;
  for (int64_t r = 0; r < n; ++r) {
    if (lists->IsNull(r)) {
      out.AppendNull();
      continue;
    }
    const Scalar sep = RowValue(args[1], r);
    const std::string& separator = sep.is_null() ? std::string(",") : sep.as_string();
    const auto [begin, length] = ListSpan(*lists, r);
    joined.clear();
    bool first = true;
    for (int64_t k = begin; k < begin + length; ++k) {
      if (text->IsNull(k)) continue;
      if (!first) joined += separator;
      joined += text->GetView(k);
      first = false;
    }
    if (first && length > 0) out.AppendNull();
    else out.Append(joined);
  }
  return out.Finish();
}

}  // namespace

TypePtr ResolveListFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  const std::optional<ListFn> fn = ListFunctionOf(name);
  if (!fn) return nullptr;
  auto& types = *arg_types;
  switch (*fn) {
    case ListFn::kContains:
    case ListFn::kPosition: {
      ExpectArgCount(name, types, 2, 2, origin);
      const TypePtr item = ItemType(ListArgument(name, types, 0, types[1] ? types[1] : DataType::Int64(), origin));
      TypePtr& needle = types[1];
      if (!needle) {
        needle = item;
      } else if (!DirectlyComparable(*item, *needle)) {
        const TypePtr common = CommonType(item, needle);
        if (!common || !common->Equals(*item))
          ThrowAt(origin, fmt::format("{}() cannot look for {} in {}", name, TypeName(needle), TypeName(types[0])));
        needle = item;
      } else if ((item->id() == TypeId::kFloat32 || item->id() == TypeId::kFloat16) &&
                 needle->id() == TypeId::kFloat64) {
        needle = DataType::Float32();  // 0.1 finds the float32 item 0.1, as `f32 = 0.1` does
      }
      return *fn == ListFn::kContains ? DataType::Bool() : DataType::Int64();
    }
    case ListFn::kSum:
    case ListFn::kAvg:
    case ListFn::kProduct: {
      ExpectArgCount(name, types, 1, 1, origin);
      const TypePtr& item = ItemType(ListArgument(name, types, 0, DataType::Int64(), origin));
      if (!item->is_numeric())
        ThrowAt(origin, fmt::format("{}() expects a list of numbers, got {}", name, TypeName(types[0])));
      return *fn == ListFn::kSum && item->is_integer() ? DataType::Int64() : DataType::Float64();
    }
    case ListFn::kMin:
    case ListFn::kMax: {
      ExpectArgCount(name, types, 1, 1, origin);
      const TypePtr& list = ListArgument(name, types, 0, DataType::Int64(), origin);
      ExpectSortable(name, list, origin);
      return ItemType(list);
    }
    case ListFn::kSlice: {
      ExpectArgCount(name, types, 3, 3, origin);
      const TypePtr& list = ListArgument(name, types, 0, DataType::Int64(), origin);
      for (size_t k = 1; k < 3; ++k) {
        if (types[k] && !types[k]->is_integer())
          ThrowAt(origin, fmt::format("{}() expects integer bounds, got {}", name, TypeName(types[k])));
        types[k] = DataType::Int64();
      }
      return ListOf(ItemType(list), *list);
    }
    case ListFn::kConcat:
    case ListFn::kConcatStrict: return ResolveConcat(name, types, *fn == ListFn::kConcatStrict, origin);
    case ListFn::kReverse: {
      ExpectArgCount(name, types, 1, 1, origin);
      return ListArgument(name, types, 0, DataType::Int64(), origin);
    }
    case ListFn::kSort:
    case ListFn::kReverseSort: {
      ExpectArgCount(name, types, 1, *fn == ListFn::kSort ? 3 : 2, origin);
      const TypePtr& list = ListArgument(name, types, 0, DataType::Int64(), origin);
      ExpectSortable(name, list, origin);
      for (size_t k = 1; k < types.size(); ++k) {
        if (types[k] && !types[k]->is_string())
          ThrowAt(origin, fmt::format("{}() expects the order as a string ('ASC', 'NULLS FIRST', ...), got {}", name,
                                      TypeName(types[k])));
        types[k] = DataType::Utf8();
      }
      return types[0];
    }
    case ListFn::kDistinct:
    case ListFn::kUnique: {
      ExpectArgCount(name, types, 1, 1, origin);
      const TypePtr& list = ListArgument(name, types, 0, DataType::Int64(), origin);
      ExpectSortable(name, list, origin);
      return *fn == ListFn::kUnique ? DataType::Int64() : ListOf(ItemType(list), *list);
    }
    case ListFn::kValue: {
      TypePtr common;
      for (const auto& t : types) {
        TypePtr next = CommonType(common, t);
        if (!next && t)
          ThrowAt(origin, fmt::format("{}() arguments have no common type: {} and {}", name, TypeName(common),
                                      TypeName(t)));
        common = next;
      }
      if (!common) common = DataType::Float64();  // as the literal [NULL]
      for (auto& t : types) t = common;
      return DataType::List(common);
    }
    case ListFn::kToString: {
      ExpectArgCount(name, types, 2, 2, origin);
      const TypePtr& list = ListArgument(name, types, 0, DataType::Utf8(), origin);
      if (!CanCast(*ItemType(list), *DataType::Utf8()))
        ThrowAt(origin, fmt::format("{}() cannot print the items of {}", name, TypeName(list)));
      if (types[1] && !types[1]->is_string())
        ThrowAt(origin, fmt::format("{}() expects a separator string, got {}", name, TypeName(types[1])));
      types[1] = DataType::Utf8();
      return DataType::Utf8();
    }
  }
  return nullptr;
}

ArrayPtr CallListFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                          const Expr* origin) {
  const std::optional<ListFn> fn = ListFunctionOf(name);
  if (!fn) return nullptr;
  switch (*fn) {
    case ListFn::kContains: return Search(false, args[0], args[1], n);
    case ListFn::kPosition: return Search(true, args[0], args[1], n);
    case ListFn::kSum:
    case ListFn::kAvg:
    case ListFn::kProduct: return Summarize(*fn, name, args[0], n, type, origin);
    case ListFn::kMin: return Extreme(false, args[0], n, type);
    case ListFn::kMax: return Extreme(true, args[0], n, type);
    case ListFn::kSlice: return SliceLists(args, n, type, origin);
    case ListFn::kConcat: return ConcatLists(false, args, n, type, origin);
    case ListFn::kConcatStrict:
      if (!IsListLike(*type)) return nullptr;  // || on strings is functions.cc's
      return ConcatLists(true, args, n, type, origin);
    case ListFn::kReverse:
    case ListFn::kSort:
    case ListFn::kReverseSort: return Reorder(*fn, name, args, n, type, origin);
    case ListFn::kDistinct: return Distinct(false, args[0], n, type, origin);
    case ListFn::kUnique: return Distinct(true, args[0], n, type, origin);
    case ListFn::kValue: return BuildLists(args, n, type, origin);
    case ListFn::kToString: return JoinItems(args, n, type);
  }
  return nullptr;
}

}  // namespace lancelet
