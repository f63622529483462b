#include "index/index_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <queue>

#include <fmt/format.h>

#include "format/lance_file.h"
#include "index/value_order.h"
#include "lancelet/builder.h"
#include "lancelet/record_batch.h"

namespace lancelet::index {

namespace {

constexpr int64_t kMergeBatchRows = 65536;

std::shared_ptr<Schema> ValuesAndIds(const TypePtr& type) {
  return std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("values", type), Field::Make("ids", DataType::UInt64(), false)});
}

ArrayPtr UInt64s(std::span<const uint64_t> v) {
  FixedWidthBuilder<uint64_t> b(DataType::UInt64());
  for (uint64_t x : v) b.Append(x);
  return b.Finish();
}

ArrayPtr UInt32s(const std::vector<uint32_t>& v) {
  FixedWidthBuilder<uint32_t> b(DataType::UInt32());
  for (uint32_t x : v) b.Append(x);
  return b.Finish();
}

ArrayPtr ConcatOrEmpty(const std::vector<ArrayPtr>& parts, const TypePtr& type) {
  return parts.empty() ? MakeEmptyArray(type) : Concatenate(parts);
}

uint64_t WriteWholeFile(io::ObjectStore& store, const std::string& path, format::FileVersion version,
                        const SchemaPtr& schema, const std::vector<ArrayPtr>& columns) {
  format::LanceFileWriter writer(store, path, format::LanceSchema::FromArrow(*schema), format::FileWriterOptions{version});
  writer.Write(RecordBatch(schema, columns, columns.empty() ? 0 : columns[0]->length));
  return writer.Finish();
}

// BTree: page_data rows as they come; one lookup row per 4096 of them.
class BTreeSink final : public SortedSink {
 public:
  BTreeSink(io::ObjectStore& store, std::string dir, format::FileVersion version, TypePtr type)
      : store_(store), dir_(std::move(dir)), version_(version), type_(std::move(type)),
        data_(store, dir_ + "/" + kBTreeDataFile, format::LanceSchema::FromArrow(*ValuesAndIds(type_)),
              format::FileWriterOptions{version}),
        lookup_(type_, kBTreePageRows) {}

  void Write(const ArrayPtr& values, std::span<const uint64_t> ids) override {
    if (values->length == 0) return;
    data_.Write(RecordBatch(ValuesAndIds(type_), {values, UInt64s(ids)}, values->length));
    lookup_.Add(*values);
  }

  std::vector<WrittenFile> Finish() override {
    std::vector<WrittenFile> files;
    files.push_back({kBTreeDataFile, data_.Finish()});
    RecordBatchPtr lookup = lookup_.Finish();
    files.push_back({kBTreeLookupFile, WriteWholeFile(store_, dir_ + "/" + kBTreeLookupFile, version_,
                                                  lookup->schema(), lookup->columns())});
    return files;
  }

 private:
  io::ObjectStore& store_;
  std::string dir_;
  format::FileVersion version_;
  TypePtr type_;
  format::LanceFileWriter data_;
  PageLookupBuilder lookup_;
};

// Bitmap: one key row per run of equal values, with the run's ids as a RowAddrMap.
class BitmapSink final : public SortedSink {
 public:
  BitmapSink(io::ObjectStore& store, std::string dir, format::FileVersion version, TypePtr type)
      : store_(store), dir_(std::move(dir)), version_(version), type_(std::move(type)), bitmaps_(DataType::Binary()) {}

  void Write(const ArrayPtr& values, std::span<const uint64_t> ids) override {
    for (int64_t r = 0; r < values->length; ++r) {
      const bool null = values->IsNull(r);
      std::string key = null ? std::string() : SortKey(*values, r);
      if (keys_.empty() || null != null_ || key != key_) {
        Flush();
        keys_.push_back(Slice(*values, r, 1));
        null_ = null;
        key_ = std::move(key);
      }
      rows_.Add(ids[size_t(r)]);
    }
  }

  std::vector<WrittenFile> Finish() override {
    Flush();
    auto schema = std::make_shared<Schema>(
        std::vector<FieldPtr>{Field::Make("keys", type_), Field::Make("bitmaps", DataType::Binary())},
        Metadata{{"lance:index_stats", fmt::format("{{\"num_bitmaps\":{}}}", keys_.size())}});
    return {{kBitmapLookupFile, WriteWholeFile(store_, dir_ + "/" + kBitmapLookupFile, version_, schema,
                                           {ConcatOrEmpty(keys_, type_), bitmaps_.Finish()})}};
  }

 private:
  void Flush() {
    if (rows_.empty()) return;
    bitmaps_.Append(rows_.Serialize());
    rows_ = RowAddrMap();
  }

