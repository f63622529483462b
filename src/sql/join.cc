#include "sql/join.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "array/parallel_map.h"
#include "array/shared_source.h"
#include "expr/numeric.h"
#include "sql/aggregate.h"
#include "sql/correlated.h"
#include "sql/spill.h"

namespace lancelet::sql {

namespace {

const char* JoinKindName(JoinClause::Kind kind) {
  switch (kind) {
    case JoinClause::Kind::kInner: return "INNER";
    case JoinClause::Kind::kLeft: return "LEFT";
    case JoinClause::Kind::kRight: return "RIGHT";
    case JoinClause::Kind::kFull: return "FULL";
    case JoinClause::Kind::kCross: return "CROSS";
  }
  return "";
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every column path the statement's expressions name, as written.
void CollectPaths(const ExprPtr& e, std::vector<std::vector<std::string>>& out) {
  if (!e) return;
  if (e->kind == ExprKind::kColumn) out.push_back(e->path);
  for (const auto& a : e->args) CollectPaths(a, out);
}

std::vector<std::vector<std::string>> StatementPaths(const SelectStmt& stmt) {
  std::vector<std::vector<std::string>> paths;
  for (const auto& i : stmt.items) CollectPaths(i.expr, paths);
  CollectPaths(stmt.where, paths);
  for (const auto& g : stmt.group_by) CollectPaths(g, paths);
  CollectPaths(stmt.having, paths);
  CollectPaths(stmt.qualify, paths);
  for (const auto& o : stmt.order_by) CollectPaths(o.expr, paths);
  for (const auto& j : stmt.joins) CollectPaths(j.on, paths);
  return paths;
}

// Its input's batches under another schema (the same columns renamed).
class RenameReader final : public RecordBatchReader, public ShareableReader {
 public:
  RenameReader(std::unique_ptr<RecordBatchReader> input, const std::string& prefix) : input_(std::move(input)) {
    std::vector<FieldPtr> fields;
    for (const auto& f : input_->schema()->fields()) fields.push_back(Field::Make(prefix + f->name, f->type));
    schema_ = std::make_shared<Schema>(fields);
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    auto batch = input_->Next();
    return batch ? Renamed(batch) : nullptr;
  }
  SharedSource* Shared() override {
    SharedSource* pieces = SharedSourceOf(*input_);
    if (!pieces) return nullptr;
    renamed_.emplace(*pieces, [this](const RecordBatchPtr& batch) { return Renamed(batch); });
    return &*renamed_;
  }

 private:
  RecordBatchPtr Renamed(const RecordBatchPtr& batch) const {
    return std::make_shared<RecordBatch>(schema_, batch->columns(), batch->num_rows());
  }

  std::unique_ptr<RecordBatchReader> input_;
  SchemaPtr schema_;
  std::optional<MappedPieces> renamed_;
};

// Pairs of candidate rows whose ON clause is evaluated at once, at most.
constexpr int64_t kPairsPerRound = 1 << 16;

// One equality of the ON clause between a left and a right column, as a hash key.
struct JoinKey {
  int left, right;  // the columns in the left and the right schema
  KeyForm form;
};

// Adds `e` to `keys` if it is an equality between a left and a right column whose equal
// values always key alike (a pair of types whose equal values could key differently is
// left to the ON clause alone). Returns whether the key is also exact: equal keys only
// for equal values.
bool EquiKey(const ExprPtr& e, const Schema& left, const Schema& right, std::vector<JoinKey>& keys) {
  if (e->kind != ExprKind::kBinary || e->binary_op != BinaryOp::kEq) return false;
  const auto& a = e->args[0];
  const auto& b = e->args[1];
  if (a->kind != ExprKind::kColumn || b->kind != ExprKind::kColumn || a->path.size() != 1 || b->path.size() != 1)
    return false;
  int l = left.FieldIndex(a->path[0]), r = right.FieldIndex(b->path[0]);
  if (l < 0 || r < 0) {
    l = left.FieldIndex(b->path[0]);
    r = right.FieldIndex(a->path[0]);
  }
  if (l < 0 || r < 0) return false;
  const DataType& lt = *left.field(size_t(l))->type;
  const DataType& rt = *right.field(size_t(r))->type;
  KeyForm form;
  bool exact;
  if (lt.is_integer() && rt.is_integer()) {
    form = KeyForm::kBits;  // a signed and an unsigned value may share bits
    exact = DomainOf(lt) == DomainOf(rt);
  } else if (lt.Equals(rt)) {
    form = KeyFormOf(lt);
    exact = form != KeyForm::kText;  // ValueKey may tell apart values SQL calls equal
  } else if (lt.is_string() && rt.is_string()) {
    form = KeyForm::kBytes;
    exact = true;
  } else {
    return false;
  }
  keys.push_back({l, r, form});
  return exact;
}

// The AND-ed terms of `on` that are EquiKeys. Returns whether `on` is wholly such keys,
// each exact, so that the hash alone decides and the ON clause need not be evaluated.
bool EquiKeys(const ExprPtr& on, const Schema& left, const Schema& right, std::vector<JoinKey>& keys) {
  bool exact = true;
  for (const auto& term : Conjuncts(on)) exact &= EquiKey(term, left, right, keys);  // every term is tried
  return exact;
}

// Row `row`'s key (`left`: a row of the left side); false when a key column is NULL,
// since NULL equals nothing.
bool RowKey(const RecordBatch& batch, const std::vector<JoinKey>& keys, bool left, int64_t row, std::string& key) {
  key.clear();
  for (const auto& k : keys) {
    const ArrayData& column = *batch.columns()[size_t(left ? k.left : k.right)];
    if (column.IsNull(row)) return false;
    AppendKey(key, column, row, k.form);
  }
  return true;
}

// The columns of a join's output: the left side's, then the right side's.
SchemaPtr JoinedSchema(const Schema& left, const Schema& right) {
  auto fields = left.fields();
  for (const auto& f : right.fields()) fields.push_back(f);
  return std::make_shared<Schema>(fields);
}

// A join of a stream (left) with rows held in memory (right). Candidate pairs come from
// a hash of the right side on the ON clause's equalities between the sides (every pair
// when it has none); the whole ON clause then decides. Output keeps left row order, and
// the right rows no left row matched follow at the end (RIGHT and FULL).
class JoinReader final : public RecordBatchReader {
 public:
  JoinReader(const Context& ctx, std::unique_ptr<RecordBatchReader> left, RecordBatchPtr right,
             JoinClause::Kind kind, const ExprPtr& on)
      : left_(std::move(left)), right_(std::move(right)), kind_(kind) {
    schema_ = JoinedSchema(*left_->schema(), *right_->schema());
    if (on) {
      on_ = Bind(*on, *schema_);
      if (on_->type->id() != TypeId::kBool)
        ctx.Fail(on->position, fmt::format("a JOIN's ON clause must be boolean, not {}", on_->type->ToString()));
      if (EquiKeys(on, *left_->schema(), *right_->schema(), keys_)) on_ = nullptr;  // the hash decides alone
    }
    // One NULL row after the right rows stands for "no match" in a left row's pair.
    for (size_t c = 0; c < right_->columns().size(); ++c)
      right_padded_.push_back(Concatenate({right_->columns()[c], MakeNullArray(right_->columns()[c]->type, 1)}));
    right_matched_.assign(size_t(right_->num_rows()), false);
    BuildHash();
  }

  SchemaPtr schema() const override { return schema_; }

  // Whether each left batch's output depends on that batch alone, so that batches may be
  // joined on several threads (Probe): the join has keys (no slicing of a batch against
  // every right row) and is no RIGHT or FULL join (which notes the right rows matched).
  bool ProbesAlone() const {
    return !keys_.empty() && kind_ != JoinClause::Kind::kRight && kind_ != JoinClause::Kind::kFull;
  }
  // The left stream, for a caller that probes its batches itself.
  std::unique_ptr<RecordBatchReader> TakeLeft() { return std::move(left_); }
  // One left batch joined; safe on several threads at once when ProbesAlone().
  RecordBatchPtr Probe(const RecordBatch& left) { return JoinBatch(left); }

  RecordBatchPtr Next() override {
    while (!left_done_) {
      if (!pending_ || pending_offset_ == pending_->num_rows()) {
        pending_ = left_->Next();
        pending_offset_ = 0;
        if (!pending_) {
          left_done_ = true;
          break;
        }
      }
      // Without keys a left row pairs with every right row: a slice of the left batch at a
      // time keeps an output batch near kPairsPerRound rows (a whole 64K-row batch against
      // 150K right rows was 10^10 pairs, and the process was killed for memory).
      int64_t rows = pending_->num_rows() - pending_offset_;
      if (keys_.empty()) rows = std::min(rows, std::max<int64_t>(1, kPairsPerRound / std::max<int64_t>(1, right_->num_rows())));
      const RecordBatchPtr slice = rows == pending_->num_rows() ? pending_ : pending_->Slice(pending_offset_, rows);
      pending_offset_ += rows;
      auto out = JoinBatch(*slice);
      if (out->num_rows() > 0) return out;
    }
    if (unmatched_done_ || (kind_ != JoinClause::Kind::kRight && kind_ != JoinClause::Kind::kFull)) return nullptr;
    unmatched_done_ = true;
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < right_->num_rows(); ++r)
      if (!right_matched_[size_t(r)]) rows.push_back(r);
    if (rows.empty()) return nullptr;
    std::vector<ArrayPtr> columns;
    for (const auto& f : left_->schema()->fields()) columns.push_back(MakeNullArray(f->type, int64_t(rows.size())));
    for (const auto& c : right_->columns()) columns.push_back(Take(*c, rows));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(rows.size()));
  }

