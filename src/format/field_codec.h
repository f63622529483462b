// The seam between the file container and the per-version encodings.
//
// A Lance file stores each top-level field in one or more columns (2.0: one column per
// schema node, parents included; 2.1/2.2: one column per leaf, lists sharing their item's
// column, struct parents having none). A FieldEncoder turns a field's values into pages
// of the columns it owns; a FieldDecoder reads them back. The container (lance_file.cc)
// knows nothing about encodings; the encodings know nothing about footers and offsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/lance_file.h"
#include "lancelet/array.h"
#include "lancelet/error.h"

namespace lance::file::v2 { class ColumnMetadata; }

namespace lancelet::format {

class BlobSidecarWriter;

struct EncodedPage {
  uint64_t num_rows = 0;              // top-level rows in the page (ColumnMetadata.Page.length)
  std::vector<std::string> buffers;   // written in order; offsets/sizes recorded by the container
  std::string encoding;               // serialized google.protobuf.Any (Page.encoding.direct)
  uint64_t priority = 0;              // first row of the page within the column
};

class PageSink {
 public:
  virtual ~PageSink() = default;
  // `column` counts from 0 within the field's own columns.
  virtual void WritePage(uint32_t column, EncodedPage page) = 0;
  // Writes `bytes` at the end of the file, aligned and padded as page buffers are, and
  // returns their offset: blob values, which a page written later describes.
  virtual uint64_t WriteOutOfLine(std::string_view bytes) = 0;
  // The sidecar files of this data file (blob v2 values too large to stay inline).
  virtual BlobSidecarWriter& blob_sidecars() = 0;
};

class FieldEncoder {
 public:
  virtual ~FieldEncoder() = default;
  virtual uint32_t num_columns() const = 0;
  // Buffers `values` and emits pages once a page's worth is buffered.
  virtual void Append(const ArrayData& values, PageSink& sink) = 0;
  // Emits the remaining buffered values.
  virtual void Finish(PageSink& sink) = 0;
  // ColumnMetadata.encoding (a serialized Any) of owned column i.
  virtual std::string ColumnEncoding(uint32_t column) const = 0;
  // The nodes of the field a data file lists (DataFile.fields), in pre-order: every node,
  // except what a packed column holds (a packed struct's children at 2.1+).
  virtual std::vector<int32_t> NodeIds() const = 0;
  // For each of NodeIds(): its column within the field, or -1.
  virtual std::vector<int32_t> NodeColumns() const = 0;
};

// Byte ranges of the file, for decoders.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::string Read(uint64_t offset, uint64_t length) const = 0;
  // Reads exactly `length` bytes at `offset` into `out`. Decoders use it to land page bytes
  // straight in the Buffer an array keeps (one copy instead of a string plus a copy);
  // sources that can read in place override the fallback, which goes through Read.
  virtual void ReadInto(uint64_t offset, uint64_t length, void* out) const {
    const std::string bytes = Read(offset, length);
    if (bytes.size() != length)
      ThrowCorrupt("{}: read {} bytes at offset {}, expected {}", path(), bytes.size(), offset, length);
    if (length > 0) std::memcpy(out, bytes.data(), length);
  }
  // Every range, as ReadInto would; a source over a store with costly requests hands
  // them to it together (io::ReadableFile::ReadRanges), so that it can merge them and
  // fetch them concurrently.
  virtual void ReadRangesInto(std::span<const io::ByteRange> ranges) const {
    for (const io::ByteRange& r : ranges) ReadInto(r.offset, r.length, r.out);
  }
  // A hint that these ranges will be read soon (io::ReadableFile::Prefetch; with none,
  // whether the source acts on hints).
  virtual bool Prefetch(std::span<const io::ByteRange> /*ranges*/) const { return false; }
  virtual const std::string& path() const = 0;
  // The bytes [offset, offset + length) where they already sit in memory for the source's
  // lifetime (a small file read whole), so that a decoder can read them in place; null
  // when they would have to be read. The range must lie within the source.
  virtual const uint8_t* Resident(uint64_t /*offset*/, uint64_t /*length*/) const { return nullptr; }
};

struct ColumnRef {
  uint32_t index;                                  // column index within the file
  const lance::file::v2::ColumnMetadata* metadata;
};

class FieldDecoder {
 public:
  virtual ~FieldDecoder() = default;
  virtual uint64_t num_rows() const = 0;
  virtual ArrayPtr Read(uint64_t start, uint64_t count) const = 0;
  virtual ArrayPtr Take(std::span<const uint64_t> rows) const = 0;
  // Appends the byte ranges (in the file) of every buffer of the pages that hold rows
  // [start, start + count): what a read of those rows will fetch, for a prefetch. A
  // decoder that cannot tell appends nothing (the default).
  virtual void PageRanges(uint64_t /*start*/, uint64_t /*count*/, std::vector<io::ByteRange>& /*out*/) const {}
  // A hint that rows [start, start + count) will be read soon: a decoder that can tell
  // which bytes hold them asks the source for those now (PageReader::PrefetchRows). The
  // default does nothing.
  virtual void PrefetchRows(uint64_t /*start*/, uint64_t /*count*/) const {}
};

// The distinct rows of a Take, ascending: what a decoder reads. With `ascending` (rows
// known to be sorted, as a scan's are) the sort is skipped.
inline std::vector<uint64_t> SortedUniqueRows(std::span<const uint64_t> rows, bool ascending) {
  std::vector<uint64_t> out(rows.begin(), rows.end());
  if (!ascending) std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// How many columns `field` occupies at `version`.
uint32_t NumColumns(FileVersion version, const LanceField& field);
// How many of a file's columns `field` occupies as it was written, `columns` being the
// file's columns from the field's first on: NumColumns, except that a 2.0 file written by
// lance 0.13 or earlier stores a string or binary node as a list of bytes in two columns
// (List offsets, then the u8 items), which its first column's first page tells.
uint32_t StoredColumns(FileVersion version, const LanceField& field,
                       std::span<const lance::file::v2::ColumnMetadata> columns);

std::unique_ptr<FieldEncoder> MakeFieldEncoder(FileVersion version, const LanceField& field,
                                               const FileWriterOptions& options);
// `columns` are the field's own columns, in order. Errors name the file, field and page.
std::unique_ptr<FieldDecoder> MakeFieldDecoder(FileVersion version, const LanceField& field,
                                               std::vector<ColumnRef> columns, const ByteSource& source);

// Per-version factories behind the two above.
namespace v20 {
uint32_t NumColumns(const LanceField& field);
uint32_t StoredColumns(const LanceField& field, std::span<const lance::file::v2::ColumnMetadata> columns);
std::unique_ptr<FieldEncoder> MakeEncoder(const LanceField& field, const FileWriterOptions& options);
std::unique_ptr<FieldDecoder> MakeDecoder(const LanceField& field, std::vector<ColumnRef> columns,
                                          const ByteSource& source);
}  // namespace v20
namespace v21 {  // 2.1 and 2.2
uint32_t NumColumns(const LanceField& field);
std::unique_ptr<FieldEncoder> MakeEncoder(FileVersion version, const LanceField& field,
                                          const FileWriterOptions& options);
std::unique_ptr<FieldDecoder> MakeDecoder(FileVersion version, const LanceField& field,
                                          std::vector<ColumnRef> columns, const ByteSource& source);
}  // namespace v21

}  // namespace lancelet::format
