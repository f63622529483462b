// The legacy Lance data file (file versions 0.1 and 0.2), read only; the layout is in
// docs/legacy_file_format.md.
//
// A legacy file holds its rows in batches. Each (field id, batch) has one page of raw
// little-endian values with no validity, found through a page table of (position,
// length) pairs whose rows run over the field ids the file holds, lowest first. A
// dataset reads its own schema's fields; a file read alone, its own schema.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "format/field_codec.h"

namespace lancelet::format::legacy {

class Layout {
 public:
  // Reads the footer, the Metadata and the page table of the `size`-byte file behind
  // `source`, which holds field ids [min_id, max_id].
  static std::shared_ptr<const Layout> Read(const ByteSource& source, uint64_t size, int32_t min_id, int32_t max_id);

  uint16_t minor_version() const { return minor_version_; }
  uint64_t num_rows() const { return batch_starts_.back(); }
  size_t num_batches() const { return batch_starts_.size() - 1; }
  // The first row of batch b; batch_start(num_batches()) is num_rows().
  uint64_t batch_start(size_t b) const { return batch_starts_[b]; }
  // The batch holding `row` (< num_rows()).
  size_t BatchOf(uint64_t row) const;

  struct Page {
    uint64_t position = 0;  // absolute byte offset
    uint64_t length = 0;    // in elements (rows; rows + 1 for list offsets), never bytes
  };
  Page PageOf(int32_t field_id, size_t batch) const;

 private:
  std::string path_;
  uint16_t minor_version_ = 0;
  std::vector<uint64_t> batch_starts_;
  int32_t min_id_ = 0, max_id_ = -1;
  std::vector<Page> pages_;  // [(field id - min_id) * num_batches + batch]
};

// The schema a file keeps of its own (Metadata.manifest_position: a length-prefixed
// lance.table.Manifest whose fields are the file's, ids as the page table counts them),
// for a file read outside a dataset: the reference's BTree and Bitmap indexes before
// lance 0.21 wrote their pages as legacy files. A dictionary field is refused.
LanceSchema ReadOwnSchema(const ByteSource& source, uint64_t size);

// Reads one top-level field of the file (and every node below it). Only string and
// binary values can be null in a legacy file: a nullable one reads an empty value as
// NULL, as the reference does; every other value reads as stored.
std::unique_ptr<FieldDecoder> MakeDecoder(const LanceField& field, std::shared_ptr<const Layout> layout,
                                          const ByteSource& source);

}  // namespace lancelet::format::legacy
