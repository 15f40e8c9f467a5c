// The compat greedy planner (spec §8): no search, one pass last-to-first
// mesh dim then one first-to-last. It ignores shard order.
#ifndef RESHARD_PLANNER_SEARCH_GREEDY_PLANNER_H_
#define RESHARD_PLANNER_SEARCH_GREEDY_PLANNER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/placement.h"
#include "planner/steps/step.h"

namespace reshard {

// NotFound ("no_path: ...") when a step would need S->P or P(x)->P(y).
absl::StatusOr<std::vector<Step>> GreedySteps(const DeviceMesh& mesh,
                                              absl::Span<const Placement> src,
                                              absl::Span<const Placement> dst);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_GREEDY_PLANNER_H_