 private:
  // The right rows of each key, chained in row order: first_[key number], next_[row]. One
  // integer key whose values span a range at most a few times the row count numbers its
  // keys by value - dense_base_ (a dimension table's ids); others go through a
  // KeyNumbering.
  void BuildHash() {
    const int64_t rows = right_->num_rows();
    next_.assign(size_t(rows), -1);
    if (keys_.empty()) return;
    if (keys_.size() == 1 && keys_[0].form == KeyForm::kBits) {
      const ArrayData& column = *right_->columns()[size_t(keys_[0].right)];
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t r = 0; r < rows; ++r)
        if (column.IsValid(r)) lo = std::min(lo, KeyBits(column, r)), hi = std::max(hi, KeyBits(column, r));
      if (lo <= hi && uint64_t(hi) - uint64_t(lo) < uint64_t(4 * rows + 1024)) {
        dense_ = true;
        dense_base_ = lo;
        first_.assign(size_t(uint64_t(hi) - uint64_t(lo) + 1), -1);
      }
    }
    std::vector<int64_t> last(first_.size(), -1);
    std::string key;
    for (int64_t r = 0; r < rows; ++r) {
      std::optional<uint32_t> number = Number(*right_, false, r, key, true);
      if (!number) continue;
      if (*number >= first_.size()) first_.resize(*number + 1, -1), last.resize(*number + 1, -1);
      if (first_[*number] < 0) first_[*number] = r;
      else next_[size_t(last[*number])] = r, unique_right_ = false;
      last[*number] = r;
    }
  }

  // The number of row `row`'s key (`add`: numbering a new one), none when a key column is
  // NULL or, without `add`, the key is unknown.
  std::optional<uint32_t> Number(const RecordBatch& batch, bool left, int64_t row, std::string& key, bool add) {
    if (dense_) {
      const ArrayData& column = *batch.columns()[size_t(left ? keys_[0].left : keys_[0].right)];
      if (column.IsNull(row)) return std::nullopt;
      const uint64_t offset = uint64_t(KeyBits(column, row)) - uint64_t(dense_base_);
      if (offset >= first_.size()) return std::nullopt;
      return uint32_t(offset);
    }
    if (!RowKey(batch, keys_, left, row, key)) return std::nullopt;
    if (add) return numbering_.Number(key).first;
    return numbering_.Find(key);
  }

