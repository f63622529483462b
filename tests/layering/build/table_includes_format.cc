// Compiled with the table layer's include path: format is below table, so this compiles.
#include "format/little_endian.h"

int Probe() { return int(lancelet::format::LoadLE<uint16_t>("\x01\x00")); }
