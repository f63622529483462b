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
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
