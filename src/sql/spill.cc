#include "sql/spill.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lancelet/error.h"

namespace lancelet::sql {

size_t SpillPartitionOf(uint64_t hash, int depth) {
  return size_t(((hash | 1) * (0x9E3779B97F4A7C15ull + 2 * uint64_t(depth))) >> 60) % kSpillPartitions;
}

// Writes to the file descriptor.
class SpillFile::Output final : public std::streambuf {
 public:
  Output(int fd, const std::string& what) : fd_(fd), what_(what) {}

 protected:
  std::streamsize xsputn(const char* data, std::streamsize n) override {
    for (std::streamsize done = 0; done < n;) {
      const ssize_t wrote = ::write(fd_, data + done, size_t(n - done));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) ThrowIo("cannot write {} to a temporary file: {}", what_, std::strerror(errno));
      done += wrote;
    }
    return n;
  }
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return c;
    const char byte = char(c);
    xsputn(&byte, 1);
    return c;
  }

 private:
  int fd_;
  const std::string& what_;
};

SpillFile::SpillFile(const Schema& schema, std::string what) : what_(std::move(what)) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/lancelet-spill-XXXXXX";
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) ThrowIo("cannot create a temporary file for {} in '{}': {}", what_, path, std::strerror(errno));
  ::unlink(path.c_str());
  buffer_ = std::make_unique<Output>(fd_, what_);
  out_ = std::make_unique<std::ostream>(buffer_.get());
  writer_ = std::make_unique<IpcStreamWriter>(*out_);
  writer_->WriteSchema(schema);
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::Write(const RecordBatch& batch) {
  writer_->WriteBatch(batch);
}

std::unique_ptr<RecordBatchReader> SpillFile::Read() {
  writer_->Close();
  struct stat st {};
  if (::fstat(fd_, &st) != 0) ThrowIo("cannot read {} back: {}", what_, std::strerror(errno));
  return ReadIpcMapped(fd_, size_t(st.st_size), what_);
}

}  // namespace lancelet::sql
