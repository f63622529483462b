// Hash aggregation over a stream of batches: the state of each group's aggregates is
// kept, the input rows are not. Groups come out in order of first appearance.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

#include "lancelet/builder.h"
#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"
#include "sql/exec.h"
#include "sql/spill.h"

namespace lancelet {
class SharedSource;
}

namespace lancelet::sql {

bool IsAggregateName(const std::string& function);
// Every aggregate's name, sorted.
const std::vector<std::string>& AggregateNames();
// Whether `e` calls an aggregate (a window call's own function is no aggregate; its
// arguments may hold one).
bool ContainsAggregate(const ExprPtr& e);

// Hash keys for grouping, joins and UNION: equal values of one type give equal keys.
// kBits: integers, dates and timestamps, by their value widened to 64 bits (so equal
// integers of different widths key alike); kBytes: strings and binaries, by their bytes;
// kFloat: floating point, by the value as a double with -0.0 as 0.0 and one NaN (values
// SQL calls equal key alike); kText: anything else, by ValueKey.
enum class KeyForm : uint8_t { kBits, kBytes, kFloat, kText };
KeyForm KeyFormOf(const DataType& type);
// Appends row r's key for one column. Each form is prefix-free (a NULL is one byte; a
// value starts with another byte and has a fixed width, a length, or a terminating 0),
// so the keys of several columns concatenate unambiguously.
void AppendKey(std::string& key, const ArrayData& a, int64_t r, KeyForm form);
// Row r of a kBits column (valid), widened.
int64_t KeyBits(const ArrayData& a, int64_t r);
// KeyBits of every row (a NULL row's slot too), typed once for the column.
std::vector<int64_t> KeyBitsColumn(const ArrayData& a);
// The rows of a kBytes column as views, its offset width read once rather than per row
// as ArrayData::GetView does: grouping and joining on strings view every row.
class ByteViews {
 public:
  explicit ByteViews(const ArrayData& a);
  std::string_view operator[](int64_t r) const {
    const int64_t begin = narrow_ ? narrow_[r] : wide_[r], end = narrow_ ? narrow_[r + 1] : wide_[r + 1];
    return {data_ + begin, size_t(end - begin)};
  }

 private:
  const char* data_;
  const int32_t* narrow_ = nullptr;  // the offsets: one of the two is set
  const int64_t* wide_ = nullptr;
};

// One aggregate call of a query. `argument` is bound to the input schema (null for
// count(*)); `type` is the result type.
struct AggregateCall {
  ExprPtr call;
  BoundExprPtr argument;
  TypePtr type;
  BoundExprPtr filter;  // FILTER (WHERE c): the rows c does not hold for are left out; or null
};

// Checks the call's arguments and binds them against `input` (errors point into the
// statement).
AggregateCall BindAggregate(const Context& ctx, const ExprPtr& call, const Schema& input);

// Per-group state of one aggregate; see aggregate.cc for the kinds.
class Accumulator {
 public:
  virtual ~Accumulator() = default;
  // Row r of `argument` (null for count(*)) belongs to group groups[r]; groups below
  // `group_count` exist.
  virtual void Add(const ArrayData* argument, const std::vector<uint32_t>& groups, size_t group_count) = 0;
  // One value per group, of the call's result type.
  virtual ArrayPtr Finish(size_t group_count) = 0;
  // About what the values it keeps take (median, string_agg and DISTINCT keep their
  // groups' values; the others a fixed state per group, counted by HashAggregate).
  virtual uint64_t HeldBytes() const { return 0; }
  // Parallel aggregation: whether Merge can fold in an accumulator of the same call that
  // saw other rows, giving what one accumulator over all the rows would (floating-point
  // sums up to their order). Those whose result depends on the rows' order cannot.
  virtual bool Mergeable() const { return false; }
  // Folds in `other` (of the same kind and call): its group g becomes group into[g] of
  // this one, which has `group_count` groups.
  virtual void Merge(Accumulator& /*other*/, const std::vector<uint32_t>& /*into*/, size_t /*group_count*/) {}
};

// The accumulator of one aggregate call.
std::unique_ptr<Accumulator> MakeAccumulator(const Context& ctx, const AggregateCall& agg);

// Numbers distinct keys (byte strings) 0, 1, 2, ... by first appearance. Open addressing
// with linear probing, at most half full; the keys are copied into blocks that never
// move. A node-based map spent half of a GROUP BY hashing and chasing nodes.
class KeyNumbering {
 public:
  // The number of `key`, and whether it is new.
  std::pair<uint32_t, bool> Number(std::string_view key) { return Number(key, Hash(key)); }
  // The same, with `hash` = Hash(key).
  std::pair<uint32_t, bool> Number(std::string_view key, uint64_t hash);
  static uint64_t Hash(std::string_view key);
  // The number of `key`, if it has one.
  std::optional<uint32_t> Find(std::string_view key) const;
  // The key numbered `number`.
  std::string_view Key(uint32_t number) const { return keys_[number]; }
  // What the table takes: its slots (half again, for the copy while they grow), the keys'
  // blocks and views.
  uint64_t MemoryBytes() const {
    return slots_.size() * sizeof(Slot) * 3 / 2 + block_bytes_ + keys_.capacity() * sizeof(std::string_view);
  }
  size_t size() const { return keys_.size(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t number_plus_one = 0;  // 0: empty
  };
  void Grow();
  // A hash's first slot: its high bits, which the multiplications mix best.
  size_t Home(uint64_t hash) const { return size_t(hash >> shift_); }

  std::vector<Slot> slots_ = std::vector<Slot>(64);
  int shift_ = 64 - 6;  // 64 - log2(slots_.size())
  std::vector<std::string_view> keys_;  // by number
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0, block_size_ = 0;
  uint64_t block_bytes_ = 0;  // all blocks
};

// Groups beyond the memory budget (half of Context::memory_budget, estimated per group)
// are not made: once the budget is reached, rows of groups that exist are still added,
// and rows of new groups spill, by a hash of their key, into partitions on disk (their
// key and argument values). Each partition is then grouped on its own, the same way, so
// memory holds one partition's groups at a time. A group is never split: its first row
// decides whether it lives in memory or in a partition.
class HashAggregate {
 public:
  // `keys`: the GROUP BY expressions bound to the input schema. Without keys every row
  // falls in one group, which exists even when no row arrives (count(*) of nothing is 0).
  HashAggregate(const Context& ctx, std::vector<BoundExprPtr> keys, std::vector<AggregateCall> aggregates,
                int depth = 0);
  ~HashAggregate();

