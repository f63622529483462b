#include "io/local_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lancelet/error.h"

namespace lancelet::io {

std::shared_ptr<LocalInput> LocalInput::Open(const std::string& path, const std::string& name) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowNotFound("cannot open '{}': {}", name, std::strerror(errno));
  std::shared_ptr<LocalInput> input(new LocalInput(fd, name));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    input->mappable_ = true;
    input->size_ = uint64_t(st.st_size);
  }
#ifdef F_SETPIPE_SZ
  // A pipe is read through a 1 MiB buffer (64 KiB by default: a read per 64 KiB).
  if (S_ISFIFO(st.st_mode)) ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
  return input;
}

LocalInput::~LocalInput() { ::close(fd_); }

size_t LocalInput::ReadSome(char* out, size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, out, n);
    if (got >= 0) return size_t(got);
    if (errno != EINTR) ThrowIo("cannot read '{}': {}", name_, std::strerror(errno));
  }
}

}  // namespace lancelet::io
