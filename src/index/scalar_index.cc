#include "index/scalar_index.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "index/index_builder.h"
#include "index/value_order.h"
#include "lancelet/builder.h"
#include "lancelet/record_batch.h"

namespace lancelet::index {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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

  static std::unique_ptr<BTreeIndex> Open(const io::ObjectStore& store, const std::string& dir) {
    std::shared_ptr<const format::LanceFileReader> data =
        format::LanceFileReader::Open(store, dir + "/" + kBTreeDataFile);
    auto lookup = format::LanceFileReader::Open(store, dir + "/" + kBTreeLookupFile);
    ExpectField(*data, 0, "values");
    if (ExpectField(*data, 1, "ids").type->id() != TypeId::kUInt64)
      ThrowCorrupt("{}: column 'ids' must be uint64", data->path());
    ExpectField(*lookup, 0, "min");
    ExpectField(*lookup, 1, "max");
    ExpectField(*lookup, 2, "null_count");
    ExpectField(*lookup, 3, "page_idx");
    const auto& meta = lookup->schema().metadata();
    auto size = meta.find("batch_size");
    const int64_t page_rows = size == meta.end() ? kBTreePageRows : std::stoll(size->second);
    if (page_rows <= 0) ThrowCorrupt("{}: batch_size {} is not positive", lookup->path(), page_rows);
    auto columns = ReadAll(*lookup);
    const int64_t pages = columns[0]->length;
    const uint64_t rows = data->num_rows(0);
    return std::make_unique<BTreeIndex>(
        std::make_shared<RecordBatch>(lookup->schema().ToArrow(), std::move(columns), pages), rows,
        data->schema().fields()[0].type, [data, page_rows, rows](int column, uint32_t page) {
          const uint64_t first = uint64_t(page) * uint64_t(page_rows);
          if (first >= rows) ThrowCorrupt("{}: page {} starts past its {} rows", data->path(), page, rows);
          return data->ReadField(size_t(column), first, std::min<uint64_t>(uint64_t(page_rows), rows - first));
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
    return std::make_unique<BTreeIndex>(
        std::make_shared<RecordBatch>(lookup_->schema(), std::move(columns), n), rows_ + more.rows_, type_,
        [own = read_, extra = more.read_, own_pages](int column, uint32_t page) {
          return page < own_pages ? own(column, page) : extra(column, uint32_t(page - own_pages));
        });
  }

  const TypePtr& type() const { return type_; }
  uint64_t num_rows() const override { return rows_; }

  RowAddrMap Search(const IndexLeaf& leaf) const override {
    std::vector<uint64_t> found;
    const std::vector<int64_t> pages = EvaluateSelection(*Bind(*PagePredicate(leaf), *lookup_->schema()), *lookup_);
    if (pages.empty()) return {};
    const auto* page_idx = lookup_->column(3)->values<uint32_t>();
    const auto select = leaf.Selector(type_);
    for (int64_t p : pages) {
      std::vector<int64_t> hits = select(*read_(0, page_idx[p]));
      if (hits.empty()) continue;
      ArrayPtr ids = read_(1, page_idx[p]);
      const uint64_t* id = ids->values<uint64_t>();
      for (int64_t h : hits) found.push_back(id[h]);
    }
    return RowAddrMap::FromAddresses(std::move(found));
  }

 private:
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
};

// Two indexes searched as one (when their pages cannot share a lookup).
class UnionIndex final : public ScalarIndex {
 public:
  UnionIndex(std::shared_ptr<const ScalarIndex> a, std::shared_ptr<const ScalarIndex> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  uint64_t num_rows() const override { return a_->num_rows() + b_->num_rows(); }
  RowAddrMap Search(const IndexLeaf& leaf) const override {
    RowAddrMap out = a_->Search(leaf);
    out |= b_->Search(leaf);
    return out;
  }

 private:
  std::shared_ptr<const ScalarIndex> a_, b_;
};

// --- Bitmap ------------------------------------------------------------------------

class BitmapIndex final : public ScalarIndex {
 public:
  BitmapIndex(const io::ObjectStore& store, const std::string& dir) {
    file_ = format::LanceFileReader::Open(store, dir + "/" + kBitmapLookupFile);
    ExpectField(*file_, 0, "keys");
    const auto& bitmaps = ExpectField(*file_, 1, "bitmaps");
    if (!bitmaps.type->is_variable_binary()) ThrowCorrupt("{}: column 'bitmaps' must be binary", file_->path());
    keys_ = file_->ReadField(0, 0, file_->num_rows(0));
  }

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

 private:
  std::vector<int64_t> AllKeys() const {
    std::vector<int64_t> all(size_t(keys_->length));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }

  RowAddrMap Union(const std::vector<int64_t>& key_rows) const {
    RowAddrMap out;
    if (key_rows.empty()) return out;
    std::vector<uint64_t> rows(key_rows.begin(), key_rows.end());
    ArrayPtr bitmaps = file_->TakeField(1, rows);
    for (int64_t i = 0; i < bitmaps->length; ++i) {
      if (bitmaps->IsNull(i)) continue;
      out |= RowAddrMap::Deserialize(bitmaps->GetView(i),
                                     fmt::format("{} key row {}", file_->path(), key_rows[size_t(i)]));
    }
    return out;
  }

  std::unique_ptr<format::LanceFileReader> file_;
  ArrayPtr keys_;
  mutable uint64_t rows_ = UINT64_MAX;
};

}  // namespace

const char* TypeUrl(IndexKind kind) {
  return kind == IndexKind::kBTree ? "/lance.table.BTreeIndexDetails" : "/lance.table.BitmapIndexDetails";
}

const char* KindName(IndexKind kind) { return kind == IndexKind::kBTree ? "BTree" : "Bitmap"; }

std::optional<IndexKind> KindOfTypeUrl(const std::string& type_url) {
  const std::string url = Lower(type_url);
  if (url == Lower(TypeUrl(IndexKind::kBTree)) || url == "btree") return IndexKind::kBTree;
  if (url == Lower(TypeUrl(IndexKind::kBitmap)) || url == "bitmap") return IndexKind::kBitmap;
  return std::nullopt;
}

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

std::unique_ptr<ScalarIndex> ScalarIndex::Open(const io::ObjectStore& store, const std::string& dir, IndexKind kind) {
  if (kind == IndexKind::kBTree) return BTreeIndex::Open(store, dir);
  return std::make_unique<BitmapIndex>(store, dir);
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
    std::stable_sort(nulls_end, order.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
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

}  // namespace lancelet::index
