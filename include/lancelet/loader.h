// A training-data view of one Lance dataset version: shards are ranges of a fragment's
// surviving rows (by default one shard per fragment, as Zephon lays them out; or cut to
// a number of rows, so a one-fragment table still feeds many ranks and workers), samples
// are a shard's rows in order, and the version is pinned when the dataset is discovered
// (../shared/spec/lance_shards_for_training.md).
//
// Unlike a loader that reads only base data files, every sample is read as the dataset
// reads it: overlays resolved, multi-file fragments and dropped columns handled, shallow
// clone base paths followed, blob columns returned as their bytes. What still cannot be
// read is refused at discovery, with the case, the reason and the remedy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lancelet/record_batch.h"
#include "lancelet/session.h"
#include "lancelet/storage_options.h"

namespace lancelet {

struct LoaderOptions {
  std::vector<std::string> columns;  // empty: every column
  // How fragments become shards: each fragment's surviving rows, in order, cut into
  // shards of `shard_rows` (a fragment's last shard holds the rest). 0: from num_shards.
  uint64_t shard_rows = 0;
  // With shard_rows 0: shards of ceil(total rows / num_shards) rows, so at least
  // num_shards when the dataset has as many rows (fragment ends add up to one shard per
  // fragment). 0 too: one shard per fragment.
  uint64_t num_shards = 0;
  // With num_shards: shards of at least this many rows (a fragment's last shard may hold
  // fewer), so that a small table is not cut into reads too small to pay their way.
  uint64_t min_shard_rows = 1;
  // Opened fragments (a reader with its deletions and overlay coverage decoded) kept per
  // process, least recently used evicted first; 0 keeps none. Also capped at a quarter
  // of the open-file limit (RLIMIT_NOFILE), since each holds open files.
  size_t metadata_cache_entries = 256;
  // The store's options and the session whose caches the shards' files go through
  // (lancelet/dataset.h's OpenOptions; null session: Session::Default()).
  StorageOptions storage_options = {};
  std::shared_ptr<Session> session = nullptr;
};

class ShardedDataset {
 public:
  // `path`: a dataset directory (resolved to its newest manifest, which becomes path())
  // or a manifest file under its _versions/ (that version). Discovery reads the manifest
  // in two range reads and opens no data file.
  static std::shared_ptr<ShardedDataset> FromPath(const std::string& path, LoaderOptions options = {});
  ~ShardedDataset();

  const std::string& path() const;  // the pinned manifest
  uint64_t version() const;
  SchemaPtr schema() const;         // the columns samples hold
  size_t shard_count() const;
  const std::vector<uint64_t>& shard_sizes() const;  // surviving rows per shard
  uint64_t total() const;
  // The samples at `sample_indices` of shard `shard` (positions among its surviving
  // rows), in that order; reads only those rows.
  RecordBatchPtr ReadBatch(size_t shard, std::span<const uint64_t> sample_indices) const;
  // Opened fragments held now (at most cache_capacity()).
  size_t cached_shards() const;
  size_t cache_capacity() const;

  struct Impl;
  explicit ShardedDataset(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lancelet
