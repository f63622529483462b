#include "index/scalar_index.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "array/parallel_sort.h"
#include "index/btree_pages.h"
#include "index/index_builder.h"
#include "index/value_order.h"
#include "io/run_concurrently.h"
#include "lancelet/builder.h"
#include "lancelet/record_batch.h"

namespace lancelet::index {

namespace {

// Reads a whole file of the segment into one batch per column.
std::vector<ArrayPtr> ReadAll(const format::LanceFileReader& file) {
  std::vector<ArrayPtr> out;
  for (size_t i = 0; i < file.schema().fields().size(); ++i) out.push_back(file.ReadField(i, 0, file.num_rows(i)));
  return out;
}

const format::LanceField& ExpectField(const format::LanceFileReader& file, size_t i, const char* name) {
  const auto& fields = file.schema().fields();
  if (i >= fields.size() || fields[i].name != name)
    ThrowCorrupt("{}: expected column {} to be '{}' (the file has {} columns)", file.path(), i, name, fields.size());
  return fields[i];
}

// How messages name a segment: "index 'val_idx'", or "index at '<dir>'" when unnamed.
std::string Label(const IndexSource& source, const std::string& dir) {
  return source.name.empty() ? fmt::format("index at '{}'", dir) : fmt::format("index '{}'", source.name);
}

// Runs `fn`, naming the index in an error that does not yet (a decoder names the file
// and where in it, not the index it belongs to).
template <typename Fn>
decltype(auto) NamingIndex(const std::string& label, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(label)) throw;
    Throw(e.kind(), "{}: {}{}", label, e.what(),
          e.kind() == ErrorKind::kCorrupt ? " (the index file is damaged: rebuild the index)" : "");
  }
}

// Opens file `name` of the segment, refusing it when its size is not the one recorded.
std::shared_ptr<const format::LanceFileReader> OpenFile(const io::ObjectStore& store, const std::string& dir,
                                                        const char* name, const IndexSource& source,
                                                        const std::string& label) {
  return NamingIndex(label, [&] {
    std::shared_ptr<const format::LanceFileReader> file = format::LanceFileReader::OpenAlone(store, dir + "/" + name);
    auto recorded = source.file_sizes.find(name);
    if (recorded != source.file_sizes.end() && recorded->second != file->file_size())
      ThrowCorrupt("{}: '{}' has {} bytes, but the manifest records {} (the index file is damaged: rebuild the index)",
                   label, file->path(), file->file_size(), recorded->second);
    return file;
  });
}

// The ids of `hits` as a map, refused when one is listed twice or cannot be an id of
// the dataset. `locate(id)` says where the file lists `id` (every place), for the message.
RowAddrMap CheckedIds(std::vector<uint64_t> hits, const IdBounds& bounds, const std::string& label,
                      const std::function<std::vector<std::string>(uint64_t)>& locate) {
  std::optional<uint64_t> repeated;
  RowAddrMap out = RowAddrMap::FromAddresses(std::move(hits), &repeated);
  if (repeated) {
    auto places = locate(*repeated);  // an error path: the search is repeated
    if (places.size() < 2) places.resize(2, "an entry the search did not find again");
    ThrowCorrupt("{}: id {} is listed twice, at {} and at {} (the index file is damaged: rebuild the index)", label,
                 *repeated, places[0], places[1]);
  }
  if (auto bad = bounds.AnInvalid(out)) {
    auto places = locate(*bad);
    ThrowCorrupt("{}: {}: {} (the index file is damaged: rebuild the index)", label,
                 places.empty() ? std::string("an id") : places[0], bounds.Problem(*bad));
  }
  return out;
}

// --- BTree -------------------------------------------------------------------------

class BTreeIndex final : public ScalarIndex {
 public:
  // Page `page` (a lookup page_idx) of the sorted rows: values (column 0) or ids (column 1).
  using ReadPage = std::function<ArrayPtr(int column, uint32_t page)>;

