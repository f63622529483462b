// In-memory page sink / byte source and random data for the 2.1 encoding tests.
#pragma once

#include <google/protobuf/any.pb.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "encodings_v2_1.pb.h"
#include "file2.pb.h"
#include "format/field_codec.h"
#include "format/lance_schema.h"
#include "lancelet/array.h"
#include "lancelet/scalar.h"

namespace lancelet::format::v21_test {

// A file held in memory: pages append their buffers; reads are counted.
class MemoryFile final : public ByteSource, public PageSink {
 public:
  explicit MemoryFile(uint32_t num_columns) : columns_(num_columns) {}

  void WritePage(uint32_t column, EncodedPage page) override {
    auto* p = columns_.at(column).add_pages();
    for (const auto& b : page.buffers) {
      while (bytes_.size() % 8) bytes_.push_back('\0');
      p->add_buffer_offsets(bytes_.size());
      p->add_buffer_sizes(b.size());
      bytes_ += b;
    }
    p->set_length(page.num_rows);
    p->set_priority(page.priority);
    p->mutable_encoding()->mutable_direct()->set_encoding(page.encoding);
  }

  BlobSidecarWriter& blob_sidecars() override { throw std::runtime_error("a memory file has no blob sidecars"); }

  uint64_t WriteOutOfLine(std::string_view bytes) override {
    while (bytes_.size() % 64) bytes_.push_back('\0');
    const uint64_t position = bytes_.size();
    bytes_ += bytes;
    return position;
  }

  std::string Read(uint64_t offset, uint64_t length) const override {
    ++reads_;
    bytes_read_ += length;
    if (offset + length > bytes_.size()) throw std::runtime_error("read past the end of the memory file");
    return bytes_.substr(offset, length);
  }
  const std::string& path() const override { return path_; }

  std::vector<ColumnRef> Columns() const {
    std::vector<ColumnRef> out;
    for (size_t c = 0; c < columns_.size(); ++c) out.push_back({uint32_t(c), &columns_[c]});
    return out;
  }
  const lance::file::v2::ColumnMetadata& column(size_t c) const { return columns_.at(c); }
  lance::file::v2::ColumnMetadata& mutable_column(size_t c) { return columns_.at(c); }
  const std::string& bytes() const { return bytes_; }
  void ResetCounters() const { reads_ = 0; bytes_read_ = 0; }
  uint64_t reads() const { return reads_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  std::vector<lance::file::v2::ColumnMetadata> columns_;
  std::string bytes_;
  std::string path_ = "memory.lance";
  mutable uint64_t reads_ = 0;
  mutable uint64_t bytes_read_ = 0;
};

inline LanceField MakeLanceField(const std::string& name, const TypePtr& type, Metadata metadata = {}) {
  Schema schema({Field::Make(name, type, true, metadata)});
  return LanceSchema::FromArrow(schema).fields().at(0);
}

inline lance::encodings21::PageLayout PageLayoutOf(const lance::file::v2::ColumnMetadata::Page& page) {
  google::protobuf::Any any;
  any.ParseFromString(page.encoding().direct().encoding());
  lance::encodings21::PageLayout layout;
  layout.ParseFromString(any.value());
  return layout;
}

// Random values of any type; nulls with probability `null_p`, empty lists / strings with
// probability `empty_p`.
class RandomData {
 public:
  explicit RandomData(uint32_t seed, double null_p = 0.1, double empty_p = 0.1)
      : rng_(seed), null_p_(null_p), empty_p_(empty_p) {}

  Scalar Value(const TypePtr& type, bool allow_null = true) {
    if (allow_null && Chance(null_p_)) return Scalar::Null(type);
    const DataType& t = *type;
    switch (t.id()) {
      case TypeId::kBool: return {type, Chance(0.5)};
      case TypeId::kInt8: return {type, int64_t(Int(-128, 127))};
      case TypeId::kInt16: return {type, int64_t(Int(-30000, 30000))};
      case TypeId::kInt32: return {type, int64_t(Int(INT32_MIN, INT32_MAX))};
      case TypeId::kInt64:
      case TypeId::kDate64:
      case TypeId::kTimestamp:
      case TypeId::kTime64:
      case TypeId::kDuration: return {type, int64_t(Int(-(int64_t(1) << 50), int64_t(1) << 50))};
      case TypeId::kTime32: return {type, int64_t(Int(0, 86399999))};
      case TypeId::kNull: return Scalar::Null(type);
      case TypeId::kDate32: return {type, int64_t(Int(-100000, 100000))};
      case TypeId::kUInt8: return {type, uint64_t(Int(0, 255))};
      case TypeId::kUInt16: return {type, uint64_t(Int(0, 65535))};
      case TypeId::kUInt32: return {type, uint64_t(Int(0, UINT32_MAX))};
      case TypeId::kUInt64: return {type, uint64_t(Int(0, INT64_MAX))};
      case TypeId::kFloat16: return {type, double(Int(-2048, 2048)) / 8};
      case TypeId::kFloat32: return {type, double(float(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_)))};
      case TypeId::kFloat64: return {type, std::uniform_real_distribution<double>(-1e9, 1e9)(rng_)};
      case TypeId::kFixedSizeBinary:
      case TypeId::kDecimal128:
      case TypeId::kDecimal256: return {type, Bytes(size_t(t.byte_width()))};
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
        if (Chance(empty_p_)) return {type, std::string()};
        return {type, Bytes(size_t(Int(min_len_, max_len_)))};
      case TypeId::kFixedSizeList: {
        std::vector<Scalar> items;
        for (int32_t k = 0; k < t.fixed_size(); ++k) items.push_back(Value(t.child(0)->type, item_nulls_));
        return {type, items};
      }
      case TypeId::kList:
      case TypeId::kLargeList: {
        std::vector<Scalar> items;
        if (!Chance(empty_p_)) {
          const int64_t n = Int(1, max_items_);
          for (int64_t k = 0; k < n; ++k) items.push_back(Value(t.child(0)->type));
        }
        return {type, items};
      }
      case TypeId::kMap: {  // entries and keys are never NULL
        const TypePtr& entries = t.child(0)->type;
        std::vector<Scalar> items;
        if (!Chance(empty_p_)) {
          const int64_t n = Int(1, max_items_);
          for (int64_t k = 0; k < n; ++k)
            items.push_back({entries, std::vector<Scalar>{Value(entries->child(0)->type, false),
                                                          Value(entries->child(1)->type)}});
        }
        return {type, items};
      }
      case TypeId::kStruct: {
        std::vector<Scalar> fields;
        for (const auto& f : t.children()) fields.push_back(Value(f->type));
        return {type, fields};
      }
    }
    return Scalar::Null(type);
  }

  ArrayPtr Array(const TypePtr& type, int64_t length) {
    std::vector<Scalar> values;
    for (int64_t k = 0; k < length; ++k) values.push_back(Value(type));
    return MakeArray(type, values);
  }

  void set_lengths(int64_t min_len, int64_t max_len) {
    min_len_ = min_len;
    max_len_ = max_len;
  }
  void set_max_items(int64_t n) { max_items_ = n; }
  void set_item_nulls(bool v) { item_nulls_ = v; }

 private:
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  std::string Bytes(size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = char('a' + Int(0, 25));
    return s;
  }

  std::mt19937_64 rng_;
  double null_p_, empty_p_;
  int64_t min_len_ = 1, max_len_ = 20;
  int64_t max_items_ = 5;
  bool item_nulls_ = false;
};

}  // namespace lancelet::format::v21_test
