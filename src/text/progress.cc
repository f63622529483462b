#include "lancelet/progress.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

namespace lancelet {

namespace {

std::chrono::milliseconds QuietPeriod() {
  const char* text = std::getenv("LANCELET_PROGRESS_AFTER_MS");
  return std::chrono::milliseconds(text && *text ? std::atoll(text) : 500);
}

// 1234567 -> "1,234,567".
std::string Grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

class CountingReader final : public RecordBatchReader {
 public:
  CountingReader(std::unique_ptr<RecordBatchReader> input, std::unique_ptr<ProgressLine> progress)
      : input_(std::move(input)), progress_(std::move(progress)) {}
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    auto batch = input_->Next();
    if (batch) progress_->Add(uint64_t(batch->num_rows()));
    else progress_.reset();
    return batch;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  std::unique_ptr<ProgressLine> progress_;
};

}  // namespace

ProgressLine::ProgressLine(bool on, std::string what, uint64_t total, std::string unit)
    : on_(on), what_(std::move(what)), unit_(std::move(unit)), total_(total),
      start_(std::chrono::steady_clock::now()), next_draw_(start_ + QuietPeriod()) {}

ProgressLine::~ProgressLine() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
}

void ProgressLine::Add(uint64_t n) {
  done_ += n;
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + std::chrono::milliseconds(100);
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::string line;
  if (total_ > 0) {
    const int percent = int(100 * std::min(done_, total_) / total_);
    std::string bar(size_t(percent / 5), '#');
    bar.resize(20, '.');
    line = fmt::format("{} [{}] {}% ({} of {} {}, {:.1f} s)", what_, bar, percent, Grouped(done_), Grouped(total_),
                       unit_, seconds);
  } else if (const double f = fraction_ ? std::clamp(fraction_(), 0.0, 1.0) : 0; f > 0) {
    const int percent = int(100 * f);
    std::string bar(size_t(percent / 5), '#');
    bar.resize(20, '.');
    line = fmt::format("{} [{}] {}% ({} {}, {:.1f} s, about {:.0f} s left)", what_, bar, percent, Grouped(done_), unit_,
                       seconds, seconds * (1 - f) / f);
  } else {
    line = fmt::format("{}: {} {} ({:.1f} s)", what_, Grouped(done_), unit_, seconds);
  }
  std::cerr << "\r\033[K" << line << std::flush;
}

std::unique_ptr<RecordBatchReader> CountedOn(std::unique_ptr<RecordBatchReader> input,
                                             std::unique_ptr<ProgressLine> progress) {
  return std::make_unique<CountingReader>(std::move(input), std::move(progress));
}

}  // namespace lancelet