  RecordBatchPtr JoinBatch(const RecordBatch& left) {
    const bool keep_left = kind_ == JoinClause::Kind::kLeft || kind_ == JoinClause::Kind::kFull;
    const bool keep_right = kind_ == JoinClause::Kind::kRight || kind_ == JoinClause::Kind::kFull;
    const int64_t right_rows = right_->num_rows();
    const int64_t step = keys_.empty() ? std::max<int64_t>(1, kPairsPerRound / std::max<int64_t>(1, right_rows))
                                       : left.num_rows();
    std::vector<int64_t> out_left, out_right;
    std::string key;
    if (dense_ && !on_) {  // a dimension table's ids, wholly decided by the key: no candidates
      const ArrayData& column = *left.columns()[size_t(keys_[0].left)];
      const std::vector<int64_t> bits = KeyBitsColumn(column);
      // The right row of left row t, or -1; with a unique right key there is at most one.
      auto first_match = [&](int64_t t) {
        const uint64_t offset = uint64_t(bits[size_t(t)]) - uint64_t(dense_base_);
        return offset < first_.size() && column.IsValid(t) ? first_[offset] : int64_t{-1};
      };
      if (unique_right_ && !keep_right) {
        out_left.resize(size_t(left.num_rows()));
        out_right.resize(size_t(left.num_rows()));
        size_t n = 0;
        for (int64_t t = 0; t < left.num_rows(); ++t) {
          const int64_t r = first_match(t);
          if (r < 0 && !keep_left) continue;
          out_left[n] = t;
          out_right[n++] = r < 0 ? right_rows : r;
        }
        out_left.resize(n);
        out_right.resize(n);
      } else {
        out_left.reserve(size_t(left.num_rows()));
        out_right.reserve(size_t(left.num_rows()));
        for (int64_t t = 0; t < left.num_rows(); ++t) {
          bool matched = false;
          for (int64_t r = first_match(t); r >= 0; r = next_[size_t(r)]) {
            matched = true;
            out_left.push_back(t);
            out_right.push_back(r);
            if (keep_right) right_matched_[size_t(r)] = true;
          }
          if (!matched && keep_left) out_left.push_back(t), out_right.push_back(right_rows);
        }
      }
    }
    for (int64_t begin = dense_ && !on_ ? left.num_rows() : 0; begin < left.num_rows(); begin += step) {
      const int64_t end = std::min(left.num_rows(), begin + step);
      std::vector<int64_t> cand_left, cand_right;
      for (int64_t t = begin; t < end; ++t) {
        if (keys_.empty()) {
          for (int64_t r = 0; r < right_rows; ++r) cand_left.push_back(t), cand_right.push_back(r);
        } else if (auto number = Number(left, true, t, key, false)) {
          for (int64_t r = first_[*number]; r >= 0; r = next_[size_t(r)]) cand_left.push_back(t), cand_right.push_back(r);
        }
      }
      std::vector<bool> holds(cand_left.size(), true);
      if (on_ && !cand_left.empty()) {
        std::vector<ArrayPtr> columns;
        for (const auto& c : left.columns()) columns.push_back(Take(*c, cand_left));
        for (const auto& c : right_->columns()) columns.push_back(Take(*c, cand_right));
        holds = EvaluatePredicate(*on_, RecordBatch(schema_, std::move(columns), int64_t(cand_left.size())));
      }
      size_t i = 0;
      for (int64_t t = begin; t < end; ++t) {
        bool matched = false;
        for (; i < cand_left.size() && cand_left[i] == t; ++i) {
          if (!holds[i]) continue;
          matched = true;
          out_left.push_back(t);
          out_right.push_back(cand_right[i]);
          if (keep_right) right_matched_[size_t(cand_right[i])] = true;
        }
        if (!matched && keep_left) out_left.push_back(t), out_right.push_back(right_rows);
      }
    }
    // Every left row once, in order (a foreign key into a dimension table): the left
    // columns are output as they are.
    const bool every_left_row = int64_t(out_left.size()) == left.num_rows() &&
                                (out_left.empty() || out_left.back() == left.num_rows() - 1) &&
                                std::adjacent_find(out_left.begin(), out_left.end()) == out_left.end();
    std::vector<ArrayPtr> columns;
    for (const auto& c : left.columns()) columns.push_back(every_left_row ? c : Take(*c, out_left));
    // The padded columns' NULL row is taken only for a kept left row: an inner join's
    // output needs no validity where the right side has no NULLs.
    for (const auto& c : keep_left ? right_padded_ : right_->columns()) columns.push_back(Take(*c, out_right));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(out_left.size()));
  }

  std::unique_ptr<RecordBatchReader> left_;
  RecordBatchPtr pending_;      // the left batch being joined, from row pending_offset_ on
  int64_t pending_offset_ = 0;
  RecordBatchPtr right_;
  JoinClause::Kind kind_;
  SchemaPtr schema_;
  BoundExprPtr on_;
  std::vector<JoinKey> keys_;
  KeyNumbering numbering_;
  bool dense_ = false;
  int64_t dense_base_ = 0;
  bool unique_right_ = true;  // no two right rows share a key
  std::vector<int64_t> first_, next_;
  std::vector<ArrayPtr> right_padded_;
  std::vector<bool> right_matched_;
  bool left_done_ = false, unmatched_done_ = false;
};

std::unique_ptr<RecordBatchReader> MakeJoin(const Context& ctx, std::unique_ptr<RecordBatchReader> left,
                                            std::unique_ptr<RecordBatchReader> right, JoinClause::Kind kind,
                                            const ExprPtr& on, int depth);

// A join whose right side outgrew its share of the memory budget (a grace hash join):
// both sides are split by a hash of their rows' exact keys into partitions on disk, and
// each pair of partitions is joined in turn, split again if its right side is still too
// large. Rows that can match share a partition, so each partition's join gives its share
// of the output, outer joins' unmatched rows included. A row with a NULL key matches
// nothing; it goes to partition 0 to come out there, as an outer join's.
class PartitionedJoinReader final : public RecordBatchReader {
 public:
  PartitionedJoinReader(const Context& ctx, std::unique_ptr<RecordBatchReader> left,
                        std::vector<RecordBatchPtr> right_read, std::unique_ptr<RecordBatchReader> right_rest,
                        JoinClause::Kind kind, ExprPtr on, std::vector<JoinKey> keys, int depth)
      : ctx_(ctx), left_(std::move(left)), kind_(kind), on_(std::move(on)), keys_(std::move(keys)), depth_(depth) {
    left_schema_ = left_->schema();
    right_schema_ = right_rest->schema();
    schema_ = JoinedSchema(*left_schema_, *right_schema_);
    right_parts_.resize(kSpillPartitions);
    for (const auto& batch : right_read) Split(*batch, false, right_parts_);
    right_read.clear();
    while (auto batch = right_rest->Next()) Split(*batch, false, right_parts_);
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    if (left_) {  // the left side is split on the first call, not while the plan is made
      left_parts_.resize(kSpillPartitions);
      while (auto batch = left_->Next()) Split(*batch, true, left_parts_);
      left_.reset();
    }
    for (;;) {
      if (current_)
        if (auto batch = current_->Next()) return batch;
      current_.reset();
      if (next_part_ == kSpillPartitions) return nullptr;
      const size_t p = next_part_++;
      current_ = MakeJoin(ctx_, Read(left_parts_[p], left_schema_), Read(right_parts_[p], right_schema_), kind_, on_,
                          depth_ + 1);
    }
  }

