#include "io/run_concurrently.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "array/worker_thread.h"

namespace lancelet::io {

void RunConcurrently(size_t n, int threads, const std::function<void(size_t)>& fn) {
  const size_t count = std::min<size_t>(n, size_t(std::max(1, threads)));
  if (count <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(failed_mutex);
        if (!failed) failed = std::current_exception();
        next = n;
      }
    }
  };
  RunOnThreads(count, [&](size_t) { work(); });
  if (failed) std::rethrow_exception(failed);
}

}  // namespace lancelet::io