  BTreeIndex(RecordBatchPtr lookup, uint64_t rows, TypePtr type, ReadPage read)
      : lookup_(std::move(lookup)), rows_(rows), type_(std::move(type)), read_(std::move(read)) {
    const auto* page_idx = lookup_->column(3)->values<uint32_t>();
    for (int64_t p = 0; p < lookup_->num_rows(); ++p) pages_ = std::max<uint64_t>(pages_, uint64_t(page_idx[p]) + 1);
  }

  static std::unique_ptr<BTreeIndex> Open(const io::ObjectStore& store, const std::string& dir,
                                          const IndexSource& source) {
    const std::string label = Label(source, dir);
    std::shared_ptr<const format::LanceFileReader> data, lookup;
    const bool remote = store.costly_requests();
    io::RunConcurrently(2, remote ? 2 : 1, [&](size_t k) {
      (k == 0 ? data : lookup) = OpenFile(store, dir, k == 0 ? kBTreeDataFile : kBTreeLookupFile, source, label);
    });
    return NamingIndex(label, [&] {
      const TypePtr& type = ExpectField(*data, 0, "values").type;
      // Lance before 0.21 named the ids 'row_ids' (the reference reads them by position).
      const auto& data_fields = data->schema().fields();
      const char* ids = data_fields.size() > 1 && data_fields[1].name == "row_ids" ? "row_ids" : "ids";
      if (ExpectField(*data, 1, ids).type->id() != TypeId::kUInt64)
        ThrowCorrupt("'{}': column '{}' must be uint64", data->path(), ids);
      if (data->num_rows(1) != data->num_rows(0))
        ThrowCorrupt("'{}': {} values but {} ids", data->path(), data->num_rows(0), data->num_rows(1));
      const char* names[] = {"min", "max", "null_count", "page_idx"};
      for (size_t c = 0; c < 4; ++c) {
        const auto& field = ExpectField(*lookup, c, names[c]);
        if (c < 2 ? !field.type->Equals(*type) : field.type->id() != TypeId::kUInt32)
          ThrowCorrupt("'{}': column '{}' is {}, expected {}", lookup->path(), names[c], field.type->ToString(),
                       c < 2 ? type->ToString() : "uint32");
        if (lookup->num_rows(c) != lookup->num_rows(0))
          ThrowCorrupt("'{}': column '{}' has {} rows, column 'min' {}", lookup->path(), names[c], lookup->num_rows(c),
                       lookup->num_rows(0));
      }
      const auto& meta = lookup->schema().metadata();
      int64_t page_rows = kBTreePageRows;
      if (auto size = meta.find("batch_size"); size != meta.end()) {
        const std::string& text = size->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), page_rows);
        if (ec != std::errc() || end != text.data() + text.size() || page_rows <= 0)
          ThrowCorrupt("'{}': batch_size '{}' is not a positive number", lookup->path(), EscapeForMessage(text));
      }
      auto range_partitioned = meta.find("range_partitioned");
      const bool ordered = range_partitioned == meta.end() || range_partitioned->second != "true";
      auto columns = ReadAll(*lookup);
      const int64_t pages = columns[0]->length;
      auto lookup_batch = std::make_shared<RecordBatch>(lookup->schema().ToArrow(), std::move(columns), pages);
      auto checked = std::make_shared<const BTreePages>(label, data, lookup->path(), lookup_batch, page_rows, ordered);
      auto index = std::make_unique<BTreeIndex>(lookup_batch, checked->rows(), type,
                                                [checked](int column, uint32_t page) { return checked->Read(column, page); });
      index->checked_ = std::move(checked);
      index->checked_rows_ = pages;
      index->bounds_ = source.ids;
      index->label_ = label;
      index->read_ids_ahead_ = remote;
      return index;
    });
  }

  static std::unique_ptr<BTreeIndex> InMemory(const ArrayData& values, std::span<const uint64_t> ids,
                                              int64_t page_rows) {
    auto [sorted, sorted_ids] = SortedRows(values, ids);
    FixedWidthBuilder<uint64_t> id_builder(DataType::UInt64());
    for (uint64_t id : sorted_ids) id_builder.Append(id);
    ArrayPtr id_column = id_builder.Finish();
    PageLookupBuilder lookup(values.type, page_rows);
    lookup.Add(*sorted);
    const int64_t rows = values.length;
    return std::make_unique<BTreeIndex>(lookup.Finish(), uint64_t(rows), values.type,
                                        [sorted = sorted, id_column, page_rows, rows](int column, uint32_t page) {
                                          const int64_t first = int64_t(page) * page_rows;
                                          return Slice(column == 0 ? *sorted : *id_column, first,
                                                       std::min(page_rows, rows - first));
                                        });
  }

  // This index and `more` as one: one lookup lists the pages of both, so a search
  // evaluates the page predicate once.
  std::unique_ptr<BTreeIndex> Plus(const BTreeIndex& more) const {
    std::vector<ArrayPtr> columns;
    for (int c = 0; c < 3; ++c) columns.push_back(Concatenate({lookup_->column(c), more.lookup_->column(c)}));
    FixedWidthBuilder<uint32_t> page_idx(DataType::UInt32());
    for (int64_t p = 0; p < lookup_->num_rows(); ++p) page_idx.Append(lookup_->column(3)->values<uint32_t>()[p]);
    for (int64_t p = 0; p < more.lookup_->num_rows(); ++p)
      page_idx.Append(uint32_t(pages_ + more.lookup_->column(3)->values<uint32_t>()[p]));
    columns.push_back(page_idx.Finish());
    const int64_t n = columns[0]->length;
    const uint64_t own_pages = pages_;
    auto both = std::make_unique<BTreeIndex>(
        std::make_shared<RecordBatch>(lookup_->schema(), std::move(columns), n), rows_ + more.rows_, type_,
        [own = read_, extra = more.read_, own_pages](int column, uint32_t page) {
          return page < own_pages ? own(column, page) : extra(column, uint32_t(page - own_pages));
        });
    // The segment's own pages come first: only they are checked (`more` was built here).
    both->checked_ = checked_;
    both->checked_rows_ = checked_rows_;
    both->bounds_ = bounds_;
    both->label_ = label_;
    both->read_ids_ahead_ = read_ids_ahead_;
    return both;
  }

  const TypePtr& type() const { return type_; }
  IndexKind kind() const override { return IndexKind::kBTree; }
  uint64_t num_rows() const override { return rows_; }

  RowAddrMap Search(const IndexLeaf& leaf) const override {
    return NamingIndex(label_, [&] {
      const std::vector<int64_t> pages = EvaluateSelection(*Bind(*PagePredicate(leaf), *lookup_->schema()), *lookup_);
      if (checked_) CheckSkippedPages(leaf, pages);
      if (pages.empty()) return RowAddrMap{};
      std::vector<uint64_t> found, added;  // from the segment's own pages / from rows added in memory
      ForEachHit(leaf, pages, true,
                 [&](int64_t p, int64_t, uint64_t id) { (p < checked_rows_ ? found : added).push_back(id); });
      RowAddrMap out = !checked_ ? RowAddrMap::FromAddresses(std::move(found))
                                 : CheckedIds(std::move(found), bounds_, label_,
                                              [&](uint64_t id) { return Places(leaf, pages, id, true); });
      if (!added.empty()) out |= RowAddrMap::FromAddresses(std::move(added));
      return out;
    });
  }

  std::vector<std::string> Locate(const IndexLeaf& leaf, uint64_t id) const override {
    const std::vector<int64_t> pages = EvaluateSelection(*Bind(*PagePredicate(leaf), *lookup_->schema()), *lookup_);
    return Places(leaf, pages, id, false);
  }

 private:
  uint32_t PageOf(int64_t lookup_row) const { return lookup_->column(3)->values<uint32_t>()[lookup_row]; }

  // Where `pages` list `id` among the hits of `leaf` (`own_only`: in the segment's files).
  std::vector<std::string> Places(const IndexLeaf& leaf, const std::vector<int64_t>& pages, uint64_t id,
                                  bool own_only) const {
    std::vector<std::string> places;
    ForEachHit(leaf, pages, false, [&](int64_t p, int64_t row, uint64_t hit) {
      if (hit != id) return;
      if (p < checked_rows_) places.push_back(fmt::format("'{}' {}", checked_->data_path(), checked_->Where(PageOf(p), row)));
      else if (!own_only) places.push_back("rows added in memory");
    });
    return places;
  }

  // Calls fn(lookup row, row in its page, id) for every row of `pages` (lookup rows,
  // ascending) where `leaf` is TRUE; `check` checks the boundaries the answer relies on.
  template <typename Fn>
  void ForEachHit(const IndexLeaf& leaf, const std::vector<int64_t>& pages, bool check, Fn&& fn) const {
    const auto select = leaf.Selector(type_);
    for (size_t k = 0; k < pages.size(); ++k) {
      const int64_t p = pages[k];
      ArrayPtr values, ids;
      if (read_ids_ahead_)
        io::RunConcurrently(2, 2, [&](size_t c) { (c == 0 ? values : ids) = read_(int(c), PageOf(p)); });
      else
        values = read_(0, PageOf(p));
      std::vector<int64_t> hits = select(*values);
      if (check && p < checked_rows_) CheckBoundariesBeside(leaf, pages, k, hits, values->length);
      if (hits.empty()) continue;
      if (!ids) ids = read_(1, PageOf(p));
      const uint64_t* id = ids->values<uint64_t>();
      for (int64_t h : hits) fn(p, h, id[h]);
    }
  }

  // Page pages[k] was read, its values checked, and `hits` found among its `rows`. A
  // neighbour the search skips may hold matches the lookup hid when the leaf matches on
  // the far side of the page's first (last) value: always for an IN list or a negated
  // leaf; for a leaf whose matches are one interval of the order (a comparison, BETWEEN,
  // IS NULL), only when the page's first (last) row is a hit. Then the boundary between
  // them is checked.
  void CheckBoundariesBeside(const IndexLeaf& leaf, const std::vector<int64_t>& pages, size_t k,
                             const std::vector<int64_t>& hits, int64_t rows) const {
    const bool interval = !leaf.negated && leaf.op != IndexLeaf::Op::kIn;
    const int64_t p = pages[k];
    if (p > 0 && (k == 0 || pages[k - 1] != p - 1) && (!interval || (!hits.empty() && hits.front() == 0)))
      checked_->CheckBoundary(PageOf(p));
    if (p + 1 < checked_rows_ && (k + 1 == pages.size() || pages[k + 1] != p + 1) &&
        (!interval || (!hits.empty() && hits.back() == rows - 1)))
      checked_->CheckBoundary(PageOf(p) + 1);
  }

  // A search that reads none of the segment's pages relies on the lookup alone: the
  // boundaries where the lookup puts each searched value are checked, and the first and
  // last (btree_pages.h). An IN list checks every item's, as an item may have had its
  // pages hidden while others' were read.
  void CheckSkippedPages(const IndexLeaf& leaf, const std::vector<int64_t>& pages) const {
    const bool reads_own = !pages.empty() && pages[0] < checked_rows_;
    const bool in_list = leaf.op == IndexLeaf::Op::kIn && !leaf.negated;
    if (reads_own && !in_list) return;
    if (!reads_own) {
      checked_->CheckBoundary(0);
      checked_->CheckBoundary(checked_->pages());
    }
    if (leaf.negated || leaf.op == IndexLeaf::Op::kIsNull) return;  // nulls first: the first and last decide
    for (const auto& literal : leaf.literals) {
      // The first page whose max is at least the value: the value lies at or before it.
      auto at = Expr::Binary(BinaryOp::kGe, Expr::Column("max"), literal);
      const std::vector<int64_t> from = EvaluateSelection(*Bind(*at, *lookup_->schema()), *lookup_);
      checked_->CheckBoundary(!from.empty() && from[0] < checked_rows_ ? PageOf(from[0]) : checked_->pages());
    }
  }

  // Which pages may hold a value making `leaf` TRUE, as a predicate over the lookup's
  // min / max / null_count. A page's non-null values lie in [min, max], min being null
  // (unknown: take it as lowest) when the page starts with nulls.
  static ExprPtr PagePredicate(const IndexLeaf& leaf) {
    auto col = [](const char* n) { return Expr::Column(n); };
    auto and_ = [](ExprPtr a, ExprPtr b) { return Expr::Binary(BinaryOp::kAnd, a, b); };
    auto or_ = [](ExprPtr a, ExprPtr b) { return Expr::Binary(BinaryOp::kOr, a, b); };
    const ExprPtr has_values = IsNullExpr(col("max"), true);
    // min <op> v, with an unknown min passing.
    auto low = [&](BinaryOp op, const ExprPtr& v) { return or_(IsNullExpr(col("min"), false), Expr::Binary(op, col("min"), v)); };
    auto high = [&](BinaryOp op, const ExprPtr& v) { return Expr::Binary(op, col("max"), v); };
    if (leaf.op == IndexLeaf::Op::kIsNull)
      return leaf.negated ? has_values : Expr::Binary(BinaryOp::kGt, col("null_count"), Expr::Literal(Scalar{DataType::Int64(), int64_t(0)}));
    if (leaf.negated) return has_values;  // NOT leaf: any page with values may hold one
    const auto& v = leaf.literals;
    switch (leaf.op) {
      case IndexLeaf::Op::kEq: return and_(low(BinaryOp::kLe, v[0]), high(BinaryOp::kGe, v[0]));
      case IndexLeaf::Op::kLt: return and_(has_values, low(BinaryOp::kLt, v[0]));
      case IndexLeaf::Op::kLe: return and_(has_values, low(BinaryOp::kLe, v[0]));
      case IndexLeaf::Op::kGt: return high(BinaryOp::kGt, v[0]);
      case IndexLeaf::Op::kGe: return high(BinaryOp::kGe, v[0]);
      case IndexLeaf::Op::kBetween: return and_(high(BinaryOp::kGe, v[0]), low(BinaryOp::kLe, v[1]));
      case IndexLeaf::Op::kIn: {
        ExprPtr any;
        for (const auto& item : v) {
          ExprPtr one = and_(low(BinaryOp::kLe, item), high(BinaryOp::kGe, item));
          any = any ? or_(any, one) : one;
        }
        return any ? any : Expr::Literal(Scalar{DataType::Bool(), false});
      }
      case IndexLeaf::Op::kIsNull: break;
    }
    return has_values;
  }

  RecordBatchPtr lookup_;
  uint64_t rows_ = 0;
  TypePtr type_;
  ReadPage read_;
  uint64_t pages_ = 0;  // page_idx values are below this
  // A segment's files: their pages (lookup rows below checked_rows_), checked as read.
  // Null for rows built in memory, which need no check.
  std::shared_ptr<const BTreePages> checked_;
  int64_t checked_rows_ = 0;
  IdBounds bounds_;
  std::string label_;
  // A remote segment reads a page's ids beside its values, before knowing whether any
  // value matches: one round trip instead of two, for bytes mostly needed anyway.
  bool read_ids_ahead_ = false;
};

