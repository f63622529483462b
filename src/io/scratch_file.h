// A temporary file for data that outgrows memory (SQL's sort runs and hash partitions):
// made in TMPDIR (else /tmp) and unlinked at once, so nothing outlives the process however
// it ends; it lives while its descriptor or a mapping of it does.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "io/mapped_bytes.h"

namespace lancelet::io {

class ScratchFile {
 public:
  // `what` names the contents in errors ("a sort run"). Throws Io naming the directory.
  explicit ScratchFile(std::string what);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& what() const { return what_; }
  // Appends; a failed write throws Io naming `what`.
  std::ostream& out() { return *out_; }
  // Everything written so far, mapped (see MappedBytes). Empty bytes and no owner when
  // nothing was written.
  MappedBytes MapWritten();

 private:
  class Output;
  int fd_ = -1;
  std::string what_;
  std::unique_ptr<Output> buffer_;
  std::unique_ptr<std::ostream> out_;
};

}  // namespace lancelet::io
