// A verify case made ready to run on data: parsed, planned once, with its
// global tensor; what one rank does with it (RunRank); and the limits checked
// before anything is allocated.
//
// Verifying a case (harness/verify_runner.h): build a deterministic global
// tensor (ground_truth.h, TestTensor), give every rank its source shard
// (Partial sources get local values whose reduction is the global tensor),
// plan once, run the plan on every rank, and compare the results with the
// ground truth (harness/check.h). Cases without a plan, or whose plan needs
// R->P(prod) (spec §11), are skipped and reported as such.
//
//   absl::StatusOr<PreparedCase> p = Prepare(RandomCase(7, 8));
//   if (!p.ok() && IsSkip(p.status())) ...;   // no plan
//   absl::StatusOr<RankResult> mine = RunRank(*p, comm);
#ifndef RESHARD_HARNESS_PREPARED_CASE_H_
#define RESHARD_HARNESS_PREPARED_CASE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collectives/communicator.h"
#include "collectives/executor.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/verify_case.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace reshard {

// A case ready to run: parsed specs, the plan (made for coordinate 0; every
// rank runs it) and the global tensor.
struct PreparedCase {
  VerifyCase spec_case;
  DistSpec src;
  DistSpec dst;
  PlanOptions options;
  Plan plan;
  LocalTensor global;
};

// InvalidArgument for a malformed case; NotFound / ResourceExhausted when no
// plan exists (skip); Unimplemented when the plan needs R->P(prod) (skip).
absl::StatusOr<PreparedCase> Prepare(const VerifyCase& c);

// Whether `plan` can run on `mesh` with data of `dtype` (the rule Prepare
// applies, and reshard bench too): Unimplemented when a step needs R->P(prod)
// over two or more ranks, which has no exact local split (RunsOnData,
// planner/steps/step.h, spec §11); InvalidArgument when bool data would pass
// through a Partial.
absl::Status CheckRunnable(const Plan& plan, const DeviceMesh& mesh, DType dtype);

// The same rule on the layouts, before any plan: InvalidArgument where the
// data is bool and `src` or `dst` holds a Partial (a pending reduction,
// which bool data does not define), its message led by `dtype_name`, the
// way the caller's user named the dtype (e.g. "--dtype").
absl::Status CheckPartialsReducible(const DistSpec& src, const DistSpec& dst,
                                    absl::string_view dtype_name);

// True for Prepare's errors that mean "skip the case" (above).
bool IsSkip(const absl::Status& s);

// One rank's part: its source shard, Redistribute, the result.
struct RankResult {
  LocalTensor tensor;
  ExecutionStats stats;
};
absl::StatusOr<RankResult> RunRank(const PreparedCase& p, Communicator& comm);

// Fault injection for `reshard verify --kill-rank`: rank `rank` dies just
// before its collective call `at_call` (0-based); -1 means no fault.
struct Fault {
  int64_t rank = -1;
  int64_t at_call = 0;
};

// What `reshard verify` refuses up front, before allocating anything.
struct VerifyLimits {
  // Ranks run as threads or processes of one host, each with sockets to its
  // peers: thousands of them exhaust descriptors and time before failing.
  int64_t max_ranks = 64;
  // Host memory the case may take, as EstimatedBytes counts it.
  double max_bytes = 1e18;
};

// Host memory that verifying a case takes at its peak with every rank in one
// process, counted from the plan: the global tensor; per rank three times
// its largest local tensor or step buffer (a step's input, output and
// buffers; coordinate 0 holds the largest chunks); an expected shard; and
// for a Partial destination the reduction in doubles. Meant as an upper
// bound (measured peaks were 0.4 to 0.85 of it), not a measurement.
double EstimatedBytes(const DistSpec& src, const DistSpec& dst, const Plan& plan);

// Collective calls each rank makes running `plan` (size-1 mesh dims and local
// steps make none, spec §11): the range of a Fault's at_call.
int64_t CollectiveCalls(const Plan& plan, const DeviceMesh& mesh);

// The checks `reshard verify` makes before running a case: InvalidArgument,
// naming the flag to change, when the case has more ranks or needs more
// memory than `limits` allow, or `fault` would inject nothing (a rank outside
// the mesh, a call past the plan's last collective); otherwise Prepare's
// errors without its allocations.
absl::Status CheckCase(const VerifyCase& c, const VerifyLimits& limits, const Fault& fault);

}  // namespace reshard

#endif  // RESHARD_HARNESS_PREPARED_CASE_H_
