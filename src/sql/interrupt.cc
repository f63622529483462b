#include "sql/interrupt.h"

#include <atomic>
#include <csignal>
#include <optional>

#include "array/shared_source.h"
#include "lancelet/error.h"

namespace lancelet::sql {

namespace {

std::atomic<bool> interrupted{false};  // lock-free, so the handler may set it
static_assert(std::atomic<bool>::is_always_lock_free);

struct sigaction previous;

extern "C" void OnInterrupt(int) { interrupted.store(true, std::memory_order_relaxed); }

class InterruptibleReader final : public RecordBatchReader, public ShareableReader {
 public:
  explicit InterruptibleReader(std::unique_ptr<RecordBatchReader> input) : input_(std::move(input)) {}
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    ThrowIfInterrupted();
    return input_->Next();
  }
  SharedSource* Shared() override {
    SharedSource* pieces = SharedSourceOf(*input_);
    if (!pieces) return nullptr;
    checked_.emplace(*pieces, [](const RecordBatchPtr& batch) {
      ThrowIfInterrupted();
      return batch;
    });
    return &*checked_;
  }

 private:
  std::unique_ptr<RecordBatchReader> input_;
  std::optional<MappedPieces> checked_;
};

}  // namespace

InterruptHandler::InterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a read at the prompt returns, and the shell sees the flag
  sigaction(SIGINT, &action, &previous);
}

InterruptHandler::~InterruptHandler() { sigaction(SIGINT, &previous, nullptr); }

bool InterruptRequested() { return interrupted.load(std::memory_order_relaxed); }

void ClearInterrupt() { interrupted.store(false, std::memory_order_relaxed); }

void ThrowIfInterrupted() {
  if (InterruptRequested()) ThrowInvalid("interrupted (Ctrl-C)");
}

std::unique_ptr<RecordBatchReader> Interruptible(std::unique_ptr<RecordBatchReader> input) {
  return std::make_unique<InterruptibleReader>(std::move(input));
}

}  // namespace lancelet::sql
