// What each participant of a cross-mesh plan sends, counted from the plan
// without running it (planner/steps/planned_bytes.h for the steps on either
// mesh). `reshard bench --dry-run` prints the busiest participant's.
//
//   std::vector<int64_t> across = PlannedBytesSentAcross(request, cross_plan);
#ifndef RESHARD_PLANNER_CROSS_MESH_PLANNED_BYTES_ACROSS_H_
#define RESHARD_PLANNER_CROSS_MESH_PLANNED_BYTES_ACROSS_H_

#include <cstdint>
#include <vector>

#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/cross_mesh/naive_plan.h"

namespace reshard {

// Per participant of a cross-mesh plan: the steps before (a source rank's),
// the crossing (CrossMeshPlan::BytesSent) and the steps after (a
// destination rank's).
std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const CrossMeshPlan& plan);
// The same for the naive baseline: its hops instead of the crossing.
std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const NaiveCrossMeshPlan& naive);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_PLANNED_BYTES_ACROSS_H_
