// Native edges (spec §4.2): every compat edge (transitions.h), then steps
// over groups of mesh dims, permutes and the goal exchange, in generation
// order (it breaks ties between plans of equal cost).
#ifndef RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_
#define RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_

#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
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

// Each tensor dim's shard order (mesh dims, applied first to last) in fixed
// storage: the native steps read a state's orders several times, and a cost
// matrix reads each state's once per target (spec §5.2 item 6).
struct ShardOrders {
  struct Order {
    int dims[kMaxMeshDims];
    int size = 0;
    absl::Span<const int> span() const { return absl::MakeConstSpan(dims, size); }
    void push_back(int m) { dims[size++] = m; }
  };
  Order of[kMaxTensorDims];

  // One pass over the mesh dims (DistState::OrderOf would take one per
  // tensor dim). Tensor dims from `tensor_ndim` on stay empty.
  static ShardOrders Of(const DistState& state, int tensor_ndim);
};

// AppendGoalTransitions towards one goal, with what they read of it (its
// orders and Shard mesh dims) computed once, for adding them out of many
// states (native_graph_costs.h).
class GoalTransitions {
 public:
  GoalTransitions(const DistState& goal, int tensor_ndim);
  // AppendGoalTransitions(state, goal, tensor_ndim, out); `orders` must be
  // ShardOrders::Of(state, tensor_ndim).
  void Append(const DistState& state, const ShardOrders& orders, std::vector<Step>* out) const;

 private:
  DistState goal_;
  int tensor_ndim_;
  ShardOrders goal_orders_;
  unsigned goal_shards_;  // DistState::ShardSet
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_NATIVE_TRANSITIONS_H_
