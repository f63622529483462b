// Arrow IPC inputs (.arrow, .arrows, .ipc) by path, for OpenTextInput.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "text/arrow_input.h"

namespace lancelet::text {

// A regular file is mapped, not read: its batches are decoded one at a time from the
// page cache, so memory holds a batch, not the file (a 545 MB file read into a string
// took 1.1 GB and a third of a `create`). Each message's pages leave the mapping once
// decoded: mapped pages count in the process's memory, and a 3 GB input peaked at 3.1 GB.
// Pipes are read as a stream (ReadIpcStream). A file in another store is read whole.
std::unique_ptr<RecordBatchReader> OpenArrowIpc(const std::string& path, const StorageOptions& storage_options) {
  auto [store, local_path] = io::OpenStore(path, storage_options);
  if (store != io::DefaultLocalStore()) {
    auto file = store->OpenRead(local_path);
    return ReadIpc(file->Read(0, file->size()), path);
  }
  const int fd = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowNotFound("cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    std::unique_ptr<RecordBatchReader> reader;  // OpenTextInput conforms its batches
    try {
      reader = ReadIpcMapped(fd, size_t(st.st_size), path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return reader;
  }
  // A pipe: read as it arrives, a message at a time, through a 1 MiB pipe buffer (64 KiB
  // by default: a read per 64 KiB).
#ifdef F_SETPIPE_SZ
  if (S_ISFIFO(st.st_mode)) ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
  auto input = std::shared_ptr<int>(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  return ReadIpcStream(
      [input, path](char* out, size_t n) -> size_t {
        for (;;) {
          const ssize_t got = ::read(*input, out, n);
          if (got >= 0) return size_t(got);
          if (errno != EINTR) ThrowIo("cannot read '{}': {}", path, std::strerror(errno));
        }
      },
      path);
}

}  // namespace lancelet::text