// Two indexes searched as one (when their pages cannot share a lookup).
class UnionIndex final : public ScalarIndex {
 public:
  UnionIndex(std::shared_ptr<const ScalarIndex> a, std::shared_ptr<const ScalarIndex> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  IndexKind kind() const override { return a_->kind(); }
  uint64_t num_rows() const override { return a_->num_rows() + b_->num_rows(); }
  RowAddrMap Search(const IndexLeaf& leaf) const override {
    RowAddrMap out = a_->Search(leaf);
    out |= b_->Search(leaf);
    return out;
  }
  std::vector<std::string> Locate(const IndexLeaf& leaf, uint64_t id) const override {
    std::vector<std::string> places = a_->Locate(leaf, id);
    for (auto& place : b_->Locate(leaf, id)) places.push_back(std::move(place));
    return places;
  }

 private:
  std::shared_ptr<const ScalarIndex> a_, b_;
};

// --- Bitmap ------------------------------------------------------------------------

class BitmapIndex final : public ScalarIndex {
 public:
  BitmapIndex(const io::ObjectStore& store, const std::string& dir, const IndexSource& source)
      : label_(Label(source, dir)), bounds_(source.ids) {
    file_ = OpenFile(store, dir, kBitmapLookupFile, source, label_);
    NamingIndex(label_, [&] {
      ExpectField(*file_, 0, "keys");
      const auto& bitmaps = ExpectField(*file_, 1, "bitmaps");
      if (!bitmaps.type->is_variable_binary()) ThrowCorrupt("'{}': column 'bitmaps' must be binary", file_->path());
      if (file_->num_rows(1) != file_->num_rows(0))
        ThrowCorrupt("'{}': {} keys but {} bitmaps", file_->path(), file_->num_rows(0), file_->num_rows(1));
      keys_ = file_->ReadField(0, 0, file_->num_rows(0));
      CheckKeys();
    });
  }

