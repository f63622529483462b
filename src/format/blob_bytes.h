// Fetching the bytes of blob values, whose columns a Lance file reader returns as
// descriptors rather than bytes:
//   legacy blobs (LargeBinary + "lance-encoding:blob", file 2.1):
//     struct<position: uint64, size: uint64>, the bytes at [position, position + size) of
//     the data file itself;
//   blob v2 ("ARROW:extension:name" = "lance.blob.v2", file 2.2):
//     struct<kind: uint8, position: uint64, size: uint64, blob_id: uint32, blob_uri: utf8>,
//     where kind says where the bytes are:
//       0 inline     [position, position + size) of the data file;
//       1 packed     [position, position + size) of sidecar blob_id;
//       2 dedicated  the whole sidecar blob_id (size bytes);
//       3 external   blob_uri, outside the dataset (not read here).
//     Sidecar blob_id of data file DIR/data/STEM.lance is DIR/data/STEM/B.blob, where B is
//     the 32 binary digits of blob_id with its bits reversed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/object_store.h"
#include "lancelet/array.h"

namespace lancelet::format {

enum class BlobKind : uint8_t { kInline = 0, kPacked = 1, kDedicated = 2, kExternal = 3 };

struct BlobDescriptor {
  BlobKind kind = BlobKind::kInline;
  uint64_t position = 0;
  uint64_t size = 0;
  uint32_t blob_id = 0;
  std::string uri;
};

// Descriptor `row` of a descriptor array (either shape above). Null rows throw Invalid.
BlobDescriptor BlobDescriptorAt(const ArrayData& descriptors, int64_t row);

// Path of sidecar `blob_id` of the data file at `data_file_path` (".../STEM.lance").
std::string BlobSidecarPath(const std::string& data_file_path, uint32_t blob_id);

// The blob's bytes. External blobs throw NotSupported (their URI is outside the dataset).
std::string ReadBlobBytes(const io::ObjectStore& store, const std::string& data_file_path,
                          const BlobDescriptor& blob);

// Writes the sidecar files of one data file (blob v2): blobs above the dedicated threshold
// each in a file of their own, the others that do not stay inline concatenated into pack
// files of at most `pack_max` bytes, rolled over when the next blob would pass it. Ids
// count from 1 per data file, in the order files are started, shared by all blob columns
// (as the reference allocates them). Sidecars are raw bytes: no header, no padding. Each
// becomes visible on Finish(), before the data file does; destroyed unfinished, none does,
// and the directory made for them goes too.
class BlobSidecarWriter {
 public:
  BlobSidecarWriter(io::ObjectStore& store, std::string data_file_path);
  ~BlobSidecarWriter();
  struct Placement {
    uint32_t blob_id;
    uint64_t position;
  };
  Placement Pack(std::string_view bytes, uint64_t pack_max);
  uint32_t Dedicate(std::string_view bytes);
  void Finish();

 private:
  std::unique_ptr<io::WritableFile> Open(uint32_t blob_id);

  io::ObjectStore& store_;
  std::string data_file_path_;
  uint32_t next_id_ = 1;  // 1: nothing written, no directory made
  bool finished_ = false;
  std::unique_ptr<io::WritableFile> pack_;
  uint32_t pack_id_ = 0;
  uint64_t pack_size_ = 0;
  std::vector<std::unique_ptr<io::WritableFile>> written_;  // finished by Finish()
};

}  // namespace lancelet::format
