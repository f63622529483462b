#include "index/scalar_index.h"

#include <algorithm>
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
  BTreeIndex(const io::ObjectStore& store, const std::string& dir) {
    data_ = format::LanceFileReader::Open(store, dir + "/" + kBTreeDataFile);
    auto lookup = format::LanceFileReader::Open(store, dir + "/" + kBTreeLookupFile);
    ExpectField(*data_, 0, "values");
    if (ExpectField(*data_, 1, "ids").type->id() != TypeId::kUInt64)
      ThrowCorrupt("{}: column 'ids' must be uint64", data_->path());
    ExpectField(*lookup, 0, "min");
    ExpectField(*lookup, 1, "max");
    ExpectField(*lookup, 2, "null_count");
    ExpectField(*lookup, 3, "page_idx");
    const auto& meta = lookup->schema().metadata();
    auto size = meta.find("batch_size");
    page_rows_ = size == meta.end() ? kBTreePageRows : std::stoll(size->second);
    if (page_rows_ <= 0) ThrowCorrupt("{}: batch_size {} is not positive", lookup->path(), page_rows_);
    auto columns = ReadAll(*lookup);
    lookup_ = std::make_shared<RecordBatch>(lookup->schema().ToArrow(), columns, columns[0]->length);
    rows_ = data_->num_rows(0);
  }

  uint64_t num_rows() const override { return rows_; }

  RowAddrMap Search(const IndexLeaf& leaf) const override {
    std::vector<uint64_t> found;
    const std::vector<int64_t> pages = EvaluateSelection(*Bind(*PagePredicate(leaf), *lookup_->schema()), *lookup_);
    const auto* page_idx = lookup_->column(3)->values<uint32_t>();
    const auto select = leaf.Selector(data_->schema().fields()[0].type);
    for (int64_t p : pages) {
      const uint64_t first = uint64_t(page_idx[p]) * uint64_t(page_rows_);
      if (first >= rows_) ThrowCorrupt("{}: page {} starts past its {} rows", data_->path(), page_idx[p], rows_);
      const uint64_t count = std::min<uint64_t>(uint64_t(page_rows_), rows_ - first);
      std::vector<int64_t> hits = select(*data_->ReadField(0, first, count));
      if (hits.empty()) continue;
      ArrayPtr ids = data_->ReadField(1, first, count);
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

  std::unique_ptr<format::LanceFileReader> data_;
  RecordBatchPtr lookup_;
  int64_t page_rows_ = kBTreePageRows;
  uint64_t rows_ = 0;
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
  if (kind == IndexKind::kBTree) return std::make_unique<BTreeIndex>(store, dir);
  return std::make_unique<BitmapIndex>(store, dir);
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

std::vector<WrittenFile> WriteIndex(io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                    format::FileVersion version, const ArrayData& values,
                                    const std::vector<uint64_t>& ids, uint64_t memory_budget) {
  IndexBuilder builder(store, dir, kind, version, values.type, memory_budget);
  builder.Add(std::make_shared<ArrayData>(values), ids);
  return builder.Finish();
}

}  // namespace lancelet::index
