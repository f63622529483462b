// Writing data overlay files: new values for chosen (row offset, column) cells of a
// fragment, committed as one DataOverlay transaction without rewriting the base data.
//
//   lancelet::OverlayWriter w(dataset);
//   w.Set(/*fragment=*/0, "name", {2, 3}, names);      // different columns may cover
//   w.Set(/*fragment=*/0, "embedding", {1}, vectors);  // different rows: a sparse overlay
//   auto next = w.Commit();
//
// Coverage is explicit: every listed offset gets the given value, NULL included (a NULL
// value sets the cell to NULL). There is no way to say "leave this cell alone" with a
// value; leave the offset out instead.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/dataset.h"

namespace lancelet {

class OverlayWriter {
 public:
  struct Options {
    // Write one dense overlay per group of columns sharing the same offsets (several
    // overlays in one transaction) instead of one sparse overlay per fragment.
    bool split_into_dense = false;
    int max_commit_retries = 20;
  };

  explicit OverlayWriter(DatasetPtr dataset) : dataset_(std::move(dataset)) {}

  // New values for `column` at `offsets` (physical row offsets of the fragment, strictly
  // increasing, below physical_rows). `values` must have the column's type and one value
  // per offset. Throws InvalidArgument on any mismatch; nothing is written until Commit.
  OverlayWriter& Set(uint64_t fragment_id, const std::string& column, std::vector<uint32_t> offsets,
                     ArrayPtr values);

  // Writes the overlay files and commits them. Returns the new version. On failure the
  // dataset is unchanged and the written files are removed.
  DatasetPtr Commit(const Options& options) const;
  DatasetPtr Commit() const { return Commit(Options{}); }

  bool empty() const { return updates_.empty(); }

 private:
  friend class LibraryAccess;  // Dataset::Update commits with what it read

  struct ColumnUpdate {
    size_t field = 0;  // index in the dataset schema
    std::vector<uint32_t> offsets;
    ArrayPtr values;
  };
  DatasetPtr dataset_;
  std::map<uint64_t, std::vector<ColumnUpdate>> updates_;  // by fragment id
};

}  // namespace lancelet
