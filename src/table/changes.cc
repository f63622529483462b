// Dataset::Changes: the change feed (docs/changes.md). Each commit of the range names the
// rows it changed (change_rows.h); they are read at the version before it and at its own,
// by address, and come out led by the feed's columns, one commit at a time.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/change_rows.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"

namespace lancelet {

namespace {

using table::CommitRows;
using table::InPlace;
using table::Offsets;

constexpr const char* kInsert = "insert";
constexpr const char* kDelete = "delete";
constexpr const char* kPreimage = "update_preimage";
constexpr const char* kPostimage = "update_postimage";

// Reads rows of one version: the data columns asked for (by the names the feed gives them,
// `local` mapping each to its name in this version; a column the version lacks is left
// out) and the row's id and address. The batches name the columns as the feed does.
class RowSource {
 public:
  RowSource(const DatasetPtr& ds, const Offsets& rows, const std::vector<std::string>& columns,
            const std::map<std::string, std::string>& local, int64_t batch_size) {
    if (rows.empty()) return;
    ScanSpec spec;
    std::vector<std::string> read;
    for (const auto& c : columns) {
      auto it = local.find(c);
      if (it == local.end()) continue;
      read.push_back(it->second);
      names_.push_back(c);
    }
    read.push_back("_rowid");
    read.push_back("_rowaddr");
    names_.push_back("_rowid");
    names_.push_back("_rowaddr");
    spec.columns = read;
    spec.rows = std::make_shared<std::map<uint64_t, std::vector<uint64_t>>>(rows);
    spec.batch_size = batch_size;
    spec.use_index = false;
    reader_ = ds->Scan(spec);
  }
  RecordBatchPtr Next() {
    auto batch = reader_ ? reader_->Next() : nullptr;
    if (!batch) return nullptr;
    if (!schema_) {  // the version's names -> the feed's
      std::vector<FieldPtr> fields;
      for (size_t i = 0; i < names_.size(); ++i) {
        const FieldPtr& f = batch->schema()->field(i);
        fields.push_back(Field::Make(names_[i], f->type, f->nullable, f->metadata));
      }
      schema_ = std::make_shared<Schema>(std::move(fields));
    }
    return std::make_shared<RecordBatch>(schema_, batch->columns(), batch->num_rows());
  }
  // Up to `n` rows (fewer at a batch's end); null at the end.
  RecordBatchPtr Take(int64_t n) {
    if (!batch_ || next_ == batch_->num_rows()) {
      batch_ = Next();
      next_ = 0;
      if (!batch_) return nullptr;
    }
    const int64_t count = std::min(n, batch_->num_rows() - next_);
    auto out = next_ == 0 && count == batch_->num_rows() ? batch_ : batch_->Slice(next_, count);
    next_ += count;
    return out;
  }

 private:
  std::unique_ptr<RecordBatchReader> reader_;
  std::vector<std::string> names_;
  SchemaPtr schema_;
  RecordBatchPtr batch_;
  int64_t next_ = 0;
};

const ArrayData& ColumnOf(const RecordBatch& batch, const std::string& name) { return *batch.column(name); }

// The output's rows from rows read at one version, all of one `kind`, with `changed` per
// row (null: a NULL list for every row).
class ChangeBatchMaker {
 public:
  ChangeBatchMaker(SchemaPtr schema, size_t data_columns) : schema_(std::move(schema)), data_columns_(data_columns) {}
  const SchemaPtr& schema() const { return schema_; }

