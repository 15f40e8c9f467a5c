// Native edges (spec §4.2): every compat edge (transitions.h), then steps
// over groups of mesh dims, permutes and the goal exchange, in generation
// order (it breaks ties between plans of equal cost).
#ifndef RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_
#define RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_

#include <vector>

#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// Appends to *out the native steps out of `state` for a tensor of
// `tensor_ndim` dims whose destination is `goal` (the goal permute and the
// goal exchange aim at it). `partial_ops` as for AppendTransitions.
void AppendNativeTransitions(const DistState& state, const DistState& goal, int tensor_ndim,
                             unsigned partial_ops, std::vector<Step>* out);

// The same steps in two parts, for searches that share a graph among goals
// (planner/search/native_graph_costs.h): those that do not depend on the
// goal, and those that do (spec §4.2 items 10's goal orders, 12 and 13). In
// generation order only together, as AppendNativeTransitions emits them.
void AppendGoalFreeTransitions(const DistState& state, int tensor_ndim, unsigned partial_ops,
                               std::vector<Step>* out);
void AppendGoalTransitions(const DistState& state, const DistState& goal, int tensor_ndim,
                           std::vector<Step>* out);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_
