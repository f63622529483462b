#include "table/feature_flags.h"

#include "lancelet/error.h"

namespace lancelet::table {

namespace {

void CheckFlags(uint64_t flags, const char* role, const std::string& path) {
  uint64_t unknown = flags & ~kKnownFlags;
  if (!unknown) return;
  uint64_t bit = unknown & (~unknown + 1);
  ThrowNotSupported(
      "dataset '{}' requires {} feature flag {} (bit {}), which this version of lancelet does not support; "
      "use a newer lancelet",
      path, role, bit, __builtin_ctzll(bit));
}

}  // namespace

void CheckReaderFlags(const lance::table::Manifest& manifest, const std::string& path) {
  CheckFlags(manifest.reader_feature_flags(), "reader", path);
}

void CheckWriterFlags(const lance::table::Manifest& manifest, const std::string& path) {
  CheckFlags(manifest.writer_feature_flags(), "writer", path);
}

void ApplyFeatureFlags(lance::table::Manifest& m) {
  uint64_t reader = 0, writer = 0;
  bool deletions = false, row_ids = false, overlays = false;
  for (const auto& f : m.fragments()) {
    deletions |= f.has_deletion_file();
    overlays |= f.overlays_size() > 0;
    row_ids |= f.row_id_sequence_case() != lance::table::DataFragment::ROW_ID_SEQUENCE_NOT_SET;
  }
  if (deletions) { reader |= kFlagDeletionFiles; writer |= kFlagDeletionFiles; }
  // Stable row ids are a property of the dataset; an empty dataset keeps the flag.
  if (row_ids || (m.reader_feature_flags() & kFlagStableRowIds)) {
    reader |= kFlagStableRowIds;
    writer |= kFlagStableRowIds;
  }
  // Readers that do not know overlays must refuse the dataset rather than return stale
  // base values; the flag is cleared again once no overlay is left.
  if (overlays) { reader |= kFlagDataOverlays; writer |= kFlagDataOverlays; }
  if (!m.config().empty()) writer |= kFlagTableConfig;
  if (!m.base_paths().empty()) { reader |= kFlagBasePaths; writer |= kFlagBasePaths; }
  m.set_reader_feature_flags(reader);
  m.set_writer_feature_flags(writer);
}

}  // namespace lancelet::table