  RecordBatchPtr Make(const RecordBatch& read, const char* kind, uint64_t version, int64_t timestamp_micros,
                      const std::vector<std::vector<std::string>>* changed) const {
    const int64_t n = read.num_rows();
    std::vector<ArrayPtr> columns;
    BinaryBuilder kinds(DataType::Utf8());
    FixedWidthBuilder<uint64_t> versions(DataType::UInt64());
    FixedWidthBuilder<int64_t> times(schema_->field(2)->type);
    ListBuilder lists(schema_->field(4)->type);
    auto& names = static_cast<BinaryBuilder&>(lists.item_builder());
    for (int64_t i = 0; i < n; ++i) {
      kinds.Append(kind);
      versions.Append(version);
      times.Append(timestamp_micros);
      if (!changed) {
        lists.AppendNull();
        continue;
      }
      for (const auto& name : (*changed)[size_t(i)]) names.Append(name);
      lists.Append();
    }
    columns.push_back(kinds.Finish());
    columns.push_back(versions.Finish());
    columns.push_back(times.Finish());
    columns.push_back(read.column("_rowid"));
    columns.push_back(lists.Finish());
    for (size_t c = 0; c < data_columns_; ++c) {
      const FieldPtr& field = schema_->field(kMetaColumns + c);
      const int at = read.schema()->FieldIndex(field->name);
      columns.push_back(at >= 0 ? read.column(size_t(at)) : MakeNullArray(field->type, n));
    }
    return std::make_shared<RecordBatch>(schema_, std::move(columns), n);
  }

  static constexpr size_t kMetaColumns = 5;

 private:
  SchemaPtr schema_;
  size_t data_columns_;
};

// The columns among `names` whose values differ between row `i` of `pre` and of `post`
// (a column one side lacks differs).
std::vector<std::string> DifferingColumns(const RecordBatch& pre, const RecordBatch& post, int64_t i,
                                          const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    const int a = pre.schema()->FieldIndex(name), b = post.schema()->FieldIndex(name);
    if (a < 0 && b < 0) continue;
    if (a < 0 || b < 0) {
      out.push_back(name);
      continue;
    }
    const ArrayData &x = *pre.column(size_t(a)), &y = *post.column(size_t(b));
    if (!x.type->Equals(*y.type) || !SlotsEqual(x, i, y, i)) out.push_back(name);
  }
  return out;
}

class ChangeReader final : public RecordBatchReader {
 public:
  ChangeReader(DatasetPtr dataset, DatasetPtr from, const DatasetPtr& last, std::vector<uint64_t> versions,
               const ChangesOptions& options, std::vector<std::string> columns, SchemaPtr schema)
      : dataset_(std::move(dataset)),
        versions_(std::move(versions)),
        options_(options),
        columns_(std::move(columns)),
        maker_(std::move(schema), columns_.size()),
        previous_(std::move(from)) {
    for (const auto& t : options.change_types) {
      if (t == "update") {
        wanted_.insert(kPreimage);
        wanted_.insert(kPostimage);
      } else if (t == kInsert || t == kDelete || t == kPreimage || t == kPostimage) {
        wanted_.insert(t);
      } else {
        ThrowInvalid("changes: change type '{}': expected insert, delete, update, update_preimage or update_postimage", t);
      }
    }
    if (wanted_.empty()) wanted_ = {kInsert, kDelete, kPreimage, kPostimage};
    for (const auto& f : table::StateOf(last).schema.fields()) final_names_[f.id] = f.name;
  }

  SchemaPtr schema() const override { return maker_.schema(); }

  RecordBatchPtr Next() override {
    while (true) {
      if (step_) {
        if (auto batch = step_()) return batch;
        step_ = nullptr;
      }
      if (!NextStep()) return nullptr;
    }
  }

 private:
  bool Wants(const char* kind) const { return wanted_.count(kind) > 0; }

  // Moves to the next part of the current commit, or to the next commit; false at the end.
  bool NextStep() {
    while (true) {
      if (commit_ && part_ < 4) {
        const int part = part_++;
        if (SetStep(part)) return true;
        continue;
      }
      if (next_version_ == versions_.size()) return false;
      const uint64_t v = versions_[next_version_++];
      DatasetPtr after = CheckoutInRange(v);
      commit_ = std::make_unique<CommitRows>(table::RowsOfCommit(previous_, after, options_.allow_full));
      previous_ = after;
      part_ = 0;
      pairs_.clear();
    }
  }

