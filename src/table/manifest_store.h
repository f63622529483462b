// Where versions live: _versions/ manifest files, their naming, and the manifest codec.
//
// Manifest file layout (little-endian):
//   [optional u32 length + Transaction proto]   (transaction_section points here)
//   [u32 length + Manifest proto]               <- manifest position
//   [i64 manifest position][u16 major = 0][u16 minor = 2]["LANC"]   (16-byte footer)
// The manifest message is the last thing before the footer.
//
// Naming: V2 `{u64::MAX - version:020}.manifest` (newest sorts first); V1
// `{version}.manifest` is read too. `_versions/latest_version_hint.json` holds
// {"version":N} and is only a hint: listing is the truth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/lance_schema.h"
#include "io/object_store.h"
#include "lancelet/error.h"
#include "table.pb.h"
#include "transaction.pb.h"

namespace lancelet::table {

inline constexpr const char* kVersionsDir = "_versions";
inline constexpr const char* kDataDir = "data";
inline constexpr const char* kDeletionsDir = "_deletions";
inline constexpr const char* kIndicesDir = "_indices";
inline constexpr const char* kTransactionsDir = "_transactions";

std::string ManifestFileNameV2(uint64_t version);
std::string ManifestFileNameV1(uint64_t version);
// A dataset keeps the naming its manifests have: the reference refuses a directory that
// mixes the two. New datasets use V2, as the reference does.
enum class ManifestNaming { kV1, kV2 };
ManifestNaming NamingOf(const std::string& manifest_path);
std::string ManifestFileName(uint64_t version, ManifestNaming naming);
// The version a manifest file name stands for, or nullopt if it is not a manifest name.
std::optional<uint64_t> ParseManifestFileName(const std::string& name);

struct ManifestLocation {
  uint64_t version = 0;
  std::string path;
};

// All committed versions, oldest first.
std::vector<ManifestLocation> ListManifests(const io::ObjectStore& store, const std::string& uri);
// The newest version, or nullopt when the directory holds no dataset.
std::optional<ManifestLocation> LatestManifest(const io::ObjectStore& store, const std::string& uri);
std::optional<ManifestLocation> FindManifest(const io::ObjectStore& store, const std::string& uri,
                                             uint64_t version);

// Decodes a manifest file (read whole, in one read); Corrupt errors name the path and
// what was wrong.
lance::table::Manifest ReadManifest(const io::ObjectStore& store, const std::string& path);
// The same for the file's bytes, read already.
lance::table::Manifest ParseManifestFile(const std::string& path, std::string_view file);
// Whether `e`, raised while reading the version whose manifest is `manifest_path` (the
// manifest or a file it names), means a concurrent cleanup removed that version
// meanwhile: a missing file, and the manifest gone too.
bool RemovedMeanwhile(const Error& e, const io::ObjectStore& store, const std::string& manifest_path);
// Encodes a manifest file: a legacy dataset's dictionary values (taken from
// `dictionaries`, see legacy_dictionaries.h), the index section (when `indices` lists
// any; index_section then points at it, else it is cleared), the transaction (embedded,
// as the reference does), the manifest and the footer.
std::string EncodeManifestFile(lance::table::Manifest manifest, const lance::table::Transaction* transaction,
                               const lance::table::IndexSection* indices = nullptr,
                               const format::LanceSchema* dictionaries = nullptr);

// Makes `manifest` visible as version manifest.version(): one put-if-absent of its name
// in `naming`. Returns false if that version already exists under either name (a
// concurrent commit won), or if, just before, the version below was gone or a newer one
// already there (the caller lists the versions again). Cleanups' removals wait for it.
// `newest_listed`: the newest version a listing the caller made just before found, which
// a store without directory locks (an object store) takes instead of listing again:
// there no lock holds cleanups off between a check and the put anyway, and a cleanup
// removes only versions superseded long before (docs/compaction.md).
bool PublishManifest(io::ObjectStore& store, const std::string& uri, const lance::table::Manifest& manifest,
                     const lance::table::IndexSection& indices, const lance::table::Transaction* transaction,
                     ManifestNaming naming, const format::LanceSchema* dictionaries = nullptr,
                     std::optional<uint64_t> newest_listed = std::nullopt);

void WriteVersionHint(io::ObjectStore& store, const std::string& uri, uint64_t version);

}  // namespace lancelet::table