  io::ObjectStore& store_;
  std::string dir_;
  format::FileVersion version_;
  TypePtr type_;
  std::vector<ArrayPtr> keys_;
  BinaryBuilder bitmaps_;
  bool null_ = false;
  std::string key_;
  RowAddrMap rows_;
};

template <typename T>
void PutBigEndian(std::string& out, T v) {
  for (int shift = int(sizeof(T)) * 8 - 8; shift >= 0; shift -= 8) out += char(uint8_t(v >> shift));
}

// One spilled run, read back in blocks.
struct RunCursor {
  std::unique_ptr<format::LanceFileReader> file;
  uint64_t next = 0;  // first row of the next block
  ArrayPtr values, ids;
  int64_t at = 0;

  bool Load() {
    const uint64_t rows = file->num_rows(0);
    if (next >= rows) return false;
    const uint64_t n = std::min<uint64_t>(kMergeBatchRows, rows - next);
    values = file->ReadField(0, next, n);
    ids = file->ReadField(1, next, n);
    next += n;
    at = 0;
    return true;
  }
};

}  // namespace

PageLookupBuilder::PageLookupBuilder(TypePtr type, int64_t page_rows) : type_(std::move(type)), page_rows_(page_rows) {}

void PageLookupBuilder::Add(const ArrayData& values) {
  for (int64_t r = 0; r < values.length; ++r, ++rows_) {
    if (rows_ % page_rows_ == 0) {
      mins_.push_back(Slice(values, r, 1));
      nulls_.push_back(0);
    }
    if (values.IsNull(r)) ++nulls_.back();
    if (rows_ % page_rows_ == page_rows_ - 1) maxs_.push_back(Slice(values, r, 1));
  }
  if (values.length > 0) last_ = Slice(values, values.length - 1, 1);
}

RecordBatchPtr PageLookupBuilder::Finish() {
  if (rows_ % page_rows_ != 0) maxs_.push_back(last_);
  std::vector<uint32_t> pages(nulls_.size());
  for (size_t p = 0; p < pages.size(); ++p) pages[p] = uint32_t(p);
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("min", type_), Field::Make("max", type_),
                            Field::Make("null_count", DataType::UInt32(), false),
                            Field::Make("page_idx", DataType::UInt32(), false)},
      Metadata{{"batch_size", std::to_string(page_rows_)}, {"range_partitioned", "false"}});
  std::vector<ArrayPtr> columns{ConcatOrEmpty(mins_, type_), ConcatOrEmpty(maxs_, type_), UInt32s(nulls_),
                                UInt32s(pages)};
  const int64_t n = columns[0]->length;
  return std::make_shared<RecordBatch>(schema, std::move(columns), n);
}

std::string SortKey(const ArrayData& a, int64_t i) {
  std::string out;
  auto flip_signed = [&]<typename T>(T v) {
    using U = std::make_unsigned_t<T>;
    PutBigEndian(out, U(U(v) ^ (U(1) << (sizeof(T) * 8 - 1))));
  };
  auto floating = [&]<typename T, typename U>(T v, U) {
    if (std::isnan(v)) return PutBigEndian(out, ~U(0));  // NaN above every number
    v = v + T(0);                                          // -0.0 as 0.0
    U bits;
    std::memcpy(&bits, &v, sizeof bits);
    const U sign = U(1) << (sizeof(U) * 8 - 1);
    PutBigEndian(out, U((bits & sign) ? ~bits : (bits | sign)));
  };
  switch (a.type->id()) {
    case TypeId::kBool: out += char(GetBit(a.buffers[1]->data(), i)); break;
    case TypeId::kInt8: flip_signed(a.values<int8_t>()[i]); break;
    case TypeId::kInt16: flip_signed(a.values<int16_t>()[i]); break;
    case TypeId::kInt32: case TypeId::kDate32: flip_signed(a.values<int32_t>()[i]); break;
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: flip_signed(a.values<int64_t>()[i]); break;
    case TypeId::kUInt8: PutBigEndian(out, a.values<uint8_t>()[i]); break;
    case TypeId::kUInt16: PutBigEndian(out, a.values<uint16_t>()[i]); break;
    case TypeId::kUInt32: PutBigEndian(out, a.values<uint32_t>()[i]); break;
    case TypeId::kUInt64: PutBigEndian(out, a.values<uint64_t>()[i]); break;
    case TypeId::kFloat32: floating(a.values<float>()[i], uint32_t{}); break;
    case TypeId::kFloat64: floating(a.values<double>()[i], uint64_t{}); break;
    case TypeId::kUtf8: case TypeId::kBinary: case TypeId::kLargeUtf8: case TypeId::kLargeBinary:
      out = std::string(a.GetView(i));
      break;
    default: ThrowNotSupported("a scalar index cannot hold values of type {}", a.type->ToString());
  }
  return out;
}

