// EXPLAIN ANALYZE: the statement runs with a Profile in its Context, and each operator
// the plan makes (sources, filters, joins, aggregation, windows, sorting, projection)
// counts the rows it gives and the time spent in it, its inputs included.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/record_batch.h"

namespace lancelet::sql {

struct Context;

struct OperatorProfile {
  std::string name;
  int64_t rows = 0;     // rows it gave
  int64_t batches = 0;
  double seconds = 0;   // in its Next() calls and its blocking work, inputs included
};

struct Profile {
  std::vector<std::shared_ptr<OperatorProfile>> operators;  // in the order the plan made them
  std::shared_ptr<OperatorProfile> Add(std::string name);
};

// An operator's name, made only when the statement is profiled: a plan that is not pays
// nothing for it (a correlated subquery may plan its statement once per outer value).
using OperatorName = std::function<std::string()>;

// `input`, counted as operator `name` when the statement is profiled (else `input` itself).
std::unique_ptr<RecordBatchReader> Profiled(const Context& ctx, const OperatorName& name,
                                            std::unique_ptr<RecordBatchReader> input);

// Times blocking work (a hash aggregation's or a sort's input loop) for operator `name`,
// from construction to destruction, when the statement is profiled; `op()` is then the
// operator (null otherwise), to which Profiled can add the rows it gives.
class ProfileTimer {
 public:
  ProfileTimer(const Context& ctx, const OperatorName& name);
  ~ProfileTimer();
  const std::shared_ptr<OperatorProfile>& op() const { return op_; }

 private:
  std::shared_ptr<OperatorProfile> op_;
  std::chrono::steady_clock::time_point start_;
};

// Profiled for an operator ProfileTimer made: its rows and the time its stream takes.
std::unique_ptr<RecordBatchReader> Profiled(std::shared_ptr<OperatorProfile> op,
                                            std::unique_ptr<RecordBatchReader> input);

}  // namespace lancelet::sql
