// jemalloc's settings, read when it starts (the `malloc_conf` symbol it looks up). Linked
// only into the executables that carry jemalloc (CMake: lancelet_allocator).
//
// thp: back the heap with transparent huge pages. A command touches a few MiB of fresh
// memory (read windows, decoded columns, output frames); in 4 KiB pages that is
// hundreds of page faults. What a fault costs depends on the host: on the VM where this
// was chosen a 4 KiB fault cost ~12 µs, and one 2 MiB page per fault cut a 1M-row
// `lancelet scan` from 790 faults to 280 and its time nearly in half. On a later host a
// 4 KiB fault cost ~1 µs and a 2 MiB one 225 µs to 1.6 ms (zeroing), and huge pages still
// won, narrowly: a 1M-row narrow scan took 2.6-2.9 ms with them, 2.9 ms without
// (MALLOC_CONF=thp:default overrides this for a measurement).
#include <cstdlib>

extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}

namespace {

// One 2 MiB-aligned extent of 6 MiB, allocated and freed before main. jemalloc keeps it
// (untouched, so it costs no memory) and carves the command's first allocations from it,
// so they fault in whole huge pages. Without it the arena grows by extents whose size is
// a size class (2.5 MiB, 3 MiB, ...): the head of such an extent below its first 2 MiB
// boundary is served in 4 KiB pages, and a command whose heap just crosses into one pays
// ~128 more faults. An overlaid 1M-row scan did (355 faults against 224 compacted,
// 12.3 ms against 9.3 ms); with the reservation both take ~230 faults, 10.5 and 8.7 ms.
// 6 MiB stays below jemalloc's oversize threshold (8 MiB), whose allocations go to an
// arena of their own. The pointer is volatile so that the pair is not optimised away.
struct ReserveHugePageExtent {
  ReserveHugePageExtent() {
    void* volatile extent = std::aligned_alloc(size_t{2} << 20, size_t{6} << 20);
    std::free(extent);
  }
} reserve_huge_page_extent;

}  // namespace
