// Reading blob bytes from their descriptors (see blob_bytes.h).
#include "format/blob_bytes.h"

#include "lancelet/error.h"

namespace lancelet::format {

namespace {

const ArrayData& ChildNamed(const ArrayData& descriptors, const std::string& name) {
  const auto& fields = descriptors.type->children();
  for (size_t c = 0; c < fields.size(); ++c)
    if (fields[c]->name == name) return *descriptors.children.at(c);
  ThrowInvalid("blob descriptors of type {} have no field '{}'", descriptors.type->ToString(), name);
}

}  // namespace

BlobDescriptor BlobDescriptorAt(const ArrayData& descriptors, int64_t row) {
  if (descriptors.type->id() != TypeId::kStruct) ThrowInvalid("blob descriptors must be a struct array");
  if (row < 0 || row >= descriptors.length)
    ThrowInvalid("blob descriptor row {} is outside the {} rows", row, descriptors.length);
  if (descriptors.IsNull(row)) ThrowInvalid("blob descriptor row {} is null", row);
  BlobDescriptor out;
  out.position = ChildNamed(descriptors, "position").values<uint64_t>()[row];
  out.size = ChildNamed(descriptors, "size").values<uint64_t>()[row];
  if (descriptors.type->children().size() == 2) return out;  // legacy: always in the data file
  const uint8_t kind = ChildNamed(descriptors, "kind").values<uint8_t>()[row];
  if (kind > 3) ThrowCorrupt("blob descriptor row {} has unknown kind {}", row, kind);
  out.kind = BlobKind(kind);
  out.blob_id = ChildNamed(descriptors, "blob_id").values<uint32_t>()[row];
  out.uri = std::string(ChildNamed(descriptors, "blob_uri").GetView(row));
  return out;
}

std::string BlobSidecarPath(const std::string& data_file_path, uint32_t blob_id) {
  const std::string suffix = ".lance";
  if (data_file_path.size() <= suffix.size() ||
      data_file_path.compare(data_file_path.size() - suffix.size(), suffix.size(), suffix) != 0)
    ThrowInvalid("data file path '{}' does not end in .lance", data_file_path);
  std::string name;
  // Bit k of the reversed id is bit 31 - k of the id; print the reversed id MSB first.
  for (int k = 31; k >= 0; --k) name.push_back(((blob_id >> (31 - k)) & 1) ? '1' : '0');
  return data_file_path.substr(0, data_file_path.size() - suffix.size()) + "/" + name + ".blob";
}

std::string ReadBlobBytes(const io::ObjectStore& store, const std::string& data_file_path, const BlobDescriptor& blob) {
  std::string path;
  uint64_t offset = blob.position;
  switch (blob.kind) {
    case BlobKind::kInline:
      path = data_file_path;
      break;
    case BlobKind::kPacked:
      path = BlobSidecarPath(data_file_path, blob.blob_id);
      break;
    case BlobKind::kDedicated:
      path = BlobSidecarPath(data_file_path, blob.blob_id);
      offset = 0;
      break;
    case BlobKind::kExternal:
      ThrowNotSupported("blob at external URI '{}' is outside the dataset; open it with a store for that URI",
                        blob.uri);
  }
  if (blob.size == 0) return {};
  auto file = store.OpenRead(path);
  if (offset + blob.size > file->size())
    ThrowCorrupt("{}: blob bytes [{}, {}) are past the file's {} bytes", path, offset, offset + blob.size, file->size());
  std::string out(blob.size, '\0');
  file->ReadAt(offset, blob.size, out.data());
  return out;
}

BlobSidecarWriter::BlobSidecarWriter(io::ObjectStore& store, std::string data_file_path)
    : store_(store), data_file_path_(std::move(data_file_path)) {}

BlobSidecarWriter::~BlobSidecarWriter() {
  if (next_id_ == 1 || finished_) return;
  // Unfinished: the files vanish with their writers, then the directory made for them.
  pack_.reset();
  written_.clear();
  try {
    const std::string any = BlobSidecarPath(data_file_path_, 1);
    store_.DeleteDirIfEmpty(any.substr(0, any.rfind('/')));
  } catch (const std::exception&) {
    // best effort: the failed write's own error is the one to report
  }
}

std::unique_ptr<io::WritableFile> BlobSidecarWriter::Open(uint32_t blob_id) {
  const std::string path = BlobSidecarPath(data_file_path_, blob_id);
  if (blob_id == 1) store_.CreateDir(path.substr(0, path.rfind('/')));
  return store_.OpenWrite(path, /*no_overwrite=*/false);
}

BlobSidecarWriter::Placement BlobSidecarWriter::Pack(std::string_view bytes, uint64_t pack_max) {
  if (!pack_ || (pack_size_ > 0 && pack_size_ + bytes.size() > pack_max)) {
    if (pack_) written_.push_back(std::move(pack_));
    pack_id_ = next_id_++;
    pack_ = Open(pack_id_);
    pack_size_ = 0;
  }
  const Placement at{pack_id_, pack_size_};
  pack_->Write(bytes);
  pack_size_ += bytes.size();
  return at;
}

uint32_t BlobSidecarWriter::Dedicate(std::string_view bytes) {
  const uint32_t id = next_id_++;
  written_.push_back(Open(id));
  written_.back()->Write(bytes);
  return id;
}

void BlobSidecarWriter::Finish() {
  if (pack_) written_.push_back(std::move(pack_));
  for (auto& file : written_) file->Finish();
  written_.clear();
  finished_ = true;
}

}  // namespace lancelet::format
