// jemalloc's settings, read when it starts (the `malloc_conf` symbol it looks up). Linked
// only into the executables that carry jemalloc (CMake: lancelet_allocator).
//
// thp: back the heap with transparent huge pages. A command touches a few MiB of fresh
// memory (read windows, decoded columns, output frames); in 4 KiB pages that is
// hundreds of page faults, and a fault costs ~12 µs on a VM without nested paging: that
// was the larger part of a 20 ms `lancelet scan` of 1M rows. One 2 MiB page per fault
// cuts the faults of that scan from 790 to 280 and its time nearly in half.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
