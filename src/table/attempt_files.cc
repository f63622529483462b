#include "table/attempt_files.h"

#include "lancelet/error.h"

namespace lancelet::table {

AttemptFiles::~AttemptFiles() {
  if (published_) return;
  // Runs while an exception unwinds: nothing may escape.
  try {
    io::RemoveQuietly(store_, files_);
    for (auto dir = directories_.rbegin(); dir != directories_.rend(); ++dir) {
      try {
        if (dir->with_contents) store_.DeleteTree(dir->path);
        else store_.DeleteDirIfEmpty(dir->path);
      } catch (const Error&) {
      }
    }
  } catch (...) {
  }
}

}  // namespace lancelet::table