  void Add(const RecordBatch& batch) { Add(batch, 0); }
  // Adds every batch of `input`. On ReadAheadThreads() threads when there are two or more
  // and every aggregate is Mergeable: each thread reads pieces of `input` itself when it is
  // a SharedSource (a table's scan), else pulls batches from it (one at a time, under a
  // lock), into a part of its own, holding a share of the budget; the parts
  // then merge into this one, whose groups come out in order of first appearance all the
  // same. A part past its share ends the parallel phase: the rest is added here, where
  // groups past the budget spill as usual.
  void AddAll(RecordBatchReader& input);
  // Batches with columns __grp<j> (the keys) then __agg<i> (the aggregates), a row per
  // group: the groups held in memory (in order of first appearance), then each spilled
  // partition's.
  std::unique_ptr<RecordBatchReader> Finish();

 private:
  class PartitionReader;
  // Row r of batch `sequence` starts a group at (sequence << 32 | r) when first_seen_ is
  // kept (a parallel part, or the aggregate the parts merge into).
  void Add(const RecordBatch& batch, uint64_t sequence);
  bool Mergeable() const;
  // AddAll's parallel phase: threads - 1 parts and this aggregate, each with a share of
  // the budget, keeping first appearances.
  std::vector<std::unique_ptr<HashAggregate>> StartParts(int threads);
  // Folds `parts` in, and ends the parallel phase.
  void MergeParts(std::vector<std::unique_ptr<HashAggregate>>& parts);
  // AddAll over a source whose pieces each thread reads and adds itself.
  void AddShared(SharedSource& source, int threads);
  // Folds in `other`, a part over other rows: its groups join this one's by key.
  void Merge(HashAggregate& other);
  // A new group with row `row` of `keys` as its key (`key_bytes` long).
  uint32_t NewGroup(const std::vector<ArrayPtr>& keys, int64_t row, size_t key_bytes, uint64_t first_seen);
  RecordBatchPtr HeldGroups();
  void StopNewGroupsPastBudget();
  void Spill(const std::vector<ArrayPtr>& keys, const std::vector<ArrayPtr>& arguments,
             const std::vector<ArrayPtr>& filters, const std::vector<int64_t>& rows,
             const std::vector<uint64_t>& hashes);
  void Accumulate(size_t i, const ArrayPtr& argument, const std::vector<int64_t>* selected, bool any_spilled);

  const Context& ctx_;
  std::vector<BoundExprPtr> keys_;
  std::vector<AggregateCall> aggregates_;
  std::vector<std::unique_ptr<Accumulator>> accumulators_;
  KeyNumbering group_of_;                  // numbers the keys of the groups
  std::vector<uint32_t> group_of_number_;  // their groups
  int64_t null_group_ = -1;                // the group of a NULL single key
  std::vector<std::unique_ptr<ArrayBuilder>> key_values_;  // [key]: each group's key value
  size_t groups_ = 0;
  int depth_;                   // 0, or how many times these rows have been partitioned
  uint64_t held_bytes_ = 0;     // estimated memory of the groups
  bool full_ = false;           // no more groups are made; rows of new ones spill
  // A parallel part: 0, or the parts sharing the budget; past its share it sets
  // over_share_ instead of spilling.
  size_t share_of_ = 0;
  bool over_share_ = false;
  bool keep_first_seen_ = false;
  bool early_batches_ = false;        // Add takes batches before some it took: see AddShared
  std::vector<uint64_t> first_seen_;  // per group, when kept (see Add)
  bool merged_ = false;               // parts were merged: HeldGroups orders by first_seen_
  SchemaPtr spill_schema_;      // __k<j> keys, __a<i> arguments, then __f<i> FILTER values
  std::vector<std::unique_ptr<SpillFile>> partitions_;
  std::vector<uint32_t> row_groups_;  // scratch: the group of each row of a batch
  std::string key_;                   // scratch
};

}  // namespace lancelet::sql
