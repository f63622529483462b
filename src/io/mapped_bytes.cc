#include "io/mapped_bytes.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lancelet/error.h"

namespace lancelet::io {

MappedBytes MapForSequentialRead(int fd, size_t size, const std::string& name) {
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapped == MAP_FAILED) ThrowIo("cannot map '{}': {}", name, std::strerror(errno));
  ::madvise(mapped, size, MADV_SEQUENTIAL);
  auto* base = static_cast<char*>(mapped);
  MappedBytes out;
  out.owner = std::shared_ptr<const void>(mapped, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  out.bytes = std::string_view(base, size);
  out.release = [base](int64_t offset, int64_t length) {
    const auto page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (uintptr_t(base + offset) + page - 1) & ~(page - 1);
    const uintptr_t end = uintptr_t(base + offset + length) & ~(page - 1);
    if (begin < end) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  };
  return out;
}

}  // namespace lancelet::io
