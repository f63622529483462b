// Ctrl-C in the interactive shell: SIGINT sets a flag that a running statement's sources
// check between batches (and the shell between the batches it prints), so the statement
// fails with "interrupted" and nothing it would have committed is committed.
#pragma once

#include <memory>

#include "lancelet/record_batch.h"

namespace lancelet::sql {

// While one lives, SIGINT sets the flag instead of ending the process (the shell's
// interactive loop holds one). Signals arriving outside it keep their default action.
class InterruptHandler {
 public:
  InterruptHandler();
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
};

bool InterruptRequested();
void ClearInterrupt();
// Throws InvalidArgument "interrupted (Ctrl-C)" when the flag is set.
void ThrowIfInterrupted();
// `input`, which throws so before each batch once the flag is set.
std::unique_ptr<RecordBatchReader> Interruptible(std::unique_ptr<RecordBatchReader> input);

}  // namespace lancelet::sql
