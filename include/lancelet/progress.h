// Progress of long commands on a terminal: one line on stderr, redrawn in place at most
// ten times a second and erased when the work ends. Nothing is drawn for work that ends
// within half a second (LANCELET_PROGRESS_AFTER_MS changes that), nor when stderr is not
// the terminal the caller checked for.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lancelet/record_batch.h"

namespace lancelet {

class ProgressLine {
 public:
  // `total`: the count at 100% (a bar and a percentage), 0 when unknown (the count alone).
  ProgressLine(bool on, std::string what, uint64_t total = 0, std::string unit = "rows");
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Add(uint64_t n);
  // How much of the work is done, from 0 to 1, when the count alone cannot say (rows read
  // from a file whose size is known: the share of its bytes read). The line then shows a
  // bar, the percentage and the time left, beside the count.
  void SetFraction(std::function<double()> fraction) { fraction_ = std::move(fraction); }

 private:
  bool on_;
  std::string what_, unit_;
  uint64_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_, next_draw_;
  bool drawn_ = false;
  std::function<double()> fraction_;
};

// `input` with its rows counted on `progress` as they are read; the line is erased when
// the stream ends or the reader is destroyed.
std::unique_ptr<RecordBatchReader> CountedOn(std::unique_ptr<RecordBatchReader> input,
                                             std::unique_ptr<ProgressLine> progress);

}  // namespace lancelet
