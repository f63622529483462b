// A local file opened as an input that is read once, front to back: a regular file,
// which the caller may map, or a stream (a pipe, a terminal), read as it arrives. For
// inputs the local store hands over whole (Arrow IPC files), not for dataset files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "io/mapped_bytes.h"

namespace lancelet::io {

class LocalInput {
 public:
  // Throws NotFound "cannot open '<name>': <reason>"; `name` is what the user gave.
  static std::shared_ptr<LocalInput> Open(const std::string& path, const std::string& name);
  ~LocalInput();
  LocalInput(const LocalInput&) = delete;
  LocalInput& operator=(const LocalInput&) = delete;

  int fd() const { return fd_; }
  // A regular file of `size()` > 0 bytes, which can be mapped; else read with ReadSome.
  bool mappable() const { return mappable_; }
  // The whole file, mapped for one sequential read; only when mappable().
  MappedBytes Map() const { return MapForSequentialRead(fd_, size_t(size_), name_); }
  uint64_t size() const { return size_; }
  // Up to `n` bytes; 0 at the end. Throws Io naming the input.
  size_t ReadSome(char* out, size_t n);

 private:
  LocalInput(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  int fd_;
  std::string name_;
  bool mappable_ = false;
  uint64_t size_ = 0;
};

}  // namespace lancelet::io
