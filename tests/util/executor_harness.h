// Running a plan on every rank of a mesh as threads on Gloo, and checking the
// results against the ground truth (harness/ground_truth.h): the
// harness of the executor tests.
#ifndef RESHARD_TESTS_UTIL_EXECUTOR_HARNESS_H_
#define RESHARD_TESTS_UTIL_EXECUTOR_HARNESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/executor.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"

namespace reshard {

// The data seed of every run.
inline constexpr uint64_t kSeed = 17;

// DistSpec::Parse, failing the test on a bad notation.
DistSpec Spec(const std::vector<int64_t>& mesh, const std::string& notation,
              const std::vector<int64_t>& shape, DType dtype = DType::kF32);

// Every rank's status, result and counters, indexed by rank.
struct RunResult {
  std::vector<absl::Status> status;
  std::vector<LocalTensor> result;
  std::vector<ExecutionStats> stats;
};

// Runs `plan` on every rank of src's mesh, each starting from its shard of
// TestTensor(kSeed).
RunResult Execute(const DistSpec& src, const DistSpec& dst, const Plan& plan);

// Every rank's result equals its shard of dst (dst without Partials).
void ExpectDstShards(const DistSpec& src, const DistSpec& dst, const RunResult& run);

// Every rank sent and received `bytes` in step `step`.
void ExpectBytes(const RunResult& run, int64_t step, int64_t bytes);

// Every rank's counters of step `index` (`step`, taken from `state` on src's
// mesh and shape, in `dtype`) are BytesOfStep's at its coordinate.
void ExpectBytesOfStep(const DistSpec& src, const DistState& state, const Step& step, int64_t index,
                       const RunResult& run, DType dtype = DType::kF32);

}  // namespace reshard

#endif  // RESHARD_TESTS_UTIL_EXECUTOR_HARNESS_H_