  // Version `v` of the range, which a forced cleanup may have removed since the feed began.
  DatasetPtr CheckoutInRange(uint64_t v) const {
    try {
      return dataset_->Checkout(v);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNotFound) throw;
      ThrowNotFound("changes of '{}': version {} was removed by a forced cleanup while the feed read it ({})",
                    dataset_->uri(), v, e.what());
    }
  }

  // Part 0: rows updated in place; 1: moved rows paired; 2: deletes; 3: inserts.
  bool SetStep(int part) {
    CommitRows& c = *commit_;
    const bool images = Wants(kPreimage) || Wants(kPostimage);
    if (part == 0 && images && !c.updated.empty()) {
      Offsets rows;
      for (const auto& [id, in_place] : c.updated) rows[id] = in_place.offsets;
      const auto read = WithColumns(CompareNames());
      // The version after is read only for the columns the commit may have written.
      std::set<std::string> written;
      for (const auto& name : CompareNames()) written.insert(name);
      for (const auto& [id, in_place] : c.updated)
        for (const auto& [column, bitmap] : in_place.columns) written.insert(AfterColumnName(column));
      std::vector<std::string> read_after;
      for (const auto& name : read)
        if (written.count(name)) read_after.push_back(name);
      auto pre = std::make_shared<RowSource>(c.before, rows, read, Local(c.before), options_.batch_size);
      auto post = std::make_shared<RowSource>(c.after, rows, read_after, Local(c.after), options_.batch_size);
      step_ = [this, pre, post] { return InPlacePairs(*pre, *post); };
      return true;
    }
    if (part == 1 && c.moves == CommitRows::Moves::kInOrder) {
      if (!images) return false;
      auto pre = std::make_shared<RowSource>(c.before, c.moved_before, AllColumns(), Local(c.before), options_.batch_size);
      auto post = std::make_shared<RowSource>(c.after, c.moved_after, AllColumns(), Local(c.after), options_.batch_size);
      step_ = [this, pre, post] { return MovedPairs(*pre, *post); };
      return true;
    }
    if (part == 1 && c.moves == CommitRows::Moves::kByRowId && !c.deleted.empty() && !c.inserted.empty()) {
      MatchByRowId();
      if (!pairs_.empty() && images) {
        step_ = [this, i = size_t(0)]() mutable { return i < pairs_.size() ? pairs_[i++] : nullptr; };
        return true;
      }
      return false;
    }
    if (part == 2 && Wants(kDelete) && !c.deleted.empty()) {
      auto source = std::make_shared<RowSource>(c.before, c.deleted, columns_, Local(c.before), options_.batch_size);
      step_ = [this, source] { return Plain(*source, kDelete); };
      return true;
    }
    if (part == 3 && Wants(kInsert) && !c.inserted.empty()) {
      auto source = std::make_shared<RowSource>(c.after, c.inserted, columns_, Local(c.after), options_.batch_size);
      step_ = [this, source] { return Plain(*source, kInsert); };
      return true;
    }
    return false;
  }

  RecordBatchPtr Plain(RowSource& source, const char* kind) {
    auto read = source.Next();
    if (!read) return nullptr;
    return maker_.Make(*read, kind, commit_->version, commit_->timestamp_micros, nullptr);
  }

