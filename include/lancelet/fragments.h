// Distributed writes, as the reference's lance.fragment.write_fragments,
// LanceOperation and LanceDataset.commit: workers write fragments (or an UPDATE's
// overlays for their fragments) without committing and hand their metadata (as JSON) to
// one process, which commits them all as one version through the usual commit path and
// its conflict rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/dataset.h"

namespace lancelet {

// One data file of a fragment (the manifest's DataFile).
struct DataFileMetadata {
  std::string path;                     // relative to the dataset's data/ directory
  std::vector<int32_t> fields;          // field ids the file holds
  std::vector<int32_t> column_indices;  // the column of each field in the file
  uint32_t file_major_version = 0;
  uint32_t file_minor_version = 0;
  uint64_t file_size_bytes = 0;
  std::optional<uint32_t> base_id;
  bool operator==(const DataFileMetadata&) const = default;
};

// A fragment written but not yet committed. Its id is a placeholder: the commit gives
// each fragment it adds the next free id.
struct FragmentMetadata {
  uint64_t id = 0;
  std::vector<DataFileMetadata> files;
  uint64_t physical_rows = 0;
  bool operator==(const FragmentMetadata&) const = default;

  // The JSON object pylance's FragmentMetadata.to_json() gives: {"id", "files": [{"fields",
  // "column_indices", "file_major_version", "file_minor_version", "file_size_bytes",
  // "base_id", "path"}], "overlays": [], "physical_rows", "deletion_file": null,
  // "row_id_meta": null, "created_at_version_meta": null, "last_updated_at_version_meta": null}.
  std::string ToJson() const;
  // Reads that shape (pylance's or ToJson's). A fragment with a deletion file, overlays,
  // row ids or version sequences is refused: only freshly written fragments are committed
  // this way. Errors name the key and what was expected.
  static FragmentMetadata FromJson(std::string_view json);
};

// Writes `data` into new fragments of the dataset at `uri` without committing them: the
// files are in place (and stay there: a commit publishes them, `cleanup` removes them if
// none does). The fields get the dataset's ids when it exists and `options.mode` is not
// kOverwrite, else ids numbered from the data's schema; the file version is the dataset's,
// else options.file_version. Each fragment holds at most options.max_rows_per_file rows.
std::vector<FragmentMetadata> WriteFragments(const std::string& uri, RecordBatchReader& data,
                                             const WriteOptions& options = {});

// One overlay file written for a fragment (the reference's DataOverlayFile): the data file
// of its values and the physical offsets it covers: one set for every entry of
// data_file.fields (a dense overlay) or one set per entry, in that order (sparse).
struct OverlayFileMetadata {
  DataFileMetadata data_file;
  std::vector<std::vector<uint32_t>> offsets;
  bool operator==(const OverlayFileMetadata&) const = default;
};

// The overlays written for one fragment and not yet committed (the reference's
// DataOverlayGroup).
struct OverlayGroupMetadata {
  uint64_t fragment_id = 0;
  std::vector<OverlayFileMetadata> overlays;
  bool operator==(const OverlayGroupMetadata&) const = default;

  // {"fragment_id", "overlays": [{"data_file": {as in FragmentMetadata's files},
  // "offsets": [[...], ...]}]}; FromJson reads it back, errors naming the key.
  std::string ToJson() const;
  static OverlayGroupMetadata FromJson(std::string_view json);
};

// An UPDATE's overlays for some fragments of `dataset`, written and not committed: on
// each fragment in `fragment_ids`, the rows where `predicate` holds (empty: every row)
// get the SET values, computed at the dataset's version, as one overlay file per
// fragment (dense when every column covers the same rows). Fragments with no such rows
// give no group. The files stay for the commit (Operation::DataOverlay) or cleanup.
std::vector<OverlayGroupMetadata> WriteUpdateOverlays(const DatasetPtr& dataset,
                                                      const std::vector<uint64_t>& fragment_ids,
                                                      const std::vector<Dataset::SetClause>& set,
                                                      const std::string& predicate);

// What a commit publishes (LanceOperation.Append, .Overwrite and .DataOverlay).
struct Operation {
  enum class Kind { kAppend, kOverwrite, kDataOverlay };
  Kind kind = Kind::kAppend;
  std::vector<FragmentMetadata> fragments;
  SchemaPtr schema;  // the new schema (Overwrite only)
  std::vector<OverlayGroupMetadata> overlay_groups;  // DataOverlay only
  // For an UPDATE's overlays, the update itself: the commit then refuses with a
  // retryable Conflict when a commit after read_version changed a cell the update read
  // (its predicate's columns on any row, its SET expressions' on the rows it changed), so
  // the caller computes the overlays again. Without it the overlays are blind writes, which
  // land over concurrent ones (newest wins).
  std::optional<std::pair<std::vector<Dataset::SetClause>, std::string>> update;

  static Operation Append(std::vector<FragmentMetadata> fragments);
  static Operation Overwrite(SchemaPtr schema, std::vector<FragmentMetadata> fragments);
  static Operation DataOverlay(std::vector<OverlayGroupMetadata> groups);
  static Operation UpdateOverlays(std::vector<OverlayGroupMetadata> groups, std::vector<Dataset::SetClause> set,
                                  std::string predicate);
};

// Commits `operation` on the dataset at `uri` as read at `read_version` (the version the
// workers planned against; the latest when absent): a concurrent commit is rebased over
// or refused by the usual conflict rules. Append needs the dataset to exist; Overwrite
// creates it when missing. Every fragment's fields must be fields of the schema it joins.
// Returns the dataset at the version committed.
DatasetPtr CommitOperation(const std::string& uri, const Operation& operation,
                           std::optional<uint64_t> read_version = std::nullopt, const WriteOptions& options = {});

}  // namespace lancelet
