// A read-only mapping of a local file read once, front to back (an Arrow IPC input, a
// spill file): the bytes stay in the page cache, and the reader hands back each range it
// is done with so that its pages leave the process's memory. Mapped pages count in the
// process's resident size: a 3 GB input read this way without releasing peaked at 3.1 GB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace lancelet::io {

struct MappedBytes {
  std::shared_ptr<const void> owner;  // keeps the mapping; the descriptor may be closed
  std::string_view bytes;
  // Drops the whole pages inside [offset, offset + length) from memory; the bytes stay
  // readable (they come back from the file). Neighbouring pages are kept.
  std::function<void(int64_t offset, int64_t length)> release;
};

// The first `size` (> 0) bytes of a regular file, mapped for a sequential read. Throws Io
// "cannot map '<name>': <reason>".
MappedBytes MapForSequentialRead(int fd, size_t size, const std::string& name);

}  // namespace lancelet::io