  // Pre- and post-images interleaved, each pair's changed columns on both rows; only the
  // images asked for are kept. A column no pair changed is copied once, from `pre`, for
  // both images: a narrow update of a wide row costs one copy of the row per image.
  RecordBatchPtr Interleave(const RecordBatch& pre, const RecordBatch& post,
                            const std::vector<std::vector<std::string>>& changed) {
    const int64_t n = pre.num_rows();
    auto a = maker_.Make(pre, kPreimage, commit_->version, commit_->timestamp_micros, &changed);
    auto b = maker_.Make(post, kPostimage, commit_->version, commit_->timestamp_micros, &changed);
    std::vector<int64_t> same, order;  // rows of `a` for each image kept; rows of a then b
    for (int64_t i = 0; i < n; ++i) {
      if (Wants(kPreimage)) same.push_back(i), order.push_back(i);
      if (Wants(kPostimage)) same.push_back(i), order.push_back(n + i);
    }
    std::set<std::string_view> touched;
    for (const auto& names : changed) touched.insert(names.begin(), names.end());
    const Schema& schema = *maker_.schema();
    std::vector<ArrayPtr> columns;
    for (size_t k = 0; k < schema.num_fields(); ++k) {
      const ArrayPtr &x = a->column(k), &y = b->column(k);
      const bool unchanged = x == y || (k >= ChangeBatchMaker::kMetaColumns && !touched.count(schema.field(k)->name));
      columns.push_back(unchanged ? Take(*x, same) : Take(*Concatenate({x, y}), order));
    }
    return std::make_shared<RecordBatch>(maker_.schema(), std::move(columns), int64_t(order.size()));
  }

  // `post` (columns the commit may have written) completed by the columns of `pre` it lacks,
  // in pre's order: the cells the commit did not write are the same in both images.
  static RecordBatchPtr WithUnwritten(const RecordBatch& post, const RecordBatch& pre) {
    std::vector<ArrayPtr> columns;
    for (const auto& field : pre.schema()->fields()) {
      const int at = post.schema()->FieldIndex(field->name);
      columns.push_back(at >= 0 ? post.column(size_t(at)) : pre.column(field->name));
    }
    return std::make_shared<RecordBatch>(pre.schema(), std::move(columns), pre.num_rows());
  }

  RecordBatchPtr InPlacePairs(RowSource& pre_source, RowSource& post_source) {
    auto pre = pre_source.Take(options_.batch_size);
    if (!pre) return nullptr;
    auto post = post_source.Take(pre->num_rows());
    const ArrayData& pre_addr = ColumnOf(*pre, "_rowaddr");
    if (!post || post->num_rows() != pre->num_rows() ||
        !ArraysEqual(pre_addr, ColumnOf(*post, "_rowaddr")))
      ThrowCorrupt("changes of '{}': version {} changed rows in place that versions {} and {} do not both hold",
                   commit_->after->uri(), commit_->version, commit_->version - 1, commit_->version);
    post = WithUnwritten(*post, *pre);
    std::vector<std::vector<std::string>> changed(size_t(pre->num_rows()));
    const auto compared = CompareNames();
    for (int64_t i = 0; i < pre->num_rows(); ++i) {
      const uint64_t address = pre_addr.values<uint64_t>()[i];
      const InPlace& in_place = commit_->updated.at(address >> 32);
      if (in_place.columns.empty()) {
        changed[size_t(i)] = DifferingColumns(*pre, *post, i, compared);
        continue;
      }
      for (const auto& [column, bitmap] : in_place.columns)
        if (bitmap.Contains(uint32_t(address))) changed[size_t(i)].push_back(AfterColumnName(column));
    }
    return Interleave(*pre, *post, changed);
  }

  RecordBatchPtr MovedPairs(RowSource& pre_source, RowSource& post_source) {
    auto pre = pre_source.Take(options_.batch_size);
    if (!pre) return nullptr;
    auto post = post_source.Take(pre->num_rows());
    if (!post || post->num_rows() != pre->num_rows())
      ThrowCorrupt("changes of '{}': version {} moved rows it did not write back one for one", commit_->after->uri(),
                   commit_->version);
    std::vector<std::vector<std::string>> changed(size_t(pre->num_rows()));
    const auto names = AllColumns();
    for (int64_t i = 0; i < pre->num_rows(); ++i) changed[size_t(i)] = DifferingColumns(*pre, *post, i, names);
    return Interleave(*pre, *post, changed);
  }

