#include "sql/window.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "expr/cast.h"
#include "expr/function_catalog.h"
#include "sql/aggregate.h"
#include "sql/sort.h"

namespace lancelet::sql {

namespace {

enum class WindowKind {
  kRowNumber, kRank, kDenseRank, kPercentRank, kCumeDist, kNtile,
  kLag, kLead, kFirstValue, kLastValue, kNthValue,
  kCount, kSum, kAvg, kMin, kMax,  // over any frame
  kWholeAggregate,                 // any other aggregate: whole partitions only
};

std::optional<WindowKind> KindOf(const std::string& f) {
  static const std::vector<std::pair<std::string, WindowKind>> kNames = {
      {"row_number", WindowKind::kRowNumber}, {"rank", WindowKind::kRank}, {"dense_rank", WindowKind::kDenseRank},
      {"percent_rank", WindowKind::kPercentRank}, {"cume_dist", WindowKind::kCumeDist}, {"ntile", WindowKind::kNtile},
      {"lag", WindowKind::kLag}, {"lead", WindowKind::kLead}, {"first_value", WindowKind::kFirstValue},
      {"last_value", WindowKind::kLastValue}, {"nth_value", WindowKind::kNthValue}, {"count", WindowKind::kCount},
      {"sum", WindowKind::kSum}, {"avg", WindowKind::kAvg}, {"min", WindowKind::kMin}, {"max", WindowKind::kMax}};
  for (const auto& [name, kind] : kNames)
    if (name == f) return kind;
  if (IsAggregateName(f)) return WindowKind::kWholeAggregate;
  return std::nullopt;
}

// The partition's rows in window order, split into peer groups (rows equal under the
// window's ORDER BY; without one, every row is a peer of every other).
struct Peers {
  std::vector<int64_t> start, end;  // per row: its peer group's [start, end)
  std::vector<int64_t> group;       // per row: its peer group's number, from 0
};

Peers PeersOf(const std::vector<ArrayPtr>& order, int64_t n) {
  Peers p;
  p.start.resize(size_t(n));
  p.end.resize(size_t(n));
  p.group.resize(size_t(n));
  std::vector<KeyForm> forms;
  for (const auto& c : order) forms.push_back(KeyFormOf(*c->type));
  std::string previous, key;
  int64_t start = 0, group = -1;
  for (int64_t r = 0; r < n; ++r) {
    key.clear();
    for (size_t i = 0; i < order.size(); ++i) AppendKey(key, *order[i], r, forms[i]);
    if (r == 0 || key != previous) {
      for (int64_t q = start; q < r; ++q) p.end[size_t(q)] = r;
      start = r;
      ++group;
      previous.swap(key);
    }
    p.start[size_t(r)] = start;
    p.group[size_t(r)] = group;
  }
  for (int64_t q = start; q < n; ++q) p.end[size_t(q)] = n;
  return p;
}

// Row i's frame [lo, hi) within a partition of n rows.
struct Frames {
  std::vector<int64_t> lo, hi;
  bool whole = false;  // every frame is the whole partition
};

Frames FramesOf(const WindowSpec& w, bool ordered, const Peers& peers, int64_t n) {
  using K = FrameBound::Kind;
  Frames f;
  f.lo.resize(size_t(n));
  f.hi.resize(size_t(n));
  FrameBound start = w.start, end = w.end;
  if (!w.explicit_frame && !ordered) start.kind = K::kUnboundedPreceding, end.kind = K::kUnboundedFollowing;
  f.whole = start.kind == K::kUnboundedPreceding && end.kind == K::kUnboundedFollowing;
  const bool rows = w.explicit_frame && w.rows;
  auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v, 0, n); };
  for (int64_t i = 0; i < n; ++i) {
    int64_t lo = 0, hi = n;
    switch (start.kind) {
      case K::kUnboundedPreceding: lo = 0; break;
      case K::kPreceding: lo = i - std::min(start.offset, i); break;
      case K::kCurrentRow: lo = rows ? i : peers.start[size_t(i)]; break;
      case K::kFollowing: lo = start.offset > n ? n : clamp(i + start.offset); break;
      case K::kUnboundedFollowing: lo = n; break;
    }
    switch (end.kind) {
      case K::kUnboundedPreceding: hi = 0; break;
      case K::kPreceding: hi = end.offset > i ? 0 : i - end.offset + 1; break;
      case K::kCurrentRow: hi = rows ? i + 1 : peers.end[size_t(i)]; break;
      case K::kFollowing: hi = end.offset >= n ? n : clamp(i + end.offset + 1); break;
      case K::kUnboundedFollowing: hi = n; break;
    }
    f.lo[size_t(i)] = lo;
    f.hi[size_t(i)] = std::max(lo, hi);
  }
  return f;
}

