// Independent requests run side by side, so that a store's latency is paid once per round
// rather than once per request.
#pragma once

#include <cstddef>
#include <functional>

namespace lancelet::io {

// fn(i) for every i in [0, n), on up to `threads` threads (the caller's included); the
// first error any of them throws is rethrown once all have stopped, and no new i starts
// after it.
void RunConcurrently(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace lancelet::io