 private:
  void Split(const RecordBatch& batch, bool left, std::vector<std::unique_ptr<SpillFile>>& parts) {
    std::vector<std::vector<int64_t>> rows(kSpillPartitions);
    std::string key;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      const bool valid = RowKey(batch, keys_, left, r, key);
      rows[valid ? SpillPartitionOf(std::hash<std::string_view>{}(key), depth_) : 0].push_back(r);
    }
    for (size_t p = 0; p < kSpillPartitions; ++p) {
      if (rows[p].empty()) continue;
      if (!parts[p]) parts[p] = std::make_unique<SpillFile>(*batch.schema(), "a JOIN partition");
      parts[p]->Write(*batch.Take(rows[p]));
    }
  }

  static std::unique_ptr<RecordBatchReader> Read(std::unique_ptr<SpillFile>& part, const SchemaPtr& schema) {
    if (!part) return BatchesReader(schema, {});
    auto reader = part->Read();
    part.reset();
    return reader;
  }

  const Context& ctx_;
  std::unique_ptr<RecordBatchReader> left_;  // until split
  JoinClause::Kind kind_;
  ExprPtr on_;
  std::vector<JoinKey> keys_;  // the exact ones, which partition
  int depth_;
  SchemaPtr left_schema_, right_schema_, schema_;
  std::vector<std::unique_ptr<SpillFile>> left_parts_, right_parts_;  // null: no rows
  size_t next_part_ = 0;
  std::unique_ptr<RecordBatchReader> current_;  // the join of partition next_part_ - 1
};

// A join with no exact equality between its sides whose right side outgrew its share of
// the budget (a block nested loop): the right side goes to a file on disk, and the left
// side is read in blocks of about the share, each joined with every right batch read
// back in turn, a bounded number of pairs at a time. A block's left rows that no right
// row matched follow the block (LEFT, FULL); a bit per right row records whether any
// block matched it, and the right rows never matched come last (RIGHT, FULL).
class NestedLoopJoinReader final : public RecordBatchReader {
 public:
  NestedLoopJoinReader(const Context& ctx, std::unique_ptr<RecordBatchReader> left,
                       std::vector<RecordBatchPtr> right_read, std::unique_ptr<RecordBatchReader> right_rest,
                       JoinClause::Kind kind, const ExprPtr& on, uint64_t share)
      : left_(std::move(left)), kind_(kind), share_(std::max<uint64_t>(share, 1)) {
    right_schema_ = right_rest->schema();
    schema_ = JoinedSchema(*left_->schema(), *right_schema_);
    if (on) {
      // The ON clause sees only the columns it names, so that a round takes those alone
      // for every pair and the others for the pairs that match.
      const std::vector<std::string> named = ReferencedColumns(*on);
      std::vector<FieldPtr> fields;
      for (size_t c = 0; c < schema_->num_fields(); ++c) {
        const std::string& name = schema_->field(c)->name;
        const bool used = std::any_of(named.begin(), named.end(), [&](const std::string& n) {
          return n == name || n.rfind(name + ".", 0) == 0;
        });
        if (!used) continue;
        on_columns_.push_back(c);
        fields.push_back(schema_->field(c));
      }
      on_schema_ = std::make_shared<Schema>(fields);
      on_ = Bind(*on, *on_schema_);
      if (on_->type->id() != TypeId::kBool)
        ctx.Fail(on->position, fmt::format("a JOIN's ON clause must be boolean, not {}", on_->type->ToString()));
    }
    right_ = std::make_unique<SpillFile>(*right_schema_, "a JOIN's right side");
    auto keep = [&](const RecordBatch& batch) {
      if (batch.num_rows() == 0) return;
      right_->Write(batch);
      right_rows_ += batch.num_rows();
      right_bytes_ += BufferBytes(batch);
    };
    for (const auto& batch : right_read) keep(*batch);
    right_read.clear();
    while (auto batch = right_rest->Next()) keep(*batch);
    if (keep_right()) right_matched_.assign(size_t(right_rows_), false);
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    for (;;) {
      if (!block_) {
        if (!NextBlock()) return Unmatched();
        continue;
      }
      if (!right_batch_ || next_left_ == block_->num_rows()) {
        if (right_batch_) right_base_ += right_batch_->num_rows();
        right_batch_ = right_reader_->Next();
        next_left_ = 0;
        if (!right_batch_) {  // the block has met every right row
          auto out = keep_left() ? UnmatchedLeft() : nullptr;
          block_.reset();
          if (out) return out;
          continue;
        }
      }
      if (auto out = JoinRound(); out->num_rows() > 0) return out;
    }
  }

 private:
  bool keep_left() const { return kind_ == JoinClause::Kind::kLeft || kind_ == JoinClause::Kind::kFull; }
  bool keep_right() const { return kind_ == JoinClause::Kind::kRight || kind_ == JoinClause::Kind::kFull; }

  // Reads the next block of left rows, about the share of them, and starts reading the
  // right side back; false at the left side's end. A batch the block has no room for is
  // cut, its rows past the room left for the next block.
  bool NextBlock() {
    std::vector<RecordBatchPtr> batches;
    uint64_t bytes = 0;
    while (bytes < share_) {
      RecordBatchPtr batch = left_rest_ ? std::move(left_rest_) : left_done_ ? nullptr : left_->Next();
      if (!batch) {
        left_done_ = true;
        break;
      }
      const int64_t rows = batch->num_rows();
      if (rows == 0) continue;
      const uint64_t row_bytes = std::max<uint64_t>(1, BufferBytes(*batch) / uint64_t(rows));
      const int64_t room = int64_t(std::max<uint64_t>(1, (share_ - bytes) / row_bytes));
      if (room < rows) {
        left_rest_ = batch->Slice(room, rows - room);
        batch = batch->Slice(0, room);
      }
      bytes += BufferBytes(*batch);
      batches.push_back(std::move(batch));
    }
    if (batches.empty()) return false;
    block_ = RecordBatch::Concatenate(left_->schema(), batches);
    block_matched_.assign(size_t(block_->num_rows()), false);
    // Pairs per round: a round's pairs, their columns taken for the ON clause, take about
    // the share.
    const uint64_t pair_bytes = std::max<uint64_t>(
        1, bytes / uint64_t(block_->num_rows()) + right_bytes_ / uint64_t(std::max<int64_t>(right_rows_, 1)));
    pairs_per_round_ = int64_t(std::clamp<uint64_t>(share_ / pair_bytes, 1024, uint64_t(kPairsPerRound)));
    right_reader_ = right_->Read();
    right_batch_.reset();
    right_base_ = 0;
    return true;
  }