  IndexKind kind() const override { return IndexKind::kBitmap; }
  uint64_t num_rows() const override {
    if (rows_ == UINT64_MAX) {
      uint64_t n = 0;
      for (const auto& [fragment, rows] : Union(AllKeys()).fragments) n += rows ? rows->Cardinality() : 0;
      rows_ = n;
    }
    return rows_;
  }

  RowAddrMap Search(const IndexLeaf& leaf) const override {
    return Union(leaf.Selector(keys_->type)(*keys_));
  }

  std::vector<std::string> Locate(const IndexLeaf& leaf, uint64_t id) const override {
    const std::vector<int64_t> key_rows = leaf.Selector(keys_->type)(*keys_);
    const std::vector<RowAddrMap> maps = BitmapsOf(key_rows);
    std::vector<std::string> places;
    for (size_t k = 0; k < maps.size(); ++k) {
      auto it = maps[k].fragments.find(uint32_t(id >> 32));
      if (it != maps[k].fragments.end() && (!it->second || it->second->Contains(uint32_t(id))))
        places.push_back(fmt::format("'{}' key row {}", file_->path(), key_rows[k]));
    }
    return places;
  }

 private:
  // One row per distinct value. lancelet and the reference today write the null key
  // first and the others ascending; older reference writers wrote them in hash order, so
  // only distinctness is a promise. One pass finds them ascending; a file that is not
  // is sorted to look for a key twice. NaN is skipped (value_order.h).
  void CheckKeys() const {
    int64_t null_row = -1;
    for (int64_t i = 0; i < keys_->length; ++i) {
      if (!keys_->IsNull(i)) continue;
      if (null_row >= 0)
        ThrowCorrupt("'{}' key rows {} and {} are both null (keys are distinct)", file_->path(), null_row, i);
      null_row = i;
    }
    if (!CanIndex(*keys_->type)) return;
    WithValueKey(*keys_, [&](auto key) {
      auto skipped = [&](int64_t i) { return i == null_row || IsNanKey(key(i)); };
      int64_t last = -1;
      bool ascending = true;
      for (int64_t i = 0; i < keys_->length && ascending; ++i) {
        if (skipped(i)) continue;
        ascending = last < 0 || key(last) < key(i);
        last = i;
      }
      if (ascending) return 0;
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < keys_->length; ++i)
        if (!skipped(i)) rows.push_back(i);
      std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
      auto twice = std::adjacent_find(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return !(key(a) < key(b)); });
      if (twice != rows.end())
        ThrowCorrupt("'{}' key rows {} and {} hold the same key (keys are distinct)", file_->path(),
                     std::min(twice[0], twice[1]), std::max(twice[0], twice[1]));
      return 0;
    });
  }

  std::vector<int64_t> AllKeys() const {
    std::vector<int64_t> all(size_t(keys_->length));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }

  std::vector<RowAddrMap> BitmapsOf(const std::vector<int64_t>& key_rows) const {
    std::vector<uint64_t> rows(key_rows.begin(), key_rows.end());
    ArrayPtr bitmaps = file_->TakeField(1, rows);
    std::vector<RowAddrMap> out(key_rows.size());
    for (int64_t i = 0; i < bitmaps->length; ++i) {
      if (bitmaps->IsNull(i)) continue;
      const std::string where = fmt::format("'{}' key row {}", file_->path(), key_rows[size_t(i)]);
      out[size_t(i)] = RowAddrMap::Deserialize(bitmaps->GetView(i), where);
      if (auto bad = bounds_.AnInvalid(out[size_t(i)])) ThrowCorrupt("{}: {}", where, bounds_.Problem(*bad));
    }
    return out;
  }

  // The rows of `key_rows`, refused when two keys list one row (a row has one value).
  RowAddrMap Union(const std::vector<int64_t>& key_rows) const {
    return NamingIndex(label_, [&] {
      RowAddrMap out;
      if (key_rows.empty()) return out;
      std::map<uint32_t, uint64_t> listed;  // per fragment, members listed over all keys
      const std::vector<RowAddrMap> maps = BitmapsOf(key_rows);
      for (const auto& map : maps) {
        for (const auto& [fragment, rows] : map.fragments) listed[fragment] += rows ? rows->Cardinality() : 0;
        out |= map;
      }
      for (const auto& [fragment, rows] : out.fragments)
        if (rows && rows->Cardinality() != listed[fragment]) ThrowOverlap(key_rows, maps, fragment);
      return out;
    });
  }

  // Names two keys of `maps` that both list a row of `fragment` (an error path).
  [[noreturn]] void ThrowOverlap(const std::vector<int64_t>& key_rows, const std::vector<RowAddrMap>& maps,
                                 uint32_t fragment) const {
    std::map<uint32_t, size_t> first;  // offset -> the key listing it first
    for (size_t k = 0; k < maps.size(); ++k) {
      auto it = maps[k].fragments.find(fragment);
      if (it == maps[k].fragments.end() || !it->second) continue;
      for (uint32_t offset : it->second->ToVector()) {
        auto [seen, inserted] = first.emplace(offset, k);
        if (!inserted)
          ThrowCorrupt("'{}' key rows {} and {} both list row {} of fragment {} (a row has one value)", file_->path(),
                       key_rows[seen->second], key_rows[k], offset, fragment);
      }
    }
    ThrowCorrupt("'{}': the bitmaps of fragment {} overlap", file_->path(), fragment);
  }

  std::string label_;
  IdBounds bounds_;
  std::shared_ptr<const format::LanceFileReader> file_;
  ArrayPtr keys_;
  mutable uint64_t rows_ = UINT64_MAX;
};

}  // namespace

