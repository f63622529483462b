// The files one attempt at a change writes, owned until a commit publishes them.
//
// A write (a data file, an overlay, a deletion file, an index segment, a transaction
// file) is invisible until a manifest names it; an attempt that fails before its
// manifest is published must leave nothing behind. AttemptFiles is that rule as a scope
// guard: every writer of an attempt records its files here before writing them, and the
// destructor removes them unless the attempt called Published(). Removal is quiet: the
// attempt's own error is the one to report.
#pragma once

#include <future>
#include <string>
#include <vector>

#include "io/object_store.h"

namespace lancelet::table {

class AttemptFiles {
 public:
  explicit AttemptFiles(io::ObjectStore& store) : store_(store) {}
  ~AttemptFiles();
  AttemptFiles(const AttemptFiles&) = delete;
  AttemptFiles& operator=(const AttemptFiles&) = delete;

  // A file the attempt is about to write (recorded first: a half-written file goes too;
  // one never created costs a failed delete).
  void Add(std::string path) { files_.push_back(std::move(path)); }
  // Add(path), then puts `bytes` there. On a store whose requests are costly (an object
  // store) the put runs in the background, at most kPutsInFlight at once, so that an
  // attempt's small files (deletion files, its transaction) cost one round trip together:
  // Wait() joins them. Commit waits before it publishes; so does the destructor before it
  // removes anything.
  void Put(std::string path, std::string bytes);
  // Waits for the background puts; throws the first one's error.
  void Wait();
  static constexpr size_t kPutsInFlight = 16;
  // A directory the attempt made: removed after the files when it is empty again, so
  // files another writer put there meanwhile keep it. Directories go in the reverse
  // order of their recording (a child recorded after its parent goes first).
  void AddDirectory(std::string dir) { directories_.push_back({std::move(dir), false}); }
  // A directory with a fresh name that only this attempt writes into (an index
  // segment's): whatever it holds goes with it, including files a writer made without
  // naming them here (spilled runs).
  void AddOwnDirectory(std::string dir) { directories_.push_back({std::move(dir), true}); }

  // The commit published a manifest that refers to the files: they stay.
  void Published() { published_ = true; }

 private:
  struct Directory {
    std::string path;
    bool with_contents;
  };

  io::ObjectStore& store_;
  std::vector<std::string> files_;
  std::vector<std::future<void>> puts_;  // in the order they began
  std::vector<Directory> directories_;
  bool published_ = false;
};

}  // namespace lancelet::table
