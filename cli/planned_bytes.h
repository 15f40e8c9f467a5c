// What each rank of a plan sends, counted from the plan without running it:
// per step BytesOfStep at the rank's coordinate on the logical shape of the
// state the step starts from (spec §10, §11; what the executor's counters
// must equal, harness/check.h). `reshard bench --dry-run` prints the
// busiest rank's next to the receive lower bound (receive_bound.h).
//
//   std::vector<int64_t> sent = PlannedBytesSent(src, plan);   // per rank
//   std::vector<int64_t> across = PlannedBytesSentAcross(request, cross_plan);
#ifndef RESHARD_CLI_PLANNED_BYTES_H_
#define RESHARD_CLI_PLANNED_BYTES_H_

#include <cstdint>
#include <vector>

#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/cross_mesh/naive_plan.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"

namespace reshard {

// Per rank of src's mesh, the bytes `plan` (from src) sends.
std::vector<int64_t> PlannedBytesSent(const DistSpec& src, const Plan& plan);

// Per participant of a cross-mesh plan: the steps before (a source rank's),
// the crossing (CrossMeshPlan::BytesSent) and the steps after (a
// destination rank's).
std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const CrossMeshPlan& plan);
// The same for the naive baseline: its hops instead of the crossing.
std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const NaiveCrossMeshPlan& naive);

}  // namespace reshard

#endif  // RESHARD_CLI_PLANNED_BYTES_H_
