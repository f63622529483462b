// The one way lancelet starts a thread that works for a command (a scan's morsel reader,
// a GROUP BY's part, a join's prober, a read-ahead): StartWorkerThread.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>

namespace lancelet {

// The cores this process may run on (sched_getaffinity: taskset and cgroup cpusets
// narrow them), at least 1.
int CoresAvailable();

// A thread running `body`, whose allocations come from one of as many allocator arenas
// as the process has cores, shared round-robin by every worker thread.
//
// Why: jemalloc (the release executables' allocator, src/malloc_config.cc) gives each new
// thread an arena of its own, up to 4 per core, and an arena keeps the pages its threads
// freed for their reuse only, each backed by huge pages of its own. At `--threads 8` on 2
// cores, a streaming SELECT over 3M rows peaked at 57 MB against 21 MB on one thread;
// with the workers sharing 2 arenas, at 47-52 MB (the rest is each thread's batch in
// flight). One arena per core still keeps threads that run at the same time apart.
// Where jemalloc is not linked in (the library embedded elsewhere, the sanitizer builds)
// this is a plain std::thread.
std::thread StartWorkerThread(std::function<void()> body);

// work(i) for every i < count: i = 0 on the calling thread, the others on worker threads
// started for the call and joined before it returns. Then the error of the lowest i that
// threw, if any, is rethrown.
void RunOnThreads(size_t count, const std::function<void(size_t)>& work);

}  // namespace lancelet
