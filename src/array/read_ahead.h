// The thread limit of ReadAheadThreads() (lancelet/record_batch.h), changed at run time.
#pragma once

namespace lancelet {

// The threads a command may use from now on, for the whole process (SQL's SET threads);
// 0 restores LANCELET_THREADS, else the machine's cores.
void SetReadAheadThreads(int threads);

}  // namespace lancelet
