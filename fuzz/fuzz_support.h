// Shared by the fuzz entry points (fuzz/*_fuzz.cc) and the smoke test that runs them
// (tests/fuzz/fuzz_smoke_test.cc): an in-memory object store, the "field harness" input
// format for the page decoders, and the bounds every target keeps.
//
// Contract of every entry point: for any input it returns 0 or throws nothing but what
// it catches itself (lancelet::Error). Any other exception, a sanitizer report or a
// crash is a bug in the reader.
//
// Everything here is inline: the smoke test compiles all targets into one program.
#pragma once

#include <google/protobuf/any.pb.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encodings_v2_1.pb.h"
#include "file2.pb.h"
#include "format/field_codec.h"
#include "format/lance_file.h"
#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/type.h"

namespace lancelet::fuzz {

// Reads past these are not attempted: a length field claiming billions of rows is
// "valid" enough to make any reader allocate gigabytes, which is not what we test.
inline constexpr uint64_t kMaxRowsRead = 1 << 16;
inline constexpr size_t kMaxTakeRows = 8;

// ------------------------------------------------------------------------ object store

// The targets' store: io's in-memory store (io/memory_store.cc), filled with Add.
class MemoryStore {
 public:
  void Add(const std::string& path, std::string bytes) { store_->Put(path, bytes); }
  operator const io::ObjectStore&() const { return *store_; }