  // The pairs of the next left rows of the block with the current right batch whose ON
  // clause holds.
  RecordBatchPtr JoinRound() {
    const RecordBatch& left = *block_;
    const RecordBatch& right = *right_batch_;
    const int64_t right_rows = right.num_rows();
    const int64_t step = std::max<int64_t>(1, pairs_per_round_ / std::max<int64_t>(1, right_rows));
    const int64_t begin = next_left_, end = std::min(left.num_rows(), begin + step);
    next_left_ = end;
    std::vector<int64_t> pair_left, pair_right;
    pair_left.reserve(size_t((end - begin) * right_rows));
    pair_right.reserve(size_t((end - begin) * right_rows));
    for (int64_t t = begin; t < end; ++t)
      for (int64_t r = 0; r < right_rows; ++r) pair_left.push_back(t), pair_right.push_back(r);
    if (on_ && !pair_left.empty()) {
      std::vector<ArrayPtr> columns;
      const size_t left_columns = left.columns().size();
      for (const size_t c : on_columns_)
        columns.push_back(c < left_columns ? Take(*left.columns()[c], pair_left)
                                           : Take(*right.columns()[c - left_columns], pair_right));
      const std::vector<bool> holds =
          EvaluatePredicate(*on_, RecordBatch(on_schema_, std::move(columns), int64_t(pair_left.size())));
      size_t kept = 0;
      for (size_t i = 0; i < holds.size(); ++i)
        if (holds[i]) pair_left[kept] = pair_left[i], pair_right[kept++] = pair_right[i];
      pair_left.resize(kept);
      pair_right.resize(kept);
    }
    for (size_t i = 0; i < pair_left.size(); ++i) {
      if (keep_left()) block_matched_[size_t(pair_left[i])] = true;
      if (keep_right()) right_matched_[size_t(right_base_ + pair_right[i])] = true;
    }
    std::vector<ArrayPtr> columns;
    for (const auto& c : left.columns()) columns.push_back(Take(*c, pair_left));
    for (const auto& c : right.columns()) columns.push_back(Take(*c, pair_right));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(pair_left.size()));
  }

  // The block's left rows no right row matched, with NULL right columns; null if none.
  RecordBatchPtr UnmatchedLeft() {
    std::vector<int64_t> rows;
    for (int64_t t = 0; t < block_->num_rows(); ++t)
      if (!block_matched_[size_t(t)]) rows.push_back(t);
    if (rows.empty()) return nullptr;
    std::vector<ArrayPtr> columns;
    for (const auto& c : block_->columns()) columns.push_back(Take(*c, rows));
    for (const auto& f : right_schema_->fields()) columns.push_back(MakeNullArray(f->type, int64_t(rows.size())));
    return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(rows.size()));
  }

  // After the last block: the right rows no left row matched, a right batch at a time,
  // with NULL left columns (RIGHT, FULL); null at the end.
  RecordBatchPtr Unmatched() {
    if (!keep_right()) return nullptr;
    if (!unmatched_reader_) {
      unmatched_reader_ = right_->Read();
      right_base_ = 0;
    }
    while (auto batch = unmatched_reader_->Next()) {
      std::vector<int64_t> rows;
      for (int64_t r = 0; r < batch->num_rows(); ++r)
        if (!right_matched_[size_t(right_base_ + r)]) rows.push_back(r);
      right_base_ += batch->num_rows();
      if (rows.empty()) continue;
      std::vector<ArrayPtr> columns;
      for (const auto& f : left_->schema()->fields()) columns.push_back(MakeNullArray(f->type, int64_t(rows.size())));
      for (const auto& c : batch->columns()) columns.push_back(Take(*c, rows));
      return std::make_shared<RecordBatch>(schema_, std::move(columns), int64_t(rows.size()));
    }
    return nullptr;
  }

  std::unique_ptr<RecordBatchReader> left_;
  JoinClause::Kind kind_;
  uint64_t share_;
  SchemaPtr right_schema_, schema_;
  BoundExprPtr on_;  // null: every pair (CROSS JOIN); bound to on_schema_
  std::vector<size_t> on_columns_;  // the joined columns ON names, in schema_ order
  SchemaPtr on_schema_;
  std::unique_ptr<SpillFile> right_;
  int64_t right_rows_ = 0;
  uint64_t right_bytes_ = 0;
  std::vector<bool> right_matched_;  // RIGHT, FULL: over every block
  bool left_done_ = false;
  RecordBatchPtr left_rest_;          // rows of a left batch cut at a block's end
  RecordBatchPtr block_;              // the left rows being joined
  std::vector<bool> block_matched_;   // LEFT, FULL
  int64_t pairs_per_round_ = kPairsPerRound;
  std::unique_ptr<RecordBatchReader> right_reader_;  // the right side read back for the block
  RecordBatchPtr right_batch_;
  int64_t right_base_ = 0;  // the right side's row number of right_batch_'s first row
  int64_t next_left_ = 0;   // the block's first row not yet paired with right_batch_
  std::unique_ptr<RecordBatchReader> unmatched_reader_;
};