// Row i of an integer argument (ntile's bucket count, lag's offset, nth_value's n).
std::optional<int64_t> IntAt(const ArrayData& a, int64_t i) {
  if (a.IsNull(i)) return std::nullopt;
  return GetScalar(a, i).as_int();
}

// What the chunks of a partition already computed leave to the next chunk, when a call
// streams its partition (WindowFunction::Streams): rows and peer groups so far, and the
// running aggregate.
struct Carry {
  int64_t rows = 0, peer_groups = 0;
  int64_t count = 0;  // count, sum, avg: the valid values so far
  __int128 exact = 0;
  double sum = 0;
  ArrayPtr best;   // min / max: the best value so far (one), or null
  ArrayPtr first;  // first_value: the partition's first value (one), or null
};

// Computes one window call over a partition at a time, or over its chunks in order.
class WindowFunction {
 public:
  WindowFunction(const Context& ctx, const ExprPtr& call, const Schema& input) : ctx_(ctx), call_(call) {
    const WindowSpec& w = *call->window;
    const std::string& f = call->function;
    const auto kind = KindOf(f);
    if (!kind) ctx.Fail(call->position, fmt::format("unknown window function {}() (known: {}, and the aggregates)", f,
                                                       FunctionNames("window")));
    kind_ = *kind;
    const size_t n = w.arguments;
    auto expect = [&](size_t lo, size_t hi) {
      if (n < lo || n > hi)
        ctx.Fail(call->position, lo == hi ? fmt::format("{}() OVER takes {} argument{}", f, lo, lo == 1 ? "" : "s")
                                          : fmt::format("{}() OVER takes {} to {} arguments", f, lo, hi));
    };
    for (size_t i = 0; i < n; ++i) arguments_.push_back(Bind(*call->args[i], input));
    switch (kind_) {
      case WindowKind::kRowNumber: case WindowKind::kRank: case WindowKind::kDenseRank:
        expect(0, 0);
        type_ = DataType::Int64();
        break;
      case WindowKind::kPercentRank: case WindowKind::kCumeDist:
        expect(0, 0);
        type_ = DataType::Float64();
        break;
      case WindowKind::kNtile:
        expect(1, 1);
        IntegerArgument(0, "ntile's bucket count");
        type_ = DataType::Int64();
        break;
      case WindowKind::kLag: case WindowKind::kLead:
        expect(1, 3);
        if (n >= 2) IntegerArgument(1, fmt::format("{}'s offset", f));
        type_ = arguments_[0]->type;
        break;
      case WindowKind::kFirstValue: case WindowKind::kLastValue:
        expect(1, 1);
        type_ = arguments_[0]->type;
        break;
      case WindowKind::kNthValue:
        expect(2, 2);
        IntegerArgument(1, "nth_value's n");
        type_ = arguments_[0]->type;
        break;
      default: {  // aggregates: their own argument rules and result type
        auto plain = std::make_shared<Expr>(*call);
        plain->window.reset();
        plain->args.resize(n);
        aggregate_ = BindAggregate(ctx, plain, input);
        type_ = aggregate_.type;
        if (call->distinct && kind_ != WindowKind::kWholeAggregate) kind_ = WindowKind::kWholeAggregate;
      }
    }
    if (!type_) ctx.Fail(call->position, fmt::format("{}() OVER needs a typed argument, not NULL", f));
  }

  const TypePtr& type() const { return type_; }
  const std::vector<BoundExprPtr>& arguments() const { return arguments_; }