 private:
  std::shared_ptr<io::ObjectStore> store_ = io::MakeMemoryStore();
};

class MemoryByteSource final : public format::ByteSource {
 public:
  MemoryByteSource(std::string path, std::string_view bytes) : path_(std::move(path)), bytes_(bytes) {}
  std::string Read(uint64_t offset, uint64_t length) const override {
    if (offset > bytes_.size() || length > bytes_.size() - offset)
      ThrowCorrupt("{}: read of [{}, {}) past the end ({} bytes)", path_, offset, offset + length, bytes_.size());
    return std::string(bytes_.substr(offset, length));
  }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::string_view bytes_;
};

// ------------------------------------------------------------------------- byte reader

// Consumes little-endian fields from the front of a fuzz input; running out is an
// ordinary Corrupt error (the target just returns).
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(reinterpret_cast<const char*>(data)), size_(size) {}
  template <typename T>
  T Get() {
    T v{};
    if (size_ - pos_ < sizeof(T)) ThrowCorrupt("fuzz input: truncated at byte {}", pos_);
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view Bytes(size_t n) {
    if (size_ - pos_ < n) ThrowCorrupt("fuzz input: {} bytes wanted at byte {}, {} left", n, pos_, size_ - pos_);
    std::string_view out(data_ + pos_, n);
    pos_ += n;
    return out;
  }
  std::string_view Rest() { return Bytes(size_ - pos_); }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

template <typename T>
void PutLE(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

// ---------------------------------------------------------------------- field harness
//
// One top-level field and its columns, as the page decoders see them inside a file:
//   u8  flags        bit 0: field metadata lance-encoding:packed=true; bit 1: version 2.2
//   u16 type length, then the type as DataType::ToString spells it
//   u8  number of columns; per column: u32 length + a serialized ColumnMetadata
//   the rest: the data region that the pages' buffer offsets point into.

struct FieldHarness {
  bool packed = false;
  bool v22 = false;
  std::string type;
  std::vector<std::string> columns;  // serialized lance::file::v2::ColumnMetadata
  std::string data;
};

inline std::string EncodeFieldHarness(const FieldHarness& h) {
  std::string out;
  PutLE<uint8_t>(out, uint8_t((h.packed ? 1 : 0) | (h.v22 ? 2 : 0)));
  PutLE<uint16_t>(out, uint16_t(h.type.size()));
  out += h.type;
  PutLE<uint8_t>(out, uint8_t(h.columns.size()));
  for (const auto& c : h.columns) {
    PutLE<uint32_t>(out, uint32_t(c.size()));
    out += c;
  }
  return out + h.data;
}

enum class LayoutFilter { kAny, kMiniBlock, kFullZip };

// The v21 page layout of a page, or false when it has none (2.0 pages, garbage).
inline bool PageLayoutOf(const lance::file::v2::ColumnMetadata::Page& page, lance::encodings21::PageLayout* layout) {
  google::protobuf::Any any;
  return any.ParseFromString(page.encoding().direct().encoding()) &&
         any.type_url().find("encodings21.PageLayout") != std::string::npos && layout->ParseFromString(any.value());
}

// Decodes the field from the harness input: all rows when there are few enough, then a
// take of a handful of rows. `v20` picks 2.0; for 2.1 targets flag bit 1 picks 2.2.
// Inputs outside the harness's bounds return early; errors of the reader propagate.
inline void DecodeFieldHarness(const uint8_t* data, size_t size, bool v20, LayoutFilter filter) {
  InputReader in(data, size);
  const uint8_t flags = in.Get<uint8_t>();
  const std::string type_text(in.Bytes(in.Get<uint16_t>()));
  const uint8_t num_columns = in.Get<uint8_t>();
  if (num_columns == 0 || num_columns > 16) return;
  std::vector<lance::file::v2::ColumnMetadata> metas(num_columns);
  for (auto& meta : metas)
    if (!meta.ParseFromString(std::string(in.Bytes(in.Get<uint32_t>())))) return;
  const std::string_view region = in.Rest();

  TypePtr type = DataType::Parse(type_text);
  Metadata metadata;
  if (flags & 1) metadata["lance-encoding:packed"] = "true";
  Schema schema({Field::Make("f", type, true, metadata)});
  const format::LanceSchema lance_schema = format::LanceSchema::FromArrow(schema);
  const format::LanceField& field = lance_schema.fields().at(0);
  const format::FileVersion version = v20 ? format::FileVersion{2, 0}
                                          : format::FileVersion{2, uint16_t((flags & 2) ? 2 : 1)};
  if (format::NumColumns(version, field) != num_columns) return;

  uint64_t rows = 0;
  for (const auto& meta : metas) {
    uint64_t column_rows = 0;
    for (const auto& page : meta.pages()) {
      if (filter != LayoutFilter::kAny) {
        lance::encodings21::PageLayout layout;
        if (!PageLayoutOf(page, &layout)) return;
        if (filter == LayoutFilter::kMiniBlock && !layout.has_mini_block_layout()) return;
        if (filter == LayoutFilter::kFullZip && !layout.has_full_zip_layout()) return;
      }
      if (page.length() > kMaxRowsRead) return;
      column_rows += page.length();
    }
    rows = std::max(rows, column_rows);
  }
  if (rows > kMaxRowsRead) return;

  MemoryByteSource source("fuzz.lance", region);
  std::vector<format::ColumnRef> refs;
  for (uint32_t c = 0; c < num_columns; ++c) refs.push_back({c, &metas[c]});
  auto decoder = format::MakeFieldDecoder(version, field, std::move(refs), source);
  const uint64_t n = decoder->num_rows();
  if (n > kMaxRowsRead) return;
  auto all = decoder->Read(0, n);
  ValidateArray(*all, "fuzz read");
  if (n > 0) {
    std::vector<uint64_t> picks;
    for (size_t k = 0; k < kMaxTakeRows; ++k) picks.push_back((k * 2654435761u) % n);
    auto taken = decoder->Take(picks);
    ValidateArray(*taken, "fuzz take");
  }
}

inline int RunFieldHarness(const uint8_t* data, size_t size, bool v20, LayoutFilter filter) {
  try {
    DecodeFieldHarness(data, size, v20, filter);
  } catch (const Error&) {
  }
  return 0;
}

// Harness inputs for every top-level field of a real Lance file (seeds).
inline std::vector<std::string> FieldHarnessSeeds(const std::string& file_bytes) {
  MemoryStore store;
  store.Add("seed.lance", file_bytes);
  auto reader = format::LanceFileReader::Open(store, "seed.lance");
  const auto get = [&](size_t pos, size_t width) {
    uint64_t v = 0;
    std::memcpy(&v, file_bytes.data() + pos, width);
    return v;
  };
  const size_t footer = file_bytes.size() - 40;
  const uint64_t offsets_start = get(footer + 8, 8);
  std::vector<std::string> seeds;
  uint32_t first = 0;
  for (const auto& field : reader->schema().fields()) {
    FieldHarness h;
    h.packed = field.metadata.count("lance-encoding:packed") > 0 || field.metadata.count("packed") > 0;
    h.v22 = reader->version().minor == 2;
    h.type = field.type->ToString();
    const uint32_t n = format::NumColumns(reader->version(), field);
    for (uint32_t c = first; c < first + n; ++c) {
      lance::file::v2::ColumnMetadata meta;
      meta.ParseFromString(file_bytes.substr(get(offsets_start + c * 16, 8), get(offsets_start + c * 16 + 8, 8)));
      // Move every page buffer into the harness data region.
      for (auto& page : *meta.mutable_pages()) {
        for (int b = 0; b < page.buffer_offsets_size(); ++b) {
          const uint64_t at = h.data.size();
          h.data += file_bytes.substr(page.buffer_offsets(b), page.buffer_sizes(b));
          page.set_buffer_offsets(b, at);
        }
      }
      for (int b = 0; b < meta.buffer_offsets_size(); ++b) {
        const uint64_t at = h.data.size();
        h.data += file_bytes.substr(meta.buffer_offsets(b), meta.buffer_sizes(b));
        meta.set_buffer_offsets(b, at);
      }
      h.columns.push_back(meta.SerializeAsString());
    }
    first += n;
    seeds.push_back(EncodeFieldHarness(h));
  }
  return seeds;
}

}  // namespace lancelet::fuzz
