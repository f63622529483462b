// An ObjectStore over the local one that fails on cue, for tests of what an operation
// leaves behind when the store refuses it midway (a full disk, a read-only directory, a
// process killed between two deletes).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "io/object_store.h"

namespace lancelet::testing {

class FaultyStore : public io::ObjectStore {
 public:
  explicit FaultyStore(std::shared_ptr<io::ObjectStore> inner = io::MakeLocalStore()) : inner_(std::move(inner)) {}

  // Deletes fail from the `n`-th on (1: every delete), as "Permission denied".
  void FailDeletesFrom(int n) { deletes_left_ = n; }
  // New objects whose path contains `part` fail once `allowed` of them were written, as
  // "No space left on device".
  void FailWritesUnder(const std::string& part, int allowed = 0) {
    write_part_ = part;
    writes_left_ = allowed;
  }

  // Runs `hook` with the path before every put-if-absent goes through (a commit's put of
  // its manifest, after its last check), to stage what other processes do in between.
  void BeforePutIfAbsent(std::function<void(const std::string&)> hook) { before_put_ = std::move(hook); }

  std::unique_ptr<io::ReadableFile> OpenRead(const std::string& path) const override { return inner_->OpenRead(path); }
  std::unique_ptr<io::ReadableFile> OpenRead(const std::string& path, uint64_t known_size) const override {
    return inner_->OpenRead(path, known_size);
  }
  std::unique_ptr<io::WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override;
  bool PutIfAbsent(const std::string& path, std::string_view bytes) override;
  bool Exists(const std::string& path) const override { return inner_->Exists(path); }
  std::vector<std::string> List(const std::string& dir) const override { return inner_->List(dir); }
  void Delete(const std::string& path) override;
  std::optional<ObjectInfo> Head(const std::string& path) const override { return inner_->Head(path); }
  void CreateDir(const std::string& dir) override { inner_->CreateDir(dir); }
  bool DeleteDirIfEmpty(const std::string& dir) override { return inner_->DeleteDirIfEmpty(dir); }
  void Sync(const std::string& dir) override { inner_->Sync(dir); }
  std::unique_ptr<io::DirectoryLock> LockDirectory(const std::string& dir, LockMode mode) override {
    return inner_->LockDirectory(dir, mode);
  }

 private:
  void CheckWrite(const std::string& path);

  std::shared_ptr<io::ObjectStore> inner_;
  int deletes_left_ = -1;  // -1: never fail
  std::string write_part_;
  int writes_left_ = 0;
  std::function<void(const std::string&)> before_put_;
};

}  // namespace lancelet::testing