  // Whether the call's value at a row depends only on the rows up to its last peer, so
  // that a partition can be computed in chunks that end at a peer group's end: the
  // ranking functions, and count / sum / avg / min / max / first_value over frames from
  // the partition's start to the current row.
  bool Streams() const {
    if (kind_ == WindowKind::kRowNumber || kind_ == WindowKind::kRank || kind_ == WindowKind::kDenseRank) return true;
    const bool aggregate = kind_ == WindowKind::kCount || kind_ == WindowKind::kSum || kind_ == WindowKind::kAvg ||
                           kind_ == WindowKind::kMin || kind_ == WindowKind::kMax || kind_ == WindowKind::kFirstValue;
    const WindowSpec& w = *call_->window;
    const bool ordered = w.arguments + w.partitions < call_->args.size();
    using K = FrameBound::Kind;
    const bool running = w.explicit_frame ? w.start.kind == K::kUnboundedPreceding && w.end.kind == K::kCurrentRow &&
                                                (w.rows || ordered)
                                          : ordered;
    return aggregate && running;
  }

  // The values over one partition, or over its next chunk when the call streams: `args`
  // are the evaluated arguments (in window order), `order` the ORDER BY keys, and `carry`
  // what the chunks before left (nothing for a partition's first), updated.
  ArrayPtr Compute(const std::vector<ArrayPtr>& args, const std::vector<ArrayPtr>& order, int64_t n,
                   Carry& carry) const {
    const Peers peers = PeersOf(order, n);
    ArrayPtr out = ComputeOver(args, order, peers, n, carry);
    carry.rows += n;
    if (n > 0) carry.peer_groups += peers.group[size_t(n - 1)] + 1;
    return out;
  }

 private:
  ArrayPtr ComputeOver(const std::vector<ArrayPtr>& args, const std::vector<ArrayPtr>& order, const Peers& peers,
                       int64_t n, Carry& carry) const {
    const WindowSpec& w = *call_->window;
    switch (kind_) {
      case WindowKind::kRowNumber: return Int64s(n, [&](int64_t i) { return carry.rows + i + 1; });
      case WindowKind::kRank: return Int64s(n, [&](int64_t i) { return carry.rows + peers.start[size_t(i)] + 1; });
      case WindowKind::kDenseRank:
        return Int64s(n, [&](int64_t i) { return carry.peer_groups + peers.group[size_t(i)] + 1; });
      case WindowKind::kPercentRank:
        return Doubles(n, [&](int64_t i) { return n > 1 ? double(peers.start[size_t(i)]) / double(n - 1) : 0.0; });
      case WindowKind::kCumeDist:
        return Doubles(n, [&](int64_t i) { return double(peers.end[size_t(i)]) / double(n); });
      case WindowKind::kNtile: return Ntile(*args[0], n);
      case WindowKind::kLag: case WindowKind::kLead: return Shifted(args, n);
      default: break;
    }
    const Frames frames = FramesOf(w, order.size() > 0, peers, n);
    switch (kind_) {
      case WindowKind::kFirstValue:
        if (Streams()) {  // every frame starts at the partition's first row
          if (!carry.first && n > 0) carry.first = Slice(*args[0], 0, 1);
          return n > 0 ? Take(*carry.first, std::vector<int64_t>(size_t(n), 0)) : Slice(*args[0], 0, 0);
        }
        return At(args[0], n, [&](int64_t i) { return frames.lo[size_t(i)] < frames.hi[size_t(i)] ? frames.lo[size_t(i)] : -1; });
      case WindowKind::kLastValue:
        return At(args[0], n, [&](int64_t i) { return frames.lo[size_t(i)] < frames.hi[size_t(i)] ? frames.hi[size_t(i)] - 1 : -1; });
      case WindowKind::kNthValue:
        return At(args[0], n, [&](int64_t i) -> int64_t {
          const auto k = IntAt(*args[1], i);
          if (k && *k < 1) ctx_.Fail(call_->position, fmt::format("nth_value's n is from 1, not {}", *k));
          return k && *k <= frames.hi[size_t(i)] - frames.lo[size_t(i)] ? frames.lo[size_t(i)] + *k - 1 : -1;
        });
      default: return Aggregate(args, frames, n, carry);
    }
  }

  void IntegerArgument(size_t i, const std::string& what) const {
    if (!arguments_[i]->type || !arguments_[i]->type->is_integer())
      ctx_.Fail(call_->args[i]->position, fmt::format("{} is an integer, not {}", what,
                                                       arguments_[i]->type ? arguments_[i]->type->ToString() : "NULL"));
  }