// Reads the right side, and joins it held in memory (JoinReader) or, once it outgrows
// its share of the budget, partitioned by its exact equality keys or, without one, by a
// block nested loop over the right side on disk. The share is a quarter: the held rows
// are copied once more (with a NULL row for outer joins), and hashed. A partition past
// kMaxSpillDepth is held whatever its size: what is left of it is many rows of few keys.
std::unique_ptr<RecordBatchReader> MakeJoin(const Context& ctx, std::unique_ptr<RecordBatchReader> left,
                                            std::unique_ptr<RecordBatchReader> right, JoinClause::Kind kind,
                                            const ExprPtr& on, int depth) {
  const uint64_t share = uint64_t(std::max<int64_t>(ctx.memory_budget, 1)) / 4;
  std::vector<JoinKey> exact;
  if (on) {
    std::vector<JoinKey> keys;
    EquiKeys(on, *left->schema(), *right->schema(), keys);
    for (const auto& k : keys)
      if (k.form != KeyForm::kText) exact.push_back(k);  // ValueKey may tell equal values apart
  }
  std::vector<RecordBatchPtr> read;
  uint64_t bytes = 0;
  while (auto batch = right->Next()) {
    bytes += BufferBytes(*batch);
    read.push_back(std::move(batch));
    if (bytes <= share) continue;
    if (exact.empty())
      return std::make_unique<NestedLoopJoinReader>(ctx, std::move(left), std::move(read), std::move(right), kind, on,
                                                    share);
    if (depth < kMaxSpillDepth)
      return std::make_unique<PartitionedJoinReader>(ctx, std::move(left), std::move(read), std::move(right), kind, on,
                                                     std::move(exact), depth);
  }
  RecordBatchPtr held = RecordBatch::Concatenate(right->schema(), read);
  auto join = std::make_unique<JoinReader>(ctx, std::move(left), std::move(held), kind, on);
  const int threads = ReadAheadThreads();
  if (threads < 2 || !join->ProbesAlone()) return join;
  // The probe on several threads, the left batches' order kept.
  auto left_rows = join->TakeLeft();
  SchemaPtr schema = join->schema();
  std::shared_ptr<JoinReader> shared = std::move(join);
  return ParallelMap(std::move(left_rows), std::move(schema),
                     [shared](const RecordBatchPtr& batch) { return shared->Probe(*batch); }, threads);
}

}  // namespace

// The sides of a FROM clause with joins as they are opened: side s is refs[s]; a table's
// dataset is opened first (tables[s]), its reader once its columns and filter are known;
// any other source's reader at once.
struct JoinedSource::Sources {
  std::vector<const TableRef*> refs;
  std::vector<std::unique_ptr<RecordBatchReader>> readers;
  std::vector<DatasetPtr> tables;
};

JoinedSource::JoinedSource(const Context& ctx, const SelectStmt& stmt, bool plan_only) : ctx_(ctx) {
  Sources sources;
  sources.refs = {&*stmt.from};
  for (const auto& j : stmt.joins) sources.refs.push_back(&j.table);
  for (const auto& j : stmt.joins)
    for (const auto& c : j.using_columns) {
      using_columns_.push_back(c);
      if (j.kind == JoinClause::Kind::kRight || j.kind == JoinClause::Kind::kFull) coalesced_.push_back(c);
    }
  OpenSides(sources);
  OrderCommaJoins(stmt, sources);
  OpenScans(stmt, sources, plan_only);
  if (plan_only) return;
  ListStarColumns(stmt, sources);
  JoinLeftToRight(stmt, sources);
}

// Every side's columns first: resolving the WHERE needs them all.
void JoinedSource::OpenSides(Sources& sources) {
  const size_t n = sources.refs.size();
  sources.readers.resize(n);
  sources.tables.resize(n);
  for (size_t s = 0; s < n; ++s) {
    const TableRef& ref = *sources.refs[s];
    Side side;
    side.qualifier = ref.qualifier();
    for (const auto& other : sides_)
      if (other.qualifier == side.qualifier)
        ctx_.Fail(ref.position, fmt::format("'{}' names two sources of the FROM clause; give one an alias",
                                            side.qualifier));
    if (ref.kind == TableRef::Kind::kTable) {
      sources.tables[s] = OpenTable(ctx_, ref);
      for (const auto& f : sources.tables[s]->schema()->fields()) side.columns.push_back(f->name);
    } else {
      sources.readers[s] = OpenSource(ctx_, ref, false, false);
      for (const auto& f : sources.readers[s]->schema()->fields()) side.columns.push_back(f->name);
    }
    sides_.push_back(std::move(side));
  }
}

// A WHERE term that reads one table is also pushed into that table's scan, where rows
// that fail it are never joined (and an index may answer it), when no join can give
// that table's columns NULLs the term would see: the first table under INNER, LEFT and
// CROSS joins only, a later one when every join is INNER or CROSS. The whole WHERE is
// still evaluated over the joined rows.
std::vector<std::vector<ExprPtr>> JoinedSource::PushedTerms(const SelectStmt& stmt, const Sources& sources) const {
  auto inner = [](const JoinClause& j) { return j.kind == JoinClause::Kind::kInner || j.kind == JoinClause::Kind::kCross; };
  const bool all_inner = std::all_of(stmt.joins.begin(), stmt.joins.end(), inner);
  const bool first_kept = std::all_of(stmt.joins.begin(), stmt.joins.end(),
                                      [&](const JoinClause& j) { return inner(j) || j.kind == JoinClause::Kind::kLeft; });
  std::vector<std::vector<ExprPtr>> pushed(sources.refs.size());
  for (const auto& term : Conjuncts(stmt.where)) {
    if (HasCorrelatedMarker(term)) continue;  // its subquery's column exists only after the join
    std::set<size_t> reads = SidesRead(term);
    if (reads.size() != 1) continue;
    const size_t s = *reads.begin();
    if (sources.refs[s]->kind != TableRef::Kind::kTable || !(s == 0 ? first_kept : all_inner)) continue;
    pushed[s].push_back(StripQualifier(term, {sides_[s].qualifier}));
  }
  return pushed;
}

std::set<size_t> JoinedSource::SidesRead(const ExprPtr& e) const {
  std::set<size_t> of;
  for (const auto& column : ReferencedColumns(*Resolve(e)))
    for (size_t k = 0; k < sides_.size(); ++k)
      if (column.rfind(sides_[k].qualifier + ".", 0) == 0) of.insert(k);
  return of;
}

// Whether join `j` (joining side s) can hash: USING, or an ON term `x = y` with x over
// side s alone and y over earlier sides alone (as EquiKeys finds them, types aside).
bool JoinedSource::HasSideEquality(const JoinClause& j, size_t s) const {
  if (!j.using_columns.empty()) return true;
  const auto terms = Conjuncts(j.on);
  return std::any_of(terms.begin(), terms.end(), [&](const ExprPtr& term) { return JoinsSideToEarlier(term, s); });
}

bool JoinedSource::JoinsSideToEarlier(const ExprPtr& term, size_t s) const {
  if (!term || term->kind != ExprKind::kBinary || term->binary_op != BinaryOp::kEq) return false;
  const auto a = SidesRead(term->args[0]), b = SidesRead(term->args[1]);
  auto only_new = [&](const std::set<size_t>& x) { return x.size() == 1 && *x.begin() == s; };
  auto only_old = [&](const std::set<size_t>& x) { return !x.empty() && *x.rbegin() < s; };
  return (only_new(a) && only_old(b)) || (only_old(a) && only_new(b));
}

