#include "array/worker_thread.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <vector>

// jemalloc's control interface, when jemalloc is linked in (weak: null otherwise).
extern "C" int mallctl(const char* name, void* old_value, size_t* old_size, void* new_value, size_t new_size)
    __attribute__((weak));

namespace lancelet {

int CoresAvailable() {
  static const int cores = [] {
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0) return CPU_COUNT(&cpus);
    return int(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return cores;
}

namespace {

// Arena 0 is the first thread's (main's); workers take arenas 1, 2, ... cores-1, 0, 1, ...
void JoinSharedArena() {
  if (!mallctl) return;
  static std::atomic<unsigned> next_worker{1};
  unsigned arena = next_worker.fetch_add(1, std::memory_order_relaxed) % unsigned(CoresAvailable());
  mallctl("thread.arena", nullptr, nullptr, &arena, sizeof arena);  // refused: the thread keeps its own
}

}  // namespace

std::thread StartWorkerThread(std::function<void()> body) {
  return std::thread([body = std::move(body)] {
    JoinSharedArena();
    body();
  });
}

void RunOnThreads(size_t count, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(count);
  auto run = [&](size_t i) {
    try {
      work(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < count; ++i) helpers.push_back(StartWorkerThread([&run, i] { run(i); }));
  if (count > 0) run(0);
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace lancelet