  template <typename F>
  static ArrayPtr Int64s(int64_t n, F&& value) {
    FixedWidthBuilder<int64_t> out(DataType::Int64());
    for (int64_t i = 0; i < n; ++i) out.Append(value(i));
    return out.Finish();
  }
  template <typename F>
  static ArrayPtr Doubles(int64_t n, F&& value) {
    FixedWidthBuilder<double> out(DataType::Float64());
    for (int64_t i = 0; i < n; ++i) out.Append(value(i));
    return out.Finish();
  }
  // Row index(i) of `values` for each row i; -1 gives NULL.
  template <typename F>
  ArrayPtr At(const ArrayPtr& values, int64_t n, F&& index) const {
    const ArrayPtr padded = Concatenate({values, MakeNullArray(values->type, 1)});
    std::vector<int64_t> take(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = index(i);
      take[size_t(i)] = k < 0 ? values->length : k;
    }
    return Take(*padded, take);
  }

  // ntile(b): the rows dealt into b buckets in order, the first n % b buckets one row larger.
  ArrayPtr Ntile(const ArrayData& buckets, int64_t n) const {
    FixedWidthBuilder<int64_t> out(DataType::Int64());
    for (int64_t i = 0; i < n; ++i) {
      const auto b = IntAt(buckets, i);
      if (!b) {
        out.AppendNull();
        continue;
      }
      if (*b < 1) ctx_.Fail(call_->position, fmt::format("ntile's bucket count is at least 1, not {}", *b));
      const int64_t size = n / *b, larger = n % *b;  // `larger` buckets of size + 1 come first
      const int64_t in_larger = larger * (size + 1);
      out.Append(i < in_larger ? i / (size + 1) + 1 : larger + (i - in_larger) / std::max<int64_t>(size, 1) + 1);
    }
    return out.Finish();
  }

  // lag / lead: the value `offset` rows before / after, else the default (NULL).
  ArrayPtr Shifted(const std::vector<ArrayPtr>& args, int64_t n) const {
    ArrayPtr fallback = args.size() == 3 ? args[2] : MakeNullArray(type_, n);
    if (!fallback->type->Equals(*type_)) fallback = CastArray(*fallback, type_);
    // Slots [0, n) hold x, [n, 2n) the defaults, and 2n a NULL for a NULL offset.
    const ArrayPtr slots = Concatenate({args[0], fallback, MakeNullArray(type_, 1)});
    const int64_t sign = kind_ == WindowKind::kLag ? -1 : 1;
    std::vector<int64_t> take(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const std::optional<int64_t> offset = args.size() >= 2 ? IntAt(*args[1], i) : std::optional<int64_t>(1);
      if (!offset) {
        take[size_t(i)] = 2 * n;
        continue;
      }
      const bool near = *offset <= n && *offset >= -n;
      const int64_t j = near ? i + sign * *offset : -1;
      take[size_t(i)] = j >= 0 && j < n ? j : n + i;
    }
    return Take(*slots, take);
  }

  ArrayPtr Aggregate(const std::vector<ArrayPtr>& args, const Frames& frames, int64_t n, Carry& carry) const {
    if (kind_ == WindowKind::kWholeAggregate || (frames.whole && kind_ != WindowKind::kCount)) {
      if (!frames.whole)
        ctx_.Fail(call_->position, fmt::format("{}({}) OVER takes the whole partition as its frame; over a moving "
                                               "frame the aggregates are count, sum, avg, min and max",
                                               call_->function, call_->distinct ? "DISTINCT ..." : "..."));
      // One group holding the partition, its value on every row.
      auto accumulator = MakeAccumulator(ctx_, aggregate_);
      accumulator->Add(args.empty() ? nullptr : args[0].get(), std::vector<uint32_t>(size_t(n), 0), 1);
      return Take(*accumulator->Finish(1), std::vector<int64_t>(size_t(n), 0));
    }
    if (kind_ == WindowKind::kCount) {
      std::vector<int64_t> valid_before(size_t(n) + 1, 0);  // valid arguments among rows [0, r)
      for (int64_t r = 0; r < n; ++r)
        valid_before[size_t(r) + 1] = valid_before[size_t(r)] + (args.empty() || args[0]->IsValid(r) ? 1 : 0);
      ArrayPtr out = Int64s(n, [&](int64_t i) {
        return carry.count + valid_before[size_t(frames.hi[size_t(i)])] - valid_before[size_t(frames.lo[size_t(i)])];
      });
      carry.count += valid_before[size_t(n)];
      return out;
    }
    if (kind_ == WindowKind::kMin || kind_ == WindowKind::kMax) return Extreme(args[0], frames, n, carry);
    return Sum(*args[0], frames, n, carry);
  }