namespace {

// The terms of a WHERE's AND, and the terms every branch of an OR among them has (as
// text): `(k = j AND a) OR (k = j AND b)` implies k = j, which can key a join.
std::vector<ExprPtr> ImpliedConjuncts(const ExprPtr& where) {
  std::vector<ExprPtr> terms = Conjuncts(where);
  const size_t given = terms.size();
  for (size_t t = 0; t < given; ++t) {
    const ExprPtr& e = terms[t];
    if (e->kind != ExprKind::kBinary || e->binary_op != BinaryOp::kOr) continue;
    std::vector<ExprPtr> branches;
    std::function<void(const ExprPtr&)> split = [&](const ExprPtr& b) {
      if (b->kind == ExprKind::kBinary && b->binary_op == BinaryOp::kOr) {
        split(b->args[0]);
        split(b->args[1]);
      } else {
        branches.push_back(b);
      }
    };
    split(e);
    for (const auto& candidate : Conjuncts(branches[0])) {
      const std::string text = ToString(*candidate);
      const bool everywhere = std::all_of(branches.begin() + 1, branches.end(), [&](const ExprPtr& b) {
        const auto others = Conjuncts(b);
        return std::any_of(others.begin(), others.end(), [&](const ExprPtr& o) { return ToString(*o) == text; });
      });
      if (everywhere) terms.push_back(candidate);
    }
  }
  return terms;
}

}  // namespace

// Moving an equality from WHERE to an INNER or CROSS join's ON keeps the rows the same
// when no later join is outer: the WHERE (still evaluated whole over the joined rows)
// would drop every pair it fails anyway.
ExprPtr JoinedSource::WhereKeys(const SelectStmt& stmt, size_t s) const {
  auto inner = [](const JoinClause& j) { return j.kind == JoinClause::Kind::kInner || j.kind == JoinClause::Kind::kCross; };
  if (!std::all_of(stmt.joins.begin(), stmt.joins.end(), inner)) return nullptr;
  ExprPtr keys;
  for (const auto& term : ImpliedConjuncts(stmt.where))
    if (!HasCorrelatedMarker(term) && !HasSubquery(term) && JoinsSideToEarlier(term, s)) AndOnto(keys, term);
  return keys;
}

// FROM a, b, c (commas only): the largest table (by the rows its manifest records)
// streams, and the others are held, the small ones hashed instead of the big one, as
// DuckDB builds on the small side; they come in an order where each joins an earlier one
// through a WHERE equality wherever one can (the next such in FROM order, else the next
// in FROM order), so that the join hashes where FROM order would cross two tables: FROM
// part, supplier, partsupp WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey joined
// part with supplier pair by pair. Not with * or q.*, whose columns come in FROM order;
// the first table stays first when a side is not a table (its size is unknown until read).
void JoinedSource::OrderCommaJoins(const SelectStmt& stmt, Sources& sources) {
  const size_t n = sides_.size();
  const bool commas = std::all_of(stmt.joins.begin(), stmt.joins.end(), [](const JoinClause& j) {
    return j.kind == JoinClause::Kind::kCross && !j.on && j.using_columns.empty();
  });
  const bool star = std::any_of(stmt.items.begin(), stmt.items.end(), [](const SelectItem& i) { return !i.expr; });
  if (n < 2 || !commas || star) return;
  size_t first = 0;
  if (std::all_of(sources.tables.begin(), sources.tables.end(), [](const DatasetPtr& t) { return t != nullptr; })) {
    uint64_t most = 0;
    for (size_t s = 0; s < n; ++s)
      if (const uint64_t rows = sources.tables[s]->PhysicalRows(); rows > most) {
        most = rows;
        first = s;
      }
  }
  std::vector<ExprPtr> equalities;
  for (const auto& term : ImpliedConjuncts(stmt.where))
    if (term->kind == ExprKind::kBinary && term->binary_op == BinaryOp::kEq && !HasCorrelatedMarker(term) &&
        !HasSubquery(term))
      equalities.push_back(term);
  std::vector<bool> placed(n, false);
  placed[first] = true;
  // Whether an equality joins side s, alone on one side of it, to placed sides alone.
  auto joins_placed = [&](size_t s) {
    return std::any_of(equalities.begin(), equalities.end(), [&](const ExprPtr& term) {
      const auto a = SidesRead(term->args[0]), b = SidesRead(term->args[1]);
      auto only_s = [&](const std::set<size_t>& x) { return x.size() == 1 && *x.begin() == s; };
      auto only_placed = [&](const std::set<size_t>& x) {
        return !x.empty() && std::all_of(x.begin(), x.end(), [&](size_t k) { return placed[k]; });
      };
      return (only_s(a) && only_placed(b)) || (only_placed(a) && only_s(b));
    });
  };
  std::vector<size_t> order = {first};
  while (order.size() < n) {
    size_t next = n;
    for (size_t s = 0; s < n && next == n; ++s)
      if (!placed[s] && joins_placed(s)) next = s;
    for (size_t s = 0; s < n && next == n; ++s)
      if (!placed[s]) next = s;
    order.push_back(next);
    placed[next] = true;
  }
  if (std::is_sorted(order.begin(), order.end())) return;
  Sources reordered;
  std::vector<Side> sides;
  for (size_t s : order) {
    reordered.refs.push_back(sources.refs[s]);
    reordered.readers.push_back(std::move(sources.readers[s]));
    reordered.tables.push_back(std::move(sources.tables[s]));
    sides.push_back(std::move(sides_[s]));
  }
  sources = std::move(reordered);
  sides_ = std::move(sides);
}

