#include "io/scratch_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <streambuf>

#include "lancelet/error.h"

namespace lancelet::io {

// Unbuffered: the writers above it hand over whole messages.
class ScratchFile::Output final : public std::streambuf {
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

ScratchFile::ScratchFile(std::string what) : what_(std::move(what)) {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/tmp";
  std::string path = dir + "/lancelet-spill-XXXXXX";
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) ThrowIo("cannot create a temporary file for {} in '{}': {}", what_, dir, std::strerror(errno));
  ::unlink(path.c_str());
  buffer_ = std::make_unique<Output>(fd_, what_);
  out_ = std::make_unique<std::ostream>(buffer_.get());
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

MappedBytes ScratchFile::MapWritten() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) ThrowIo("cannot read {} back: {}", what_, std::strerror(errno));
  if (st.st_size == 0) return {};
  return MapForSequentialRead(fd_, size_t(st.st_size), what_);
}

}  // namespace lancelet::io