  // sum / avg over each frame. A frame that extends the previous row's at its end is
  // summed on from it; any other frame is summed anew, so every sum adds its values in
  // row order. Integers sum exactly (128 bits) and must fit the result type.
  ArrayPtr Sum(const ArrayData& x, const Frames& frames, int64_t n, Carry& carry) const {
    const bool integer = x.type->is_integer();
    const ArrayPtr as = integer ? CastArray(x, DataType::Int64()) : CastArray(x, DataType::Float64());
    auto builder = ArrayBuilder::Make(type_);
    // The sum of the frame [lo, hi) so far, starting from what earlier chunks summed.
    __int128 exact = carry.exact;
    double sum = carry.sum;
    int64_t count = carry.count, lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t want_lo = frames.lo[size_t(i)], want_hi = frames.hi[size_t(i)];
      if (want_lo != lo || want_hi < hi) exact = 0, sum = 0, count = 0, hi = want_lo;
      lo = want_lo;
      for (; hi < want_hi; ++hi) {
        if (as->IsNull(hi)) continue;
        ++count;
        if (integer) exact += as->values<int64_t>()[hi];
        else sum += as->values<double>()[hi];
      }
      if (count == 0) {
        builder->AppendNull();
      } else if (kind_ == WindowKind::kAvg) {
        builder->AppendScalar(Scalar{type_, (integer ? double(exact) : sum) / double(count)});
      } else if (integer) {
        const bool fits = type_->is_signed_integer() ? exact <= __int128(INT64_MAX) && exact >= __int128(INT64_MIN)
                                                     : exact >= 0 && exact <= __int128(UINT64_MAX);
        if (!fits) ctx_.Fail(call_->position, fmt::format("sum() OVER overflows {} in a window frame", type_->ToString()));
        builder->AppendScalar(type_->is_signed_integer() ? Scalar{type_, int64_t(exact)} : Scalar{type_, uint64_t(exact)});
      } else {
        builder->AppendScalar(Scalar{type_, sum});
      }
    }
    carry.exact = exact, carry.sum = sum, carry.count = count;
    return builder->Finish();
  }

  // min / max over each frame, as the row holding the value: carried on while a frame
  // extends the previous one at its end, else found anew.
  // A streamed chunk's frames start with the best value of the chunks before, placed as
  // row 0 ahead of the chunk's rows.
  ArrayPtr Extreme(const ArrayPtr& chunk, const Frames& frames, int64_t n, Carry& carry) const {
    const int64_t shift = carry.best ? 1 : 0;
    const ArrayPtr values = carry.best ? Concatenate({carry.best, chunk}) : chunk;
    const ArrayData& x = *values;
    const std::vector<ArrayPtr> keys = {values};
    const std::vector<OrderItem> items = {OrderItem{nullptr, kind_ == WindowKind::kMax, std::nullopt}};
    const RowOrder order(keys, keys, items);
    std::vector<int64_t> pick(static_cast<size_t>(n), -1);
    int64_t best = -1, lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t want_lo = frames.lo[size_t(i)] == 0 ? 0 : frames.lo[size_t(i)] + shift;
      const int64_t want_hi = frames.hi[size_t(i)] + shift;
      if (want_lo != lo || want_hi < hi) best = -1, hi = want_lo;
      lo = want_lo;
      for (; hi < want_hi; ++hi)
        if (x.IsValid(hi) && (best < 0 || order.Before(hi, best))) best = hi;
      pick[size_t(i)] = best;
    }
    if (n > 0 && pick[size_t(n - 1)] >= 0) carry.best = Slice(x, pick[size_t(n - 1)], 1);
    return At(values, n, [&](int64_t i) { return pick[size_t(i)]; });
  }

  const Context& ctx_;
  ExprPtr call_;
  WindowKind kind_;
  std::vector<BoundExprPtr> arguments_;
  AggregateCall aggregate_;
  TypePtr type_;
};