// Plans every table's scan, reading the columns the statement names and its pushed terms
// (a line of plan_ per side), and opens it unless `plan_only`; every side's reader then
// names its columns "<qualifier>.<column>".
void JoinedSource::OpenScans(const SelectStmt& stmt, Sources& sources, bool plan_only) {
  const bool star = std::any_of(stmt.items.begin(), stmt.items.end(), [](const SelectItem& i) { return !i.expr; });
  const auto paths = StatementPaths(stmt);
  const std::vector<std::vector<ExprPtr>> pushed = PushedTerms(stmt, sources);
  for (size_t s = 0; s < sources.refs.size(); ++s) {
    Side& side = sides_[s];
    const DatasetPtr& table = sources.tables[s];
    std::optional<std::vector<std::string>> read;
    if (!star && table) {
      read.emplace();
      for (const auto& name : side.columns) {
        bool named = Has(using_columns_, name);
        for (const auto& p : paths)
          named |= (p.size() >= 2 && p[0] == side.qualifier && p[1] == name) || p[0] == name;
        if (named) read->push_back(name);
      }
    }
    ExprPtr filter;  // the pushed terms, ANDed
    std::string filter_text;
    for (const auto& term : pushed[s]) {
      filter = filter ? Expr::Binary(BinaryOp::kAnd, filter, term) : term;
      filter_text += (filter_text.empty() ? "" : " AND ") + ToString(*term);
    }
    std::string& line = plan_.emplace_back(fmt::format("{}: {}", side.qualifier, sources.refs[s]->name));
    if (sources.refs[s]->kind != TableRef::Kind::kTable) line += " (not a table: read whole)";
    if (s == 0) line += ", streamed";
    else if (const ExprPtr keys = WhereKeys(stmt, s); keys && !HasSideEquality(stmt.joins[s - 1], s))
      line += fmt::format(", hashed ({} JOIN on the WHERE's {})", JoinKindName(JoinClause::Kind::kInner),
                          ToString(*keys));
    else line += fmt::format(", {} ({} JOIN)", HasSideEquality(stmt.joins[s - 1], s) ? "hashed" : "nested loop",
                             JoinKindName(stmt.joins[s - 1].kind));
    if (filter) line += "; filter pushed into its scan: " + filter_text;
    if (table) line += "; columns: " + (read ? (read->empty() ? std::string("none") : fmt::format("{}", fmt::join(*read, ", "))) : std::string("all"));
    if (plan_only) continue;
    auto& reader = sources.readers[s];
    if (table) reader = OpenSource(ctx_, *sources.refs[s], false, false, filter, nullptr, read, table);
    reader = std::make_unique<RenameReader>(std::move(reader), side.qualifier + ".");
  }
}

// SELECT *: every column read, a USING column once (from the side left of its join).
void JoinedSource::ListStarColumns(const SelectStmt& stmt, const Sources& sources) {
  for (size_t s = 0; s < sources.readers.size(); ++s) {
    const auto& join_using = s == 0 ? std::vector<std::string>{} : stmt.joins[s - 1].using_columns;
    const std::string prefix = sides_[s].qualifier + ".";
    for (const auto& f : sources.readers[s]->schema()->fields()) {
      const std::string name = f->name.substr(prefix.size());
      sides_[s].read.push_back(name);
      if (Has(join_using, name)) continue;
      // A USING column that an outer join may leave NULL on the left is the first non-NULL
      // of its sides (resolved from its bare name).
      star_.push_back({Has(coalesced_, name) ? name : f->name, name});
    }
  }
}

// Join left to right: the first side streams, each later one is held.
void JoinedSource::JoinLeftToRight(const SelectStmt& stmt, Sources& sources) {
  rows_ = std::move(sources.readers[0]);
  for (size_t j = 0; j < stmt.joins.size(); ++j) {
    const JoinClause& join = stmt.joins[j];
    ExprPtr on = join.on ? Resolve(join.on) : nullptr;
    for (const auto& c : join.using_columns) {
      // The left column is the first earlier side's that has it.
      const Side* left = nullptr;
      for (size_t s = 0; s <= j && !left; ++s)
        if (Has(sides_[s].columns, c)) left = &sides_[s];
      if (!left || !Has(sides_[j + 1].columns, c))
        ctx_.Fail(join.position, fmt::format("USING column '{}' is not on both sides of the join", c));
      auto eq = Expr::Binary(BinaryOp::kEq, Expr::Column(left->qualifier + "." + c),
                             Expr::Column(sides_[j + 1].qualifier + "." + c));
      AndOnto(on, eq);
    }
    JoinClause::Kind kind = join.kind;
    if (const ExprPtr keys = WhereKeys(stmt, j + 1)) {
      AndOnto(on, Resolve(keys));
      if (kind == JoinClause::Kind::kCross) kind = JoinClause::Kind::kInner;
    }
    // Probing runs on a thread of its own when it is worth one, beside the scan's and
    // the statement's.
    rows_ = ReadAhead(MakeJoin(ctx_, std::move(rows_), std::move(sources.readers[j + 1]), kind, on, 0));
  }
}

std::vector<std::pair<std::string, std::string>> JoinedSource::star(const std::string& q, int position) const {
  std::vector<std::string> names;
  for (const auto& side : sides_) {
    if (side.qualifier != q) {
      names.push_back(side.qualifier);
      continue;
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& name : side.read) out.push_back({q + "." + name, name});
    return out;
  }
  ctx_.Fail(position, fmt::format("'{}' is not in the FROM clause ({})", q, fmt::join(names, ", ")));
}

ExprPtr JoinedSource::Resolve(const ExprPtr& e, const std::vector<std::string>& keep) const {
  return MapColumns(e, [&](const Expr& c) -> ExprPtr {
    const auto& p = c.path;
    auto renamed = [&](const std::string& qualifier, size_t skip) {
      std::vector<std::string> path = {qualifier + "." + p[skip]};
      path.insert(path.end(), p.begin() + long(skip) + 1, p.end());
      return RenamedColumn(c, std::move(path));
    };
    if (p.size() == 1 && Has(keep, p[0])) return nullptr;
    if (p.size() >= 2) {
      for (const auto& side : sides_) {
        if (side.qualifier != p[0]) continue;
        if (!Has(side.columns, p[1])) ctx_.Fail(c.position, fmt::format("'{}' has no column '{}'", p[0], p[1]));
        return renamed(side.qualifier, 1);
      }
    }
    std::vector<const Side*> with;
    for (const auto& side : sides_)
      if (Has(side.columns, p[0])) with.push_back(&side);
    if (with.empty()) return nullptr;  // the binder reports the unknown column
    if (with.size() > 1 && !Has(using_columns_, p[0]))
      ctx_.Fail(c.position, fmt::format("column reference '{}' is ambiguous: write {}.{} or {}.{}", p[0],
                                        with[0]->qualifier, p[0], with[1]->qualifier, p[0]));
    if (with.size() > 1 && p.size() == 1 && Has(coalesced_, p[0])) {  // as DuckDB: either side's value
      std::vector<ExprPtr> sides;
      for (const Side* side : with) sides.push_back(renamed(side->qualifier, 0));
      auto either = std::make_shared<Expr>(c);  // keeps the reference's place in the statement
      either->kind = ExprKind::kCall;
      either->path.clear();
      either->function = "coalesce";
      either->args = std::move(sides);
      return ExprPtr(either);
    }
    return renamed(with[0]->qualifier, 0);
  });
}

}  // namespace lancelet::sql
