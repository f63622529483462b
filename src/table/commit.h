// Committing a transaction: write the transaction file, then publish the next manifest
// with one put-if-absent. A commit that loses the race reads the transactions that won,
// and either rebases onto them (compatible), asks the caller to redo its work
// (RetryableConflict), or fails (Conflict). Nothing becomes visible until the publish.
#pragma once

#include <functional>
#include <memory>

#include "lancelet/error.h"
#include "table/attempt_files.h"
#include "table/dataset_state.h"
#include "table/manifest_builder.h"
#include "table/read_set.h"
#include "transaction.pb.h"

namespace lancelet::table {

// Thrown when a concurrent commit changed what our transaction was computed from; the
// caller recomputes against the latest version and commits again.
class RetryableConflict : public Error {
 public:
  explicit RetryableConflict(const std::string& message) : Error(ErrorKind::kConflict, message) {}
};

// A read-modify-write that lost to a concurrent change of what it computed from
// re-reads the latest version and recomputes. Before each new attempt it waits a random
// while that grows with `attempt`, so that contenders spread out; after kMaxRecomputes
// attempts it gives up with a Conflict naming `operation` and the last collision.
inline constexpr int kMaxRecomputes = 20;
void BackOffOrGiveUp(int attempt, const std::string& uri, const char* operation, const RetryableConflict& last);

enum class ConflictResult { kCompatible, kRetry, kIncompatible };

// How `ours` relates to `theirs`, a transaction committed after our read version.
ConflictResult CheckConflict(const lance::table::Transaction& ours, const lance::table::Transaction& theirs);
const char* OperationName(const lance::table::Transaction& transaction);
// The transaction that produced a committed version: from its transaction file, or the
// copy embedded in the manifest at `manifest_path`. Conflict when the version records
// none, Corrupt when it does not parse.
lance::table::Transaction ReadCommittedTransaction(const io::ObjectStore& store, const std::string& uri,
                                                   const lance::table::Manifest& m, const std::string& manifest_path);

struct CommitOptions {
  int max_retries = 20;
  bool enable_stable_row_ids = false;  // for creating datasets
  std::string file_version = "2.0";    // data_format.version when creating
  bool create_only = false;            // fail if the dataset appears concurrently
  // The files the caller's attempt wrote: the transaction file joins them, and their
  // background puts (AttemptFiles::Put) are waited for before the manifest is published.
  AttemptFiles* attempt = nullptr;
  // Set by read-modify-writes: a concurrent version that changed what they read makes
  // the commit a RetryableConflict instead of a rebase (table/read_set.h).
  std::shared_ptr<const ReadSet> read_set;
  // Where the new version keeps what it opens when there is no version read (a dataset
  // being created); otherwise the read version's session.
  std::shared_ptr<SessionCaches> session = Session::Default()->caches();
  // For a Restore transaction: the old version whose manifest and indexes the new
  // version takes (table/manifest_builder.h: RestoredManifest).
  std::shared_ptr<const DatasetState> restore_from;
};

// Commits `transaction` on top of `read` (null when creating a dataset). Returns the
// state of the version it created.
std::shared_ptr<const DatasetState> Commit(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                           std::shared_ptr<const DatasetState> read,
                                           lance::table::Transaction transaction, const CommitOptions& options);

// Runs `step` (read, plan, write, commit) on `state` until it commits without a
// concurrent change to what it read: after a RetryableConflict `state` becomes the
// latest version and the step runs again, BackOffOrGiveUp bounding the attempts. A file
// missing because a concurrent cleanup removed `state`'s version is such a change too,
// not an error. Returns what the step returned: the committed state, or null when it had
// nothing to do (`state` is then the version it last read).
using CommitStep = std::function<std::shared_ptr<const DatasetState>(const std::shared_ptr<const DatasetState>&)>;
std::shared_ptr<const DatasetState> UntilCommitted(std::shared_ptr<const DatasetState>& state, const char* operation,
                                                   const CommitStep& step);

// One attempt of a change on `state`: `build` fills the transaction, recording each file
// it writes in the attempt's AttemptFiles, and the transaction is committed. The files
// stay only if the commit publishes them. Returns null without committing when `build`
// returns false (nothing to do). Read-modify-writes run it inside UntilCommitted.
using BuildStep = std::function<bool(lance::table::Transaction& t, AttemptFiles& attempt)>;
std::shared_ptr<const DatasetState> BuildAndCommit(const std::shared_ptr<const DatasetState>& state,
                                                   const CommitOptions& options, const BuildStep& build);

// A fresh random UUID in the 8-4-4-4-12 form.
std::string NewUuid();

}  // namespace lancelet::table