// One window call over its input: rows sorted by (partition, order) keys, then read a
// partition at a time. The sorted rows carry the input's columns, then the evaluated
// arguments, partition keys and order keys.
class WindowReader final : public RecordBatchReader {
 public:
  WindowReader(const Context& ctx, std::unique_ptr<RecordBatchReader> input, const ExprPtr& call,
               const std::string& name)
      : ctx_(ctx), input_(std::move(input)), function_(ctx, call, *input_->schema()) {
    const WindowSpec& w = *call->window;
    const Schema& in = *input_->schema();
    input_columns_ = in.num_fields();
    for (size_t i = w.arguments; i < call->args.size(); ++i) keys_.push_back(Bind(*call->args[i], in));
    partitions_ = w.partitions;
    for (size_t i = 0; i < keys_.size(); ++i) {
      OrderItem item;
      if (i >= partitions_) {
        item.descending = w.descending[i - partitions_];
        item.nulls_first = w.nulls_first[i - partitions_];
      }
      items_.push_back(item);
    }
    std::vector<FieldPtr> fields = in.fields();
    for (size_t i = 0; i < function_.arguments().size(); ++i)
      fields.push_back(Field::Make(fmt::format("__warg{}", i), function_.arguments()[i]->type));
    for (size_t i = 0; i < keys_.size(); ++i) fields.push_back(Field::Make(fmt::format("__wkey{}", i), keys_[i]->type));
    sorted_schema_ = std::make_shared<Schema>(fields);
    for (size_t i = 0; i < keys_.size(); ++i) fields.push_back(Field::Make(fmt::format("__wsort{}", i), keys_[i]->type));
    with_sort_keys_ = std::make_shared<Schema>(fields);
    std::vector<FieldPtr> out = in.fields();
    out.push_back(Field::Make(name, function_.type()));
    schema_ = std::make_shared<Schema>(out);
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    if (!sorted_) Sort();
    while (true) {
      if (!carry_) {
        carry_ = sorted_->Next();
        if (!carry_) return pending_.empty() ? nullptr : Emit();
        carry_row_ = 0;
        if (carry_->num_rows() == 0) {
          carry_ = nullptr;
          continue;
        }
        PartitionKeys(*carry_);
      }
      if (pending_.empty()) partition_ = carry_keys_[size_t(carry_row_)];
      int64_t r = carry_row_;
      while (r < carry_->num_rows() && carry_keys_[size_t(r)] == partition_) ++r;
      if (r > carry_row_) {
        pending_.push_back(carry_->Slice(carry_row_, r - carry_row_));
        pending_rows_ += r - carry_row_;
      }
      if (r < carry_->num_rows()) {
        carry_row_ = r;
        return Emit();
      }
      carry_ = nullptr;
      // A call that streams gives the partition's rows so far, up to the last peer group.
      if (function_.Streams() && pending_rows_ >= chunk_at_)
        if (auto chunk = EmitChunk()) return chunk;
    }
  }

 private:
  // Every input row with its arguments and keys, sorted (or, without keys, as read).
  void Sort() {
    std::optional<Sorter> sorter;
    if (!keys_.empty()) sorter.emplace(with_sort_keys_, items_, std::nullopt, ctx_.memory_budget);
    std::vector<RecordBatchPtr> held;
    while (auto batch = input_->Next()) {
      std::vector<ArrayPtr> columns = batch->columns();
      for (const auto& a : function_.arguments()) columns.push_back(Evaluate(*a, *batch));
      std::vector<ArrayPtr> keys;
      for (const auto& k : keys_) keys.push_back(Evaluate(*k, *batch));
      columns.insert(columns.end(), keys.begin(), keys.end());
      if (keys_.empty()) {
        held.push_back(std::make_shared<RecordBatch>(sorted_schema_, std::move(columns), batch->num_rows()));
        continue;
      }
      columns.insert(columns.end(), keys.begin(), keys.end());
      sorter->Add(std::make_shared<RecordBatch>(with_sort_keys_, std::move(columns), batch->num_rows()));
    }
    sorted_ = sorter ? sorter->Finish() : BatchesReader(sorted_schema_, std::move(held));
  }