bool CanIndex(const DataType& type) {
  switch (type.id()) {
    case TypeId::kBool: case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
    case TypeId::kFloat32: case TypeId::kFloat64: case TypeId::kUtf8: case TypeId::kLargeUtf8:
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kDate32: case TypeId::kDate64:
    case TypeId::kTimestamp:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<ScalarIndex> ScalarIndex::Open(const io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                               const IndexSource& source) {
  switch (kind) {
    case IndexKind::kBTree: return BTreeIndex::Open(store, dir, source);
    case IndexKind::kBitmap: return std::make_unique<BitmapIndex>(store, dir, source);
  }
  ThrowNotSupported("index '{}': lancelet cannot open an index of kind {}", source.name, int(kind));
}

std::unique_ptr<ScalarIndex> InMemoryBTree(const ArrayData& values, std::span<const uint64_t> ids,
                                           int64_t page_rows) {
  return BTreeIndex::InMemory(values, ids, page_rows);
}

std::shared_ptr<const ScalarIndex> WithRows(std::shared_ptr<const ScalarIndex> index,
                                            std::shared_ptr<const ScalarIndex> more) {
  const auto* btree = dynamic_cast<const BTreeIndex*>(index.get());
  const auto* extra = dynamic_cast<const BTreeIndex*>(more.get());
  if (btree && extra && btree->type()->Equals(*extra->type())) return btree->Plus(*extra);
  return std::make_shared<UnionIndex>(std::move(index), std::move(more));
}

std::vector<int64_t> SortedOrder(const ArrayData& values) {
  std::vector<int64_t> order(size_t(values.length));
  std::iota(order.begin(), order.end(), 0);
  auto nulls_end = std::stable_partition(order.begin(), order.end(), [&](int64_t i) { return values.IsNull(i); });
  WithValueKey(values, [&](auto key) {
    ParallelStableSort(nulls_end, order.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
    return 0;
  });
  return order;
}

std::pair<ArrayPtr, std::vector<uint64_t>> SortedRows(const ArrayData& values, std::span<const uint64_t> ids) {
  const std::vector<int64_t> order = SortedOrder(values);
  std::vector<uint64_t> sorted_ids(order.size());
  for (size_t k = 0; k < order.size(); ++k) sorted_ids[k] = ids[size_t(order[k])];
  return {Take(values, order), std::move(sorted_ids)};
}

std::vector<WrittenFile> WriteIndex(io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                    format::FileVersion version, const ArrayData& values,
                                    const std::vector<uint64_t>& ids, uint64_t memory_budget) {
  IndexBuilder builder(store, dir, kind, version, values.type, memory_budget);
  builder.Add(std::make_shared<ArrayData>(values), ids);
  return builder.Finish();
}

void ForEachSegmentRow(const io::ObjectStore& store, const std::string& dir, IndexKind kind,
                       const std::function<uint64_t(uint32_t fragment)>& fragment_rows,
                       const std::function<void(const ArrayPtr& values, std::span<const uint64_t> ids)>& fn) {
  constexpr uint64_t kBatch = 64 * 1024;
  if (kind == IndexKind::kBTree) {
    auto data = format::LanceFileReader::OpenAlone(store, dir + "/" + kBTreeDataFile);
    ExpectField(*data, 0, "values");
    const uint64_t rows = data->num_rows(0);
    if (data->schema().fields().size() < 2 || data->num_rows(1) != rows)
      ThrowCorrupt("{}: expected a column of ids beside the {} values", data->path(), rows);
    for (uint64_t start = 0; start < rows; start += kBatch) {
      const uint64_t n = std::min(kBatch, rows - start);
      ArrayPtr ids = data->ReadField(1, start, n);
      if (ids->type->id() != TypeId::kUInt64) ThrowCorrupt("{}: the ids column is {}, expected uint64", data->path(),
                                                          ids->type->ToString());
      fn(data->ReadField(0, start, n), std::span(ids->values<uint64_t>(), size_t(n)));
    }
    return;
  }
  if (kind != IndexKind::kBitmap) ThrowNotSupported("rows of a {} segment are not read back", KindName(kind));
  auto file = format::LanceFileReader::OpenAlone(store, dir + "/" + kBitmapLookupFile);
  ExpectField(*file, 0, "keys");
  ExpectField(*file, 1, "bitmaps");
  const ArrayPtr keys = file->ReadField(0, 0, file->num_rows(0));
  for (uint64_t start = 0; start < uint64_t(keys->length); start += 1024) {
    const uint64_t n = std::min<uint64_t>(1024, uint64_t(keys->length) - start);
    const ArrayPtr bitmaps = file->ReadField(1, start, n);
    std::vector<int64_t> key_rows;
    std::vector<uint64_t> ids;
    for (uint64_t k = 0; k < n; ++k) {
      if (bitmaps->IsNull(int64_t(k))) continue;
      const RowAddrMap map =
          RowAddrMap::Deserialize(bitmaps->GetView(int64_t(k)), fmt::format("'{}' key row {}", file->path(), start + k));
      for (const auto& [fragment, offsets] : map.fragments) {
        const uint64_t high = uint64_t(fragment) << 32;
        auto add = [&](uint64_t offset) {
          key_rows.push_back(int64_t(start + k));
          ids.push_back(high | offset);
        };
        if (offsets) offsets->ForEach(add);
        else for (uint64_t o = 0, rows = fragment_rows(fragment); o < rows; ++o) add(o);
      }
    }
    if (!ids.empty()) fn(Take(*keys, key_rows), ids);
  }
}

}  // namespace lancelet::index
