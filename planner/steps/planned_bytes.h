// What each rank of a plan sends, counted from the plan without running it:
// per step BytesOfStep at the rank's coordinate on the logical shape of the
// state the step starts from (spec §10, §11; what the executor's counters
// must equal, harness/check.h). `reshard bench --dry-run` prints the
// busiest rank's next to the receive lower bound (harness/receive_bound.h);
// a cross-mesh plan's is planner/cross_mesh/planned_bytes_across.h.
//
//   std::vector<int64_t> sent = PlannedBytesSent(src, plan);   // per rank
#ifndef RESHARD_PLANNER_STEPS_PLANNED_BYTES_H_
#define RESHARD_PLANNER_STEPS_PLANNED_BYTES_H_

#include <cstdint>
#include <vector>

#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"

namespace reshard {

// Per rank of src's mesh, the bytes `plan` (from src) sends.
std::vector<int64_t> PlannedBytesSent(const DistSpec& src, const Plan& plan);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_PLANNED_BYTES_H_