  // Stable row ids: a deleted row whose id a new row carries moved there. Those pairs go to
  // pairs_; the rows left stay deletes and inserts.
  void MatchByRowId() {
    CommitRows& c = *commit_;
    std::vector<RecordBatchPtr> pre_batches, post_batches;
    const auto names = AllColumns();
    RowSource pre_source(c.before, c.deleted, names, Local(c.before), options_.batch_size);
    while (auto b = pre_source.Next()) pre_batches.push_back(b);
    RowSource post_source(c.after, c.inserted, names, Local(c.after), options_.batch_size);
    while (auto b = post_source.Next()) post_batches.push_back(b);
    if (pre_batches.empty() || post_batches.empty()) return;
    auto pre = RecordBatch::Concatenate(pre_batches[0]->schema(), pre_batches);
    auto post = RecordBatch::Concatenate(post_batches[0]->schema(), post_batches);
    std::unordered_map<uint64_t, int64_t> pre_row;
    const uint64_t* pre_ids = ColumnOf(*pre, "_rowid").values<uint64_t>();
    for (int64_t i = 0; i < pre->num_rows(); ++i) pre_row[pre_ids[i]] = i;
    std::vector<int64_t> from, to;
    std::vector<bool> pre_paired(size_t(pre->num_rows())), post_paired(size_t(post->num_rows()));
    const uint64_t* post_ids = ColumnOf(*post, "_rowid").values<uint64_t>();
    for (int64_t j = 0; j < post->num_rows(); ++j) {
      auto it = pre_row.find(post_ids[j]);
      if (it == pre_row.end()) continue;
      from.push_back(it->second);
      to.push_back(j);
      pre_paired[size_t(it->second)] = post_paired[size_t(j)] = true;
    }
    if (from.empty()) return;
    // The paired rows leave the deletes and inserts.
    auto unpaired = [](const RecordBatch& batch, const std::vector<bool>& paired, Offsets& rows) {
      const uint64_t* addr = ColumnOf(batch, "_rowaddr").values<uint64_t>();
      std::set<uint64_t> gone;
      for (int64_t i = 0; i < batch.num_rows(); ++i)
        if (paired[size_t(i)]) gone.insert(addr[i]);
      for (auto it = rows.begin(); it != rows.end();) {
        auto& offsets = it->second;
        std::erase_if(offsets, [&](uint64_t o) { return gone.count((it->first << 32) | o) > 0; });
        it = offsets.empty() ? rows.erase(it) : std::next(it);
      }
    };
    unpaired(*pre, pre_paired, c.deleted);
    unpaired(*post, post_paired, c.inserted);
    auto pre_rows = pre->Take(from), post_rows = post->Take(to);
    for (int64_t start = 0; start < pre_rows->num_rows(); start += options_.batch_size) {
      const int64_t n = std::min(options_.batch_size, pre_rows->num_rows() - start);
      auto a = pre_rows->Slice(start, n), b = post_rows->Slice(start, n);
      auto changed = std::vector<std::vector<std::string>>(size_t(n));
      for (int64_t i = 0; i < n; ++i) changed[size_t(i)] = DifferingColumns(*a, *b, i, names);
      pairs_.push_back(Interleave(*a, *b, changed));
    }
  }

  // The feed's name of a top-level field: its name in the last version read, or, for a
  // field that version no longer has, its name in the version at hand.
  std::string FeedName(const format::LanceField& field) const {
    auto it = final_names_.find(field.id);
    return it == final_names_.end() ? field.name : it->second;
  }

  // The feed's names of the version's columns -> their names there.
  std::map<std::string, std::string> Local(const DatasetPtr& ds) const {
    std::map<std::string, std::string> out;
    for (const auto& f : table::StateOf(ds).schema.fields()) out[FeedName(f)] = f.name;
    return out;
  }

  std::string AfterColumnName(size_t column) const {
    return FeedName(table::StateOf(commit_->after).schema.fields()[column]);
  }

  // Every column of the commit's version, which moved rows are compared over.
  std::vector<std::string> AllColumns() const {
    std::vector<std::string> out;
    for (const auto& f : table::StateOf(commit_->after).schema.fields()) out.push_back(FeedName(f));
    return out;
  }

