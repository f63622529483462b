#include "support/faulty_store.h"

#include "lancelet/error.h"

namespace lancelet::testing {

void FaultyStore::CheckWrite(const std::string& path) {
  if (write_part_.empty() || path.find(write_part_) == std::string::npos) return;
  if (writes_left_-- <= 0) ThrowIo("writing '{}': No space left on device", path);
}

std::unique_ptr<io::WritableFile> FaultyStore::OpenWrite(const std::string& path, bool no_overwrite) {
  CheckWrite(path);
  return inner_->OpenWrite(path, no_overwrite);
}

bool FaultyStore::PutIfAbsent(const std::string& path, std::string_view bytes) {
  CheckWrite(path);
  if (before_put_) before_put_(path);
  return inner_->PutIfAbsent(path, bytes);
}

void FaultyStore::Delete(const std::string& path) {
  if (deletes_left_ > 0 && --deletes_left_ == 0) {
    deletes_left_ = 1;  // and every delete after it
    ThrowIo("deleting '{}': Permission denied", path);
  }
  inner_->Delete(path);
}

}  // namespace lancelet::testing
