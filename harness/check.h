// Checking a run against the ground truth: what `reshard verify` and
// `reshard bench` decide about every rank's result of a prepared case.
//
// Compared, for every rank:
//   * its result with its destination shard computed directly
//     (harness/ground_truth.h; exact for integers and for data that was only
//     moved, a tight tolerance after floating-point reductions); for a
//     Partial destination, the reduction of the ranks' results with the
//     global tensor;
//   * its per-step logical shapes and byte counters with the plan made for
//     that rank's coordinate (planner/step.h: LogicalShape and BytesOfStep on
//     the plan's states).
//
//   CaseReport r = Check(prepared, results);   // results[rank]
//   if (r.outcome == Outcome::kFailed) std::cerr << r.detail;
#ifndef RESHARD_HARNESS_CHECK_H_
#define RESHARD_HARNESS_CHECK_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/prepared_case.h"
#include "planner/steps/plan.h"

namespace reshard {

enum class Outcome { kPassed, kFailed, kSkipped };

struct CaseReport {
  Outcome outcome = Outcome::kPassed;
  // Why it failed or was skipped; empty when it passed.
  std::string detail;
  // Skipped because the plan needs R->P(prod), rather than for want of a plan.
  bool unsupported = false;
  // Steps of a passed case's plan by StepKind (step.h order), for coverage;
  // and those of them over several mesh dims (group steps, spec §4.2).
  std::array<int64_t, kNumStepKinds> steps_by_kind{};
  std::array<int64_t, kNumStepKinds> group_steps_by_kind{};
};

// Compares every rank's result (indexed by rank) with the ground truth. A
// rank that ran out of memory or threads (ResourceExhausted) makes the case
// skipped, "out of resources: " and its message once (issue 44).
CaseReport Check(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results);

// Whether `plan` reduces (all_reduce or reduce_scatter): floating-point
// results are then compared to ReductionTolerance, not exactly.
bool HasReduction(const Plan& plan);

// The report of a case Prepare refused: skipped for IsSkip's errors (no plan,
// R->P(prod)), failed as a bad case otherwise.
CaseReport NotRun(const absl::Status& prepare_error);

}  // namespace reshard

#endif  // RESHARD_HARNESS_CHECK_H_
