#include "table/attempt_files.h"

#include <exception>

#include "lancelet/error.h"

namespace lancelet::table {

void AttemptFiles::Put(std::string path, std::string bytes) {
  Add(path);
  if (!store_.costly_requests()) return store_.Put(path, bytes);
  if (puts_.size() >= kPutsInFlight) {
    puts_.front().get();
    puts_.erase(puts_.begin());
  }
  puts_.push_back(std::async(std::launch::async, [this, path = std::move(path), bytes = std::move(bytes)] {
    store_.Put(path, bytes);
  }));
}

void AttemptFiles::Wait() {
  std::exception_ptr failed;
  for (auto& put : puts_) {
    try {
      put.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  puts_.clear();
  if (failed) std::rethrow_exception(failed);
}

AttemptFiles::~AttemptFiles() {
  // A put still running could land after the removal below and stay.
  for (auto& put : puts_) put.wait();
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
