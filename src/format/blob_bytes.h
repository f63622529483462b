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
#include <string>

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

}  // namespace lancelet::format