std::unique_ptr<SortedSink> MakeSortedSink(io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                           format::FileVersion version, TypePtr type) {
  switch (kind) {
    case IndexKind::kBTree: return std::make_unique<BTreeSink>(store, dir, version, std::move(type));
    case IndexKind::kBitmap: return std::make_unique<BitmapSink>(store, dir, version, std::move(type));
  }
  ThrowNotSupported("lancelet cannot build an index of kind {}", int(kind));
}

IndexBuilder::IndexBuilder(io::ObjectStore& store, std::string dir, IndexKind kind, format::FileVersion version,
                           TypePtr type, uint64_t memory_budget)
    : store_(store), dir_(std::move(dir)), kind_(kind), version_(version), type_(std::move(type)),
      budget_(memory_budget) {
  if (!CanIndex(*type_))
    ThrowNotSupported("lancelet cannot build a {} index over values of type {}", KindName(kind_), type_->ToString());
}

IndexBuilder::~IndexBuilder() {
  if (!finished_) io::RemoveQuietly(store_, runs_);
}

void IndexBuilder::Add(const ArrayPtr& values, std::span<const uint64_t> ids) {
  if (size_t(values->length) != ids.size())
    ThrowInvalid("{} values but {} row ids for the index", values->length, ids.size());
  if (!values->type->Equals(*type_))
    ThrowInvalid("index values of type {} given to an index of {}", values->type->ToString(), type_->ToString());
  buffered_.push_back(values);
  buffered_ids_.insert(buffered_ids_.end(), ids.begin(), ids.end());
  buffered_bytes_ += BufferBytes(*values) + 8 * ids.size();
  if (buffered_bytes_ > budget_) Spill();
}

std::pair<ArrayPtr, std::vector<uint64_t>> IndexBuilder::SortBuffer() {
  auto sorted = SortedRows(*ConcatOrEmpty(buffered_, type_), buffered_ids_);
  buffered_.clear();
  buffered_ids_.clear();
  buffered_bytes_ = 0;
  return sorted;
}

void IndexBuilder::Spill() {
  auto [values, ids] = SortBuffer();
  const std::string path = fmt::format("{}/spill-{}.lance", dir_, runs_.size());
  runs_.push_back(path);
  WriteWholeFile(store_, path, version_, ValuesAndIds(type_), {values, UInt64s(ids)});
}

std::vector<WrittenFile> IndexBuilder::Finish() {
  auto sink = MakeSortedSink(store_, dir_, kind_, version_, type_);
  if (runs_.empty()) {
    auto [values, ids] = SortBuffer();
    sink->Write(values, ids);
  } else {
    if (!buffered_.empty()) Spill();
    // k-way merge: the smallest head first; nulls before values; ties in run order,
    // which is arrival order.
    std::vector<RunCursor> cursors(runs_.size());
    struct Head {
      bool null;
      std::string key;
      size_t run;
      bool operator>(const Head& o) const {
        if (null != o.null) return !null;
        if (key != o.key) return key > o.key;
        return run > o.run;
      }
    };
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
    auto push = [&](size_t r) {
      RunCursor& c = cursors[r];
      if (c.at >= (c.values ? c.values->length : 0) && !c.Load()) return;
      const bool null = c.values->IsNull(c.at);
      heads.push({null, null ? std::string() : SortKey(*c.values, c.at), r});
    };
    for (size_t r = 0; r < runs_.size(); ++r) {
      cursors[r].file = format::LanceFileReader::Open(store_, runs_[r]);
      push(r);
    }
    auto out = ArrayBuilder::Make(type_);
    std::vector<uint64_t> out_ids;
    while (!heads.empty()) {
      const size_t r = heads.top().run;
      heads.pop();
      RunCursor& c = cursors[r];
      out->AppendFrom(*c.values, c.at);
      out_ids.push_back(c.ids->values<uint64_t>()[c.at]);
      ++c.at;
      push(r);
      if (int64_t(out_ids.size()) == kMergeBatchRows || heads.empty()) {
        sink->Write(out->Finish(), out_ids);
        out = ArrayBuilder::Make(type_);
        out_ids.clear();
      }
    }
  }
  auto files = sink->Finish();
  io::RemoveQuietly(store_, runs_);
  runs_.clear();
  finished_ = true;
  return files;
}

}  // namespace lancelet::index