  void PartitionKeys(const RecordBatch& batch) {
    carry_keys_.assign(size_t(batch.num_rows()), std::string());
    const size_t first = input_columns_ + function_.arguments().size();
    for (size_t i = 0; i < partitions_; ++i) {
      const ArrayData& key = *batch.column(first + i);
      const KeyForm form = KeyFormOf(*key.type);
      for (int64_t r = 0; r < batch.num_rows(); ++r) AppendKey(carry_keys_[size_t(r)], key, r, form);
    }
  }

  // The pending partition's rows but its last peer group, with their values; null when
  // they are all one peer group.
  RecordBatchPtr EmitChunk() {
    const RecordBatchPtr rows = pending_.size() == 1 ? pending_[0] : RecordBatch::Concatenate(sorted_schema_, pending_);
    const size_t first_order = input_columns_ + function_.arguments().size() + partitions_;
    const std::vector<ArrayPtr> order(rows->columns().begin() + long(first_order), rows->columns().end());
    const int64_t n = rows->num_rows();
    const int64_t cut = PeersOf(order, n).start[size_t(n - 1)];
    pending_ = {rows};
    if (cut == 0) {  // one peer group: try again once it has doubled, so it is keyed O(n) times in all
      chunk_at_ = 2 * n;
      return nullptr;
    }
    pending_ = {rows->Slice(cut, n - cut)};
    pending_rows_ = n - cut;
    chunk_at_ = pending_rows_ + kChunkRows;
    return WithValues(rows->Slice(0, cut));
  }

  // The pending partition (or its last chunk) with its window values.
  RecordBatchPtr Emit() {
    const RecordBatchPtr rows = pending_.size() == 1 ? pending_[0] : RecordBatch::Concatenate(sorted_schema_, pending_);
    pending_.clear();
    pending_rows_ = 0;
    chunk_at_ = kChunkRows;
    RecordBatchPtr out = WithValues(rows);
    carried_ = Carry{};
    return out;
  }

  RecordBatchPtr WithValues(const RecordBatchPtr& rows) {
    const size_t first_arg = input_columns_, first_order = input_columns_ + function_.arguments().size() + partitions_;
    std::vector<ArrayPtr> args(rows->columns().begin() + long(first_arg),
                               rows->columns().begin() + long(first_arg + function_.arguments().size()));
    std::vector<ArrayPtr> order(rows->columns().begin() + long(first_order), rows->columns().end());
    std::vector<ArrayPtr> columns(rows->columns().begin(), rows->columns().begin() + long(input_columns_));
    columns.push_back(function_.Compute(args, order, rows->num_rows(), carried_));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), rows->num_rows());
  }

  const Context& ctx_;
  std::unique_ptr<RecordBatchReader> input_;
  WindowFunction function_;
  size_t input_columns_ = 0;
  std::vector<BoundExprPtr> keys_;  // PARTITION BY, then ORDER BY
  size_t partitions_ = 0;
  std::vector<OrderItem> items_;
  SchemaPtr sorted_schema_, with_sort_keys_, schema_;
  std::unique_ptr<RecordBatchReader> sorted_;
  RecordBatchPtr carry_;  // the sorted batch being split into partitions
  int64_t carry_row_ = 0;
  std::vector<std::string> carry_keys_;  // its rows' partition keys
  std::string partition_;                // the pending partition's key
  std::vector<RecordBatchPtr> pending_;  // the rows of that partition so far (not yet given)
  int64_t pending_rows_ = 0;
  Carry carried_;                        // a streamed partition's chunks given so far
  static constexpr int64_t kChunkRows = 65536;
  int64_t chunk_at_ = kChunkRows;       // pending rows at which a chunk is tried next
};

}  // namespace

std::unique_ptr<RecordBatchReader> OpenWindows(const Context& ctx, std::unique_ptr<RecordBatchReader> input,
                                               const std::vector<ExprPtr>& calls,
                                               const std::vector<std::string>& names) {
  for (size_t k = 0; k < calls.size(); ++k)
    input = std::make_unique<WindowReader>(ctx, std::move(input), calls[k], names[k]);
  return input;
}

}  // namespace lancelet::sql
