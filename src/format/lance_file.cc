// The Lance data file container (versions 2.0, 2.1, 2.2), independent of the encodings.
//
// Write order, as the reference writes it:
//   page buffers (each padded to 64 bytes with 0x48), global buffer 0 (FileDescriptor,
//   unpadded), column metadata, column metadata offset table, global buffer offset
//   table, 40-byte footer.
// Footer: u64 column_meta_start, u64 column_meta_offsets_start, u64 global_buff_offsets_start,
//   u32 num_global_buffers, u32 num_columns, u16 major, u16 minor, "LANC".
// Version 2.0 is stored as 0.3; 0.1 and 0.2 are the legacy (v1) format.
#include "format/lance_file.h"

#include "io/run_concurrently.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "file.pb.h"
#include "file2.pb.h"
#include "format/blob_bytes.h"
#include "format/dictionary_keys.h"
#include "format/field_codec.h"
#include "format/legacy_file.h"
#include "format/little_endian.h"
#include "lancelet/error.h"

namespace lancelet::format {
namespace {

constexpr uint64_t kFooterSize = 40;
constexpr uint64_t kPageAlignment = 64;
constexpr uint8_t kPadByte = 72;
constexpr char kMagic[4] = {'L', 'A', 'N', 'C'};
// Bytes read from the end of a file on open; enough for the metadata of most files.

}  // namespace

FileVersion FileVersion::Parse(const std::string& text) {
  if (text == "2.0" || text == "0.3" || text == "stable") return {2, 0};
  if (text == "2.1") return {2, 1};
  if (text == "2.2" || text == "next") return {2, 2};
  if (text == "0.1" || text == "0.2" || text == "legacy") {
    ThrowNotSupported("Lance file version '{}' (the legacy v1 format) is not supported; use 2.0, 2.1 or 2.2", text);
  }
  ThrowInvalid("unknown Lance file version '{}' (expected 2.0, 2.1 or 2.2)", text);
}

std::optional<FileVersion> FileVersion::FromDisk(uint32_t major, uint32_t minor) {
  if (major == 0 && minor == 3) return FileVersion{2, 0};
  if (major == 2 && minor <= 2) return FileVersion{2, uint16_t(minor)};
  return std::nullopt;
}

std::pair<uint16_t, uint16_t> FileVersion::ToDisk() const {
  if (major == 2 && minor == 0) return {0, 3};
  return {major, minor};
}

std::string FileVersion::ToString() const { return fmt::format("{}.{}", major, minor); }

// --- writer --------------------------------------------------------------------------

struct LanceFileWriter::Impl : PageSink {
  std::string path;
  LanceSchema schema;
  FileWriterOptions options;
  io::ObjectStore* store = nullptr;
  std::unique_ptr<io::WritableFile> file;
  std::unique_ptr<BlobSidecarWriter> sidecars;  // blob v2 values kept outside the file
  std::vector<std::unique_ptr<FieldEncoder>> encoders;
  std::vector<uint32_t> first_column;  // per top-level field
  std::vector<uint64_t> rows;          // per top-level field
  std::vector<lance::file::v2::ColumnMetadata> columns;
  uint32_t current_field = 0;          // whose pages WritePage receives
  std::vector<std::pair<uint64_t, uint64_t>> extra_buffers;  // global buffers 1.., [position, size)
  bool finished = false;

  void WritePage(uint32_t column, EncodedPage page) override {
    auto& meta = columns.at(first_column[current_field] + column);
    auto* pb = meta.add_pages();
    for (const auto& buffer : page.buffers) {
      pb->add_buffer_offsets(file->position());
      pb->add_buffer_sizes(buffer.size());
      WritePadded(buffer);
    }
    pb->set_length(page.num_rows);
    pb->set_priority(page.priority);
    pb->mutable_encoding()->mutable_direct()->set_encoding(std::move(page.encoding));
  }

  BlobSidecarWriter& blob_sidecars() override {
    if (!sidecars) sidecars = std::make_unique<BlobSidecarWriter>(*store, path);
    return *sidecars;
  }

  uint64_t WriteOutOfLine(std::string_view bytes) override {
    const uint64_t position = file->position();
    WritePadded(bytes);
    return position;
  }

  void WritePadded(std::string_view bytes) {
    file->Write(bytes);
    static const std::string kPad(kPageAlignment, char(kPadByte));
    uint64_t rem = bytes.size() % kPageAlignment;
    if (rem) file->Write(kPad.data(), kPageAlignment - rem);
  }

