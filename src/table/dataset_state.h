// The immutable snapshot behind a Dataset: one version's manifest, decoded once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "format/lance_file.h"
#include "format/lance_schema.h"
#include "io/object_store.h"
#include "overlay/fragment_overlays.h"
#include "table.pb.h"

namespace lancelet::table {

struct DatasetState {
  std::shared_ptr<io::ObjectStore> store;
  std::string uri;
  std::string manifest_path;
  lance::table::Manifest manifest;
  format::LanceSchema schema;  // manifest fields, tombstoned/dropped fields excluded
  SchemaPtr arrow_schema;
  format::FileVersion file_version;  // manifest.data_format.version

  uint64_t version() const { return manifest.version(); }
  // A fragment's overlays, decoded the first time any reader asks and shared after.
  std::shared_ptr<const overlay::FragmentOverlays> OverlaysOf(const lance::table::DataFragment& fragment) const;
  std::string DataPath(const std::string& file) const;
  std::string DeletionPath(const std::string& file) const;

 private:
  mutable std::mutex overlay_mutex_;
  mutable std::map<uint64_t, std::shared_ptr<const overlay::FragmentOverlays>> overlay_cache_;
};

// Loads a version (latest when `version` is empty); checks feature flags.
std::shared_ptr<const DatasetState> LoadState(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                              std::optional<uint64_t> version);
std::shared_ptr<const DatasetState> MakeState(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                              std::string manifest_path, lance::table::Manifest manifest);

}  // namespace lancelet::table
