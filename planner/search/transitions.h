// The graph's edges (spec §4): every legal single-mesh-dim step out of a
// state, in generation order. That order decides ties (spec §5). Each edge
// passes CheckStep (step.h); ApplyStep gives its target state.
#ifndef RESHARD_PLANNER_SEARCH_TRANSITIONS_H_
#define RESHARD_PLANNER_SEARCH_TRANSITIONS_H_

#include <vector>

#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// Appends to *out the steps out of `state` for a tensor of `tensor_ndim` dims.
// `partial_ops` is the mask (1 << ReduceOp) of ops the R -> P edges may use:
// those of the source and target states (spec §4, case 6).
void AppendTransitions(const DistState& state, int tensor_ndim, unsigned partial_ops,
                       std::vector<Step>* out);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_TRANSITIONS_H_
