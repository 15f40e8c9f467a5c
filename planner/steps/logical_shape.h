// The logical shape of a step (spec §10): the tensor as the step's group
// sees it at one rank. Every per-rank rule of a step starts from it: its
// bytes (step_bytes.h), what a permute exchanges (permute_exchange.h), its
// memory (step_memory.h).
#ifndef RESHARD_PLANNER_STEPS_LOGICAL_SHAPE_H_
#define RESHARD_PLANNER_STEPS_LOGICAL_SHAPE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// Spec §10: the tensor as the step's group sees it at the rank with
// `coordinate`: the global shape split, in shard order, by every mesh dim of
// `current` outside the group.
std::vector<int64_t> LogicalShape(const DistState& current, const Step& step,
                                  const DeviceMesh& mesh, absl::Span<const int64_t> global_shape,
                                  absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_LOGICAL_SHAPE_H_