  void CheckOpen() const {
    if (finished) ThrowInvalid("{}: the file writer is already finished", path);
  }
};

namespace {

bool ContainsMap(const DataType& type) {
  if (type.id() == TypeId::kMap) return true;
  for (const auto& child : type.children())
    if (ContainsMap(*child->type)) return true;
  return false;
}

}  // namespace

LanceFileWriter::LanceFileWriter(io::ObjectStore& store, const std::string& path, LanceSchema schema,
                                 FileWriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.path = path;
  m.schema = std::move(schema);
  m.options = options;
  uint32_t next_column = 0;
  for (const auto& field : m.schema.fields()) {
    // As the reference: maps need the 2.2 structural encoding.
    if (options.version.major == 2 && options.version.minor < 2 && ContainsMap(*field.type))
      ThrowNotSupported("field '{}' ({}): Lance file version {} cannot store maps; use file version 2.2",
                        field.name, field.type->ToString(), options.version.ToString());
    field.ForEach([](const LanceField& node) {
      if (node.dictionary_index) CheckWritableDictionaryField(node);
    });
    m.first_column.push_back(next_column);
    m.encoders.push_back(MakeFieldEncoder(options.version, field, options));
    next_column += m.encoders.back()->num_columns();
    m.rows.push_back(0);
  }
  m.columns.resize(next_column);
  m.store = &store;
  m.file = store.OpenWrite(path, /*no_overwrite=*/false);
}

LanceFileWriter::~LanceFileWriter() = default;

void LanceFileWriter::Write(const RecordBatch& batch) {
  auto& m = *impl_;
  m.CheckOpen();
  if (batch.num_columns() != m.encoders.size()) {
    ThrowInvalid("{}: batch has {} columns but the file schema has {} fields", m.path, batch.num_columns(),
                 m.encoders.size());
  }
  for (size_t i = 0; i < m.encoders.size(); ++i) WriteField(i, *batch.column(i));
}

void LanceFileWriter::WriteField(size_t field_index, const ArrayData& values) {
  auto& m = *impl_;
  m.CheckOpen();
  if (field_index >= m.encoders.size()) {
    ThrowInvalid("{}: field index {} out of range ({} fields)", m.path, field_index, m.encoders.size());
  }
  m.current_field = uint32_t(field_index);
  m.encoders[field_index]->Append(values, m);
  m.rows[field_index] += uint64_t(values.length);
}

size_t LanceFileWriter::AddGlobalBuffer(std::string_view bytes) {
  auto& m = *impl_;
  m.CheckOpen();
  m.extra_buffers.emplace_back(m.file->position(), bytes.size());
  m.WritePadded(bytes);
  return m.extra_buffers.size();
}

uint64_t LanceFileWriter::Finish() {
  auto& m = *impl_;
  m.CheckOpen();
  m.finished = true;
  for (size_t f = 0; f < m.encoders.size(); ++f) {
    m.current_field = uint32_t(f);
    m.encoders[f]->Finish(m);
    for (uint32_t c = 0; c < m.encoders[f]->num_columns(); ++c) {
      m.columns[m.first_column[f] + c].mutable_encoding()->mutable_direct()->set_encoding(
          m.encoders[f]->ColumnEncoding(c));
    }
  }

  // Fields may have been written to different lengths (see WriteField); the descriptor
  // records the longest.
  lance::file::FileDescriptor descriptor;
  m.schema.ToProto(descriptor.mutable_schema()->mutable_fields());
  for (const auto& [k, v] : m.schema.metadata()) (*descriptor.mutable_schema()->mutable_metadata())[k] = v;
  descriptor.set_length(m.rows.empty() ? 0 : *std::max_element(m.rows.begin(), m.rows.end()));
  // Deterministic: the schema metadata is a map, and the same file should be the same bytes.
  std::string descriptor_bytes;
  {
    google::protobuf::io::StringOutputStream stream(&descriptor_bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    descriptor.SerializeToCodedStream(&coded);
  }
  const uint64_t descriptor_position = m.file->position();
  m.file->Write(descriptor_bytes);

  const uint64_t column_meta_start = m.file->position();
  std::vector<std::pair<uint64_t, uint64_t>> column_positions;
  for (const auto& column : m.columns) {
    std::string bytes = column.SerializeAsString();
    column_positions.emplace_back(m.file->position(), bytes.size());
    m.file->Write(bytes);
  }
  std::string tail;
  const uint64_t cmo_start = m.file->position();
  for (auto [pos, size] : column_positions) {
    AppendLE<uint64_t>(tail, pos);
    AppendLE<uint64_t>(tail, size);
  }
  const uint64_t gbo_start = cmo_start + tail.size();
  AppendLE<uint64_t>(tail, descriptor_position);
  AppendLE<uint64_t>(tail, descriptor_bytes.size());
  for (auto [pos, size] : m.extra_buffers) {
    AppendLE<uint64_t>(tail, pos);
    AppendLE<uint64_t>(tail, size);
  }
  auto [major, minor] = m.options.version.ToDisk();
  AppendLE<uint64_t>(tail, column_meta_start);
  AppendLE<uint64_t>(tail, cmo_start);
  AppendLE<uint64_t>(tail, gbo_start);
  AppendLE<uint32_t>(tail, uint32_t(1 + m.extra_buffers.size()));
  AppendLE<uint32_t>(tail, uint32_t(m.columns.size()));
  AppendLE<uint16_t>(tail, major);
  AppendLE<uint16_t>(tail, minor);
  tail.append(kMagic, 4);
  m.file->Write(tail);
  const uint64_t size = m.file->position();
  if (m.sidecars) m.sidecars->Finish();  // before the file that points into them
  m.file->Finish();
  return size;
}

std::vector<int32_t> LanceFileWriter::ColumnIndices() const {
  std::vector<int32_t> out;
  for (size_t f = 0; f < impl_->encoders.size(); ++f) {
    for (int32_t c : impl_->encoders[f]->NodeColumns()) {
      out.push_back(c < 0 ? -1 : int32_t(impl_->first_column[f]) + c);
    }
  }
  return out;
}

std::vector<int32_t> LanceFileWriter::FieldIds() const {
  std::vector<int32_t> out;
  for (const auto& encoder : impl_->encoders)
    for (int32_t id : encoder->NodeIds()) out.push_back(id);
  return out;
}

// --- reader --------------------------------------------------------------------------

namespace {

class FileByteSource final : public ByteSource {
 public:
  explicit FileByteSource(std::unique_ptr<io::ReadableFile> file, uint64_t size)
      : file_(std::move(file)), path_(file_->path()), size_(size) {}
  std::string Read(uint64_t offset, uint64_t length) const override {
    std::string out(length, '\0');
    ReadInto(offset, length, out.data());
    return out;
  }
  void ReadInto(uint64_t offset, uint64_t length, void* out) const override {
    if (offset > size_ || length > size_ - offset) {
      ThrowCorrupt("{}: reading bytes [{}, {}) beyond the end of the {}-byte file", path(), offset, offset + length,
                   size_);
    }
    if (length == 0) return;
    if (resident_.size() == size_) std::memcpy(out, resident_.data() + offset, length);
    else file_->ReadAt(offset, length, out);
  }
  void ReadRangesInto(std::span<const io::ByteRange> ranges) const override {
    for (const io::ByteRange& r : ranges)
      if (r.offset > size_ || r.length > size_ - r.offset)
        ThrowCorrupt("{}: reading bytes [{}, {}) beyond the end of the {}-byte file", path(), r.offset,
                     r.offset + r.length, size_);
    if (resident_.size() != size_) return file_->ReadRanges(ranges);
    for (const io::ByteRange& r : ranges) std::memcpy(r.out, resident_.data() + r.offset, r.length);
  }
  bool Prefetch(std::span<const io::ByteRange> ranges) const override {
    return resident_.size() != size_ && file_->Prefetch(ranges);
  }
  const std::string& path() const override { return path_; }
  uint64_t size() const { return size_; }
  const uint8_t* Resident(uint64_t offset, uint64_t length) const override {
    if (resident_.size() != size_ || offset > size_ || length > size_ - offset) return nullptr;
    return reinterpret_cast<const uint8_t*>(resident_.data()) + offset;
  }
  // Serves every later read from `whole`, the file's bytes already read, with no I/O: a
  // small file (an overlay of scattered cells, say) then costs one read in all. The file
  // is closed: a version holding hundreds of small overlays open holds no descriptor
  // for them.
  void KeepInMemory(std::string whole) {
    if (whole.size() != size_) return;
    resident_ = std::move(whole);
    file_.reset();
  }

 private:
  std::unique_ptr<io::ReadableFile> file_;  // null once the bytes are resident
  std::string path_;
  uint64_t size_;
  std::string resident_;
};

}  // namespace

struct LanceFileReader::Impl {
  std::string path;
  std::unique_ptr<FileByteSource> source;
  FileVersion version;
  LanceSchema schema;
  uint64_t num_rows = 0;
  std::vector<lance::file::v2::ColumnMetadata> columns;
  // [start, end) of each global buffer as the offset table says (checked when read); 0 is
  // the FileDescriptor. Global buffers sit before the column metadata.
  std::vector<std::pair<uint64_t, uint64_t>> global_buffers;
  uint64_t column_meta_start = 0;
  // Per top-level field; its columns run to the next field's first (StoredColumns).
  std::vector<uint32_t> first_column;
  std::shared_ptr<const legacy::Layout> legacy;  // set for a legacy file
  mutable std::mutex mutex;
  mutable std::vector<std::unique_ptr<FieldDecoder>> decoders;

  // The buffers of the pages that hold rows [start, start + count) of these fields
  // (FieldDecoder::PageRanges), field by field.
  std::vector<io::ByteRange> PageBuffers(std::span<const size_t> field_indices, uint64_t start,
                                         uint64_t count) const {
    std::vector<io::ByteRange> buffers;
    for (size_t field_index : field_indices) Decoder(field_index).PageRanges(start, count, buffers);
    return buffers;
  }

  // Opens the file behind `file_path` as the source; returns its size.
  uint64_t OpenSource(const io::ObjectStore& store, const std::string& file_path, uint64_t known_size) {
    auto file = store.OpenRead(file_path, known_size);
    const uint64_t size = file->size();
    path = file_path;
    source = std::make_unique<FileByteSource>(std::move(file), size);
    return size;
  }

  // A legacy file read alone: its own schema (not a dataset's) describes its columns.
  void ReadLegacyWithOwnSchema(uint64_t size) {
    schema = legacy::ReadOwnSchema(*source, size);
    int32_t min_id = INT32_MAX, max_id = INT32_MIN;
    for (const auto& top : schema.fields()) {
      top.ForEach([&](const LanceField& field) {
        min_id = std::min(min_id, field.id);
        max_id = std::max(max_id, field.id);
      });
    }
    legacy = legacy::Layout::Read(*source, size, min_id, max_id);
    version = {0, legacy->minor_version()};
    num_rows = legacy->num_rows();
    decoders.resize(schema.fields().size());
  }

  // Parses each column's metadata (its position and length in the offset table at
  // cmo_start) from the file's tail, read through `at`. Page buffers hold the bytes before
  // the column metadata, and no global buffer's bytes: a buffer position moved (one
  // flipped bit) onto the schema or the metadata is refused. (Alignment is not checked:
  // the format does not require it.)
  void ReadColumnMetadata(const std::function<const char*(uint64_t)>& at, uint64_t column_meta_start,
                          uint64_t cmo_start, uint64_t gbo_start, uint32_t num_global, uint32_t num_columns) {
    global_buffers.resize(num_global);
    for (uint32_t g = 0; g < num_global; ++g) {
      const uint64_t pos = LoadLE<uint64_t>(at(gbo_start + 16 * g));
      global_buffers[g] = {pos, pos + LoadLE<uint64_t>(at(gbo_start + 16 * g + 8))};
    }
    auto check_page_buffer = [&](uint32_t c, uint64_t offset, uint64_t bytes) {
      if (offset > column_meta_start || bytes > column_meta_start - offset)
        ThrowCorrupt("{}: a page buffer of column {} at [{}, {}) lies outside the data pages, which end where the "
                     "column metadata starts, at {}", path, c, offset, offset + bytes, column_meta_start);
      for (uint32_t g = 0; g < num_global; ++g)
        if (offset < global_buffers[g].second && global_buffers[g].first < offset + bytes)
          ThrowCorrupt("{}: a page buffer of column {} at [{}, {}) overlaps global buffer {} at [{}, {})", path, c,
                       offset, offset + bytes, g, global_buffers[g].first, global_buffers[g].second);
    };

    columns.resize(num_columns);
    for (uint32_t c = 0; c < num_columns; ++c) {
      const uint64_t pos = LoadLE<uint64_t>(at(cmo_start + 16 * c));
      const uint64_t len = LoadLE<uint64_t>(at(cmo_start + 16 * c + 8));
      if (pos < column_meta_start || pos > cmo_start || len > cmo_start - pos) {
        ThrowCorrupt("{}: metadata of column {} at [{}, {}) lies outside the column metadata region [{}, {})", path,
                     c, pos, pos + len, column_meta_start, cmo_start);
      }
      if (!columns[c].ParseFromArray(at(pos), int(len))) {
        ThrowCorrupt("{}: metadata of column {} is not a lance.file.v2.ColumnMetadata", path, c);
      }
      for (const auto& page : columns[c].pages())
        for (int b = 0; b < page.buffer_offsets_size() && b < page.buffer_sizes_size(); ++b)
          check_page_buffer(c, page.buffer_offsets(b), page.buffer_sizes(b));
    }
  }

  // Gives each top-level field its run of columns (StoredColumns); they must use all.
  void AssignColumns() {
    const uint32_t num_columns = uint32_t(columns.size());
    uint32_t next = 0;
    for (const auto& field : schema.fields()) {
      first_column.push_back(next);
      next += StoredColumns(version, field, std::span(columns).subspan(std::min(next, num_columns)));
    }
    if (next != num_columns) {
      ThrowCorrupt("{}: the schema's {} fields need {} columns at version {} but the file has {}", path,
                   schema.fields().size(), next, version.ToString(), num_columns);
    }
    decoders.resize(schema.fields().size());
  }

  const FieldDecoder& Decoder(size_t field_index) const {
    if (field_index >= schema.fields().size()) {
      ThrowInvalid("{}: field index {} out of range ({} fields)", path, field_index, schema.fields().size());
    }
    std::lock_guard lock(mutex);
    auto& d = decoders[field_index];
    if (!d && legacy) d = legacy::MakeDecoder(schema.fields()[field_index], legacy, *source);
    if (!d) {
      const LanceField& field = schema.fields()[field_index];
      std::vector<ColumnRef> refs;
      const uint32_t end =
          field_index + 1 < first_column.size() ? first_column[field_index + 1] : uint32_t(columns.size());
      const uint32_t n = end - first_column[field_index];
      for (uint32_t c = 0; c < n; ++c) {
        uint32_t index = first_column[field_index] + c;
        refs.push_back(ColumnRef{index, &columns[index]});
      }
      d = MakeFieldDecoder(version, field, std::move(refs), *source);
    }
    return *d;
  }
};

LanceFileReader::LanceFileReader() : impl_(std::make_unique<Impl>()) {}
LanceFileReader::~LanceFileReader() = default;

std::unique_ptr<LanceFileReader> LanceFileReader::Open(const io::ObjectStore& store, const std::string& path,
                                                       uint64_t known_size, uint64_t whole_up_to) {
  return OpenImpl(store, path, known_size, whole_up_to, /*legacy_alone=*/false);
}

std::unique_ptr<LanceFileReader> LanceFileReader::OpenAlone(const io::ObjectStore& store, const std::string& path) {
  return OpenImpl(store, path, 0, kTailBytes, /*legacy_alone=*/true);
}

std::unique_ptr<LanceFileReader> LanceFileReader::OpenImpl(const io::ObjectStore& store, const std::string& path,
                                                           uint64_t known_size, uint64_t whole_up_to,
                                                           bool legacy_alone) {
  std::unique_ptr<LanceFileReader> reader(new LanceFileReader());
  auto& m = *reader->impl_;
  const uint64_t size = m.OpenSource(store, path, known_size);
  if (size < kFooterSize) {
    ThrowCorrupt("{}: {} bytes is too small for a Lance file (the footer alone is {} bytes)", path, size, kFooterSize);
  }

  // Read the tail, then widen it if the metadata starts earlier.
  uint64_t tail_start = size <= std::max(whole_up_to, kTailBytes) ? 0 : size - kMetadataGuessBytes;
  std::string tail = m.source->Read(tail_start, size - tail_start);
  const char* footer = tail.data() + tail.size() - kFooterSize;
  if (std::memcmp(footer + 36, kMagic, 4) != 0) {
    ThrowCorrupt("{}: not a Lance file (the last 4 bytes are not \"LANC\")", path);
  }
  const uint16_t major = LoadLE<uint16_t>(footer + 32), minor = LoadLE<uint16_t>(footer + 34);
  if (major == 0 && (minor == 1 || minor == 2) && !legacy_alone) {
    ThrowNotSupported("{}: a legacy Lance data file (format 0.{}), which lancelet reads only through its dataset "
                      "(the dataset's schema describes its columns)", path, minor);
  }
  if (major == 0 && (minor == 1 || minor == 2)) {
    if (tail_start == 0) m.source->KeepInMemory(std::move(tail));
    m.ReadLegacyWithOwnSchema(size);
    return reader;
  }
  auto version = FileVersion::FromDisk(major, minor);
  if (!version) ThrowNotSupported("{}: Lance file version {}.{} is not supported (2.0 to 2.2 are)", path, major, minor);
  m.version = *version;

  const uint64_t column_meta_start = LoadLE<uint64_t>(footer);
  const uint64_t cmo_start = LoadLE<uint64_t>(footer + 8);
  const uint64_t gbo_start = LoadLE<uint64_t>(footer + 16);
  const uint32_t num_global = LoadLE<uint32_t>(footer + 24);
  const uint32_t num_columns = LoadLE<uint32_t>(footer + 28);
  const uint64_t footer_pos = size - kFooterSize;
  if (column_meta_start > cmo_start || cmo_start > gbo_start || gbo_start > footer_pos ||
      gbo_start - cmo_start != uint64_t(num_columns) * 16 || footer_pos - gbo_start != uint64_t(num_global) * 16) {
    ThrowCorrupt("{}: inconsistent footer (column metadata at {}, offset tables at {} and {}, {} columns, "
                 "{} global buffers, footer at {})", path, column_meta_start, cmo_start, gbo_start, num_columns,
                 num_global, footer_pos);
  }
  if (num_global < 1) ThrowCorrupt("{}: no global buffers, so no schema", path);

  auto ensure = [&](uint64_t from) {
    if (from < tail_start) {
      tail = m.source->Read(from, tail_start - from) + tail;
      tail_start = from;
    }
  };
  auto at = [&](uint64_t pos) { return tail.data() + (pos - tail_start); };
  ensure(gbo_start);
  const uint64_t descriptor_pos = LoadLE<uint64_t>(at(gbo_start));
  const uint64_t descriptor_size = LoadLE<uint64_t>(at(gbo_start + 8));
  if (descriptor_pos > footer_pos || descriptor_size > footer_pos - descriptor_pos) {
    ThrowCorrupt("{}: global buffer 0 at [{}, {}) lies outside the file", path, descriptor_pos,
                 descriptor_pos + descriptor_size);
  }
  ensure(std::min(column_meta_start, descriptor_pos));  // one more read at most

  lance::file::FileDescriptor descriptor;
  if (!descriptor.ParseFromArray(at(descriptor_pos), int(descriptor_size))) {
    ThrowCorrupt("{}: global buffer 0 is not a lance.file.FileDescriptor", path);
  }
  Metadata schema_metadata;
  for (const auto& [k, v] : descriptor.schema().metadata()) schema_metadata[k] = v;
  try {
    m.schema = LanceSchema::FromProto(descriptor.schema().fields(), schema_metadata);
  } catch (const Error& e) {
    Throw(e.kind(), "{}: {}", path, e.what());
  }
  m.num_rows = descriptor.length();

  m.column_meta_start = column_meta_start;
  m.ReadColumnMetadata(at, column_meta_start, cmo_start, gbo_start, num_global, num_columns);

  m.AssignColumns();
  if (tail_start == 0) m.source->KeepInMemory(std::move(tail));
  return reader;
}

size_t LanceFileReader::num_global_buffers() const { return impl_->global_buffers.size(); }

std::string LanceFileReader::ReadGlobalBuffer(size_t index) const {
  if (index >= impl_->global_buffers.size())
    ThrowCorrupt("{}: global buffer {} is missing (the file has {})", impl_->path, index,
                 impl_->global_buffers.size());
  const auto [start, end] = impl_->global_buffers[index];
  if (end < start || end > impl_->column_meta_start)
    ThrowCorrupt("{}: global buffer {} at [{}, {}) does not lie before the column metadata, which starts at {}",
                 impl_->path, index, start, end, impl_->column_meta_start);
  return impl_->source->Read(start, end - start);
}

std::unique_ptr<LanceFileReader> LanceFileReader::OpenLegacy(const io::ObjectStore& store, const std::string& path,
                                                             LanceSchema schema, int32_t min_id, int32_t max_id,
                                                             uint64_t known_size) {
  std::unique_ptr<LanceFileReader> reader(new LanceFileReader());
  auto& m = *reader->impl_;
  const uint64_t size = m.OpenSource(store, path, known_size);
  m.legacy = legacy::Layout::Read(*m.source, size, min_id, max_id);
  m.version = {0, m.legacy->minor_version()};
  m.schema = std::move(schema);
  m.num_rows = m.legacy->num_rows();
  m.decoders.resize(m.schema.fields().size());
  return reader;
}

FileVersion LanceFileReader::version() const { return impl_->version; }
const LanceSchema& LanceFileReader::schema() const { return impl_->schema; }
uint64_t LanceFileReader::num_rows() const { return impl_->num_rows; }
uint64_t LanceFileReader::num_rows(size_t field_index) const { return impl_->Decoder(field_index).num_rows(); }
const std::string& LanceFileReader::path() const { return impl_->path; }

uint64_t LanceFileReader::file_size() const { return impl_->source->size(); }

ArrayPtr LanceFileReader::ReadField(size_t field_index, uint64_t start, uint64_t count) const {
  const auto& decoder = impl_->Decoder(field_index);
  const uint64_t n = decoder.num_rows();
  if (start > n || count > n - start) {
    ThrowInvalid("{}: rows [{}, {}) of field '{}' requested but it holds {} rows", impl_->path, start, start + count,
                 impl_->schema.fields()[field_index].name, n);
  }
  return decoder.Read(start, count);
}

uint64_t LanceFileReader::PrefetchFields(std::span<const size_t> field_indices, uint64_t start, uint64_t count,
                                        uint64_t max_bytes) const {
  std::vector<io::ByteRange> ranges;
  uint64_t total = 0;
  for (const io::ByteRange& r : impl_->PageBuffers(field_indices, start, count))
    if (r.length <= max_bytes - total) {
      total += r.length;
      ranges.push_back(r);
    }
  if (ranges.empty() || !impl_->source->Prefetch(ranges)) return 0;
  return total;
}

void LanceFileReader::PrefetchPagesOf(std::span<const size_t> field_indices, std::span<const uint64_t> rows,
                                      uint64_t max_buffer_bytes) const {
  if (!impl_->source->Prefetch({})) return;  // a store that ignores hints: skip the page lookups
  std::vector<uint64_t> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<io::ByteRange> buffers, small;
  for (size_t field_index : field_indices) {
    const FieldDecoder& decoder = impl_->Decoder(field_index);
    for (uint64_t row : sorted) {
      buffers.clear();
      decoder.PageRanges(row, 1, buffers);
      for (const io::ByteRange& b : buffers)
        if (b.length <= max_buffer_bytes) small.push_back(b);
    }
  }
  std::sort(small.begin(), small.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  small.erase(std::unique(small.begin(), small.end(), [](const auto& a, const auto& b) { return a.offset == b.offset; }),
              small.end());
  if (!small.empty()) impl_->source->Prefetch(small);
}

uint64_t LanceFileReader::StoredBytes(std::span<const size_t> field_indices) const {
  uint64_t bytes = 0;  // every page: rows [0, all)
  for (const io::ByteRange& r : impl_->PageBuffers(field_indices, 0, UINT64_MAX)) bytes += r.length;
  return bytes;
}

void LanceFileReader::PrefetchRows(std::span<const size_t> field_indices, uint64_t start, uint64_t count) const {
  std::vector<const FieldDecoder*> decoders;
  for (size_t field_index : field_indices) decoders.push_back(&impl_->Decoder(field_index));
  io::RunConcurrently(decoders.size(), int(decoders.size()),
                      [&](size_t i) { decoders[i]->PrefetchRows(start, count); });
}

ArrayPtr LanceFileReader::TakeField(size_t field_index, std::span<const uint64_t> rows) const {
  const auto& decoder = impl_->Decoder(field_index);
  const uint64_t n = decoder.num_rows();
  for (uint64_t r : rows) {
    if (r >= n) {
      ThrowInvalid("{}: row {} of field '{}' requested but it holds {} rows", impl_->path, r,
                   impl_->schema.fields()[field_index].name, n);
    }
  }
  return decoder.Take(rows);
}

}  // namespace lancelet::format