  // The output's columns and `more`.
  std::vector<std::string> WithColumns(const std::vector<std::string>& more) const {
    std::vector<std::string> out = columns_;
    for (const auto& name : more)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    return out;
  }

  std::vector<std::string> CompareNames() const {
    std::vector<std::string> out;
    for (size_t column : commit_->compare) out.push_back(AfterColumnName(column));
    return out;
  }

  DatasetPtr dataset_;
  std::vector<uint64_t> versions_;
  ChangesOptions options_;
  std::vector<std::string> columns_;
  ChangeBatchMaker maker_;
  DatasetPtr previous_;  // the version before the next one read
  std::map<int32_t, std::string> final_names_;  // top-level field id -> its name in the last version
  std::set<std::string> wanted_;
  size_t next_version_ = 0;
  std::unique_ptr<CommitRows> commit_;
  int part_ = 0;
  std::vector<RecordBatchPtr> pairs_;
  std::function<RecordBatchPtr()> step_;
};

}  // namespace

std::unique_ptr<RecordBatchReader> Dataset::Changes(uint64_t from_version, const ChangesOptions& options) const {
  const auto& state = table::StateOf(*this);
  if (options.batch_size < 1) ThrowInvalid("changes of '{}': batch size {} is below 1", state.uri, options.batch_size);
  std::vector<uint64_t> present;
  for (const auto& loc : table::ListManifests(*state.store, state.uri)) present.push_back(loc.version);
  if (present.empty()) ThrowNotFound("changes of '{}': the dataset has no version", state.uri);
  const uint64_t to = options.to_version.value_or(present.back());
  if (!std::binary_search(present.begin(), present.end(), to))
    ThrowNotFound("changes of '{}': version {} does not exist (versions {} to {})", state.uri, to, present.front(),
                  present.back());
  if (from_version > to)
    ThrowInvalid("changes of '{}': from version {} is after to version {}", state.uri, from_version, to);
  // The feed of (from, to] reads every version from `from` on (version 0: before the first).
  std::vector<uint64_t> versions;
  for (uint64_t v = std::max<uint64_t>(from_version, 1); v <= to; ++v) {
    if (!std::binary_search(present.begin(), present.end(), v))
      ThrowNotFound("changes of '{}': version {} was removed by cleanup; the oldest readable version is {}",
                    state.uri, v, present.front());
    if (v > from_version) versions.push_back(v);
  }
  DatasetPtr at_to = Checkout(to);
  DatasetPtr previous = from_version >= 1 ? Checkout(from_version) : nullptr;
  std::vector<std::string> columns;
  if (options.columns) {
    for (const auto& c : *options.columns)
      if (at_to->schema()->FieldIndex(c) < 0)
        ThrowInvalid("changes of '{}': no column '{}' at version {} (columns: {})", state.uri, c, to,
                     at_to->schema()->ToString());
    columns = *options.columns;
  } else {
    for (const auto& f : at_to->schema()->fields()) columns.push_back(f->name);
  }
  std::vector<FieldPtr> fields = {
      Field::Make("_change_type", DataType::Utf8(), false),
      Field::Make("_commit_version", DataType::UInt64(), false),
      Field::Make("_commit_timestamp", DataType::Timestamp(TimeUnit::kMicro, "UTC"), false),
      Field::Make("_rowid", DataType::UInt64(), false),
      Field::Make("_changed_columns", DataType::List(Field::Make("item", DataType::Utf8()))),
  };
  for (const auto& c : columns) {
    FieldPtr f = at_to->schema()->field(size_t(at_to->schema()->FieldIndex(c)));
    fields.push_back(Field::Make(f->name, f->type, true, f->metadata));
  }
  return std::make_unique<ChangeReader>(shared_from_this(), std::move(previous), at_to, std::move(versions), options,
                                        std::move(columns), std::make_shared<Schema>(std::move(fields)));
}

}  // namespace lancelet
