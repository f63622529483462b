// Reading and writing one Lance data file (file format 2.0, 2.1, 2.2).
//
// Layout (all integers little-endian):
//   [page buffers ...][column metadata ...][column metadata offset table]
//   [global buffer offset table][footer: 40 bytes]
// Global buffer 0 holds a lance.file.FileDescriptor (schema + row count).
// Each column may have its own number of rows: sparse overlays store value columns of
// different lengths in one file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <optional>
#include <utility>
#include <vector>

#include "format/lance_schema.h"
#include "io/object_store.h"
#include "lancelet/record_batch.h"

namespace lancelet::format {

struct FileVersion {
  uint16_t major = 2;
  uint16_t minor = 0;
  static FileVersion Parse(const std::string& text);  // "2.0", "2.1", "2.2" (and "0.3" = 2.0)
  // The (major, minor) of a file footer, which stores 2.0 as 0.3 and 2.1 and 2.2 as
  // themselves; FromDisk also reads a manifest's DataFile, which may say 2.0 either way.
  // FromDisk is nullopt for any other pair (the legacy 0.1 and 0.2, unknown versions).
  static std::optional<FileVersion> FromDisk(uint32_t major, uint32_t minor);
  std::pair<uint16_t, uint16_t> ToDisk() const;
  std::string ToString() const;  // "2.0", "2.1", "2.2"
  bool operator==(const FileVersion&) const = default;
};

struct FileWriterOptions {
  FileVersion version;
  // Soft upper bound on the bytes buffered per column before a page is emitted.
  uint64_t page_size_bytes = 8 << 20;
};

class LanceFileWriter {
 public:
  // `schema` gives the top-level fields written (with their Lance ids, which the
  // FileDescriptor records).
  LanceFileWriter(io::ObjectStore& store, const std::string& path, LanceSchema schema,
                  FileWriterOptions options);
  ~LanceFileWriter();

  // Appends rows to every column. The batch's columns follow the schema's fields.
  void Write(const RecordBatch& batch);
  // Appends values to one top-level field only (columns may end with different lengths).
  void WriteField(size_t field_index, const ArrayData& values);
  // Writes `bytes` as the next global buffer (1, 2, ...; 0 is the FileDescriptor, written
  // by Finish) at the current end of the file, and returns its number: vector indexes keep
  // their IVF and codebook protobufs in global buffers that schema metadata names.
  size_t AddGlobalBuffer(std::string_view bytes);
  // Writes metadata and the footer, and makes the file visible. Returns the file size.
  uint64_t Finish();

  // For DataFile.column_indices: the first column of each top-level field... and for every
  // nested node, its column or -1 (pre-order, same order as the schema's ids).
  std::vector<int32_t> ColumnIndices() const;
  std::vector<int32_t> FieldIds() const;  // pre-order ids of every node

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class LanceFileReader {
 public:
  // Open reads a file whole when it holds at most `whole_up_to` bytes (never less than
  // kTailBytes): it is then served from memory, so reading it costs that one read whatever
  // part is needed. Of a larger file it reads the last kMetadataGuessBytes, and once more
  // only when the metadata starts earlier: a file's metadata is a few hundred bytes per
  // column, and every byte read past it is copied for nothing (64 KiB of it cost 5 us,
  // half of opening an overlay file).
  static constexpr uint64_t kTailBytes = 64 * 1024;
  static constexpr uint64_t kMetadataGuessBytes = 8 * 1024;

  // A legacy (0.1/0.2) file is refused: a dataset's go through OpenLegacy.
  static std::unique_ptr<LanceFileReader> Open(const io::ObjectStore& store, const std::string& path,
                                               uint64_t known_size = 0, uint64_t whole_up_to = kTailBytes);
  // A file outside a dataset (an index's): as Open, but a legacy file is read with the
  // schema it keeps of its own (legacy::ReadOwnSchema), as the reference's BTree and
  // Bitmap indexes before lance 0.21 wrote their pages.
  static std::unique_ptr<LanceFileReader> OpenAlone(const io::ObjectStore& store, const std::string& path);
  // A legacy (0.1/0.2) data file, which holds field ids [min_id, max_id] of a dataset
  // whose fields stored there are `schema` (the file's own copy is not read).
  static std::unique_ptr<LanceFileReader> OpenLegacy(const io::ObjectStore& store, const std::string& path,
                                                     LanceSchema schema, int32_t min_id, int32_t max_id,
                                                     uint64_t known_size = 0);
  ~LanceFileReader();

  FileVersion version() const;       // 0.1 or 0.2 for a legacy file
  const LanceSchema& schema() const;  // from the FileDescriptor (legacy: see OpenAlone, OpenLegacy)
  uint64_t num_rows() const;          // FileDescriptor.length
  // Rows stored for a top-level field (may differ between fields, see above).
  uint64_t num_rows(size_t field_index) const;

  // Contiguous rows [start, start+count) of one top-level field.
  ArrayPtr ReadField(size_t field_index, uint64_t start, uint64_t count) const;
  // Rows at the given indices (any order, duplicates allowed) of one top-level field.
  // Decodes only the pages (and, where the encoding allows, the chunks) that hold them.
  ArrayPtr TakeField(size_t field_index, std::span<const uint64_t> rows) const;
  // A hint that rows [start, start + count) of these fields will be read soon: the
  // buffers of their pages are fetched together now (io::ReadableFile::Prefetch, which
  // only a remote store acts on), skipping a buffer that would take the total past
  // `max_bytes`: a page too large to prefetch still has its small buffers (a mini-block
  // page's chunk sizes) fetched. Returns the bytes asked for.
  uint64_t PrefetchFields(std::span<const size_t> field_indices, uint64_t start, uint64_t count,
                          uint64_t max_bytes) const;
  // A hint that rows [start, start + count) of these fields will be read in order soon:
  // the bytes that hold them (not whole pages) are fetched now, the fields side by side
  // (FieldDecoder::PrefetchRows; only a remote store acts on it).
  void PrefetchRows(std::span<const size_t> field_indices, uint64_t start, uint64_t count) const;
  // A hint that rows `rows` (any order) of these fields will be taken soon: the small
  // buffers (at most `max_buffer_bytes`) of the pages that hold them, which a page reader
  // reads before it can find a row (chunk sizes, a dictionary, a repetition index), are
  // fetched together now; fields taken side by side would otherwise each ask for theirs.
  // Only a remote store acts on it.
  void PrefetchPagesOf(std::span<const size_t> field_indices, std::span<const uint64_t> rows,
                       uint64_t max_buffer_bytes) const;
  // The bytes the pages of these fields hold (FieldDecoder::PageRanges over every row; 0
  // for a decoder that cannot tell).
  uint64_t StoredBytes(std::span<const size_t> field_indices) const;

  const std::string& path() const;
  uint64_t file_size() const;  // bytes, as the file was opened

  // Global buffers (2.x files; none in a legacy one): 0 holds the FileDescriptor, later
  // ones what the writer put there (an index's protobuf messages, say). Each was checked
  // to lie before the column metadata when the file was opened.
  size_t num_global_buffers() const;
  std::string ReadGlobalBuffer(size_t index) const;  // Corrupt naming the file when absent

 private:
  LanceFileReader();
  static std::unique_ptr<LanceFileReader> OpenImpl(const io::ObjectStore& store, const std::string& path,
                                                   uint64_t known_size, uint64_t whole_up_to, bool legacy_alone);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lancelet::format
