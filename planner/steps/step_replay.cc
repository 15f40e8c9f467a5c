// ApplyStep's group form and GroupSplitsOf: the one shard-order replay
// (spec §4, §4.2).
#include <algorithm>

#include "planner/steps/step.h"

namespace reshard {

DistState ApplyGroupStep(const DistState& state, const Step& step) {
  // The group is the tail of every order it leaves (CheckStep), so the
  // removals commute; entering Shard, the mesh dims join in entries' order.
  // Permutes and exchanges: every group mesh dim leaves, then entries join.
  const bool joins = MovesSlices(step.kind) || !step.entries.empty();
  std::pair<int, int> entries[ShardEntries::kMax];
  for (int i = 0; i < step.entries.size(); ++i) {
    entries[i] = {step.entries.mesh_dim(i), step.entries.tensor_dim(i)};
  }
  return state.WithGroupReplaced(step.group, joins ? Placement::Replicate() : step.dst,
                                 absl::MakeConstSpan(entries, joins ? step.entries.size() : 0));
}

MeshDimList GroupSplitsOf(const DistState& state, const Step& step, int tensor_dim, bool after) {
  return GroupSplitsIn(after ? ApplyStep(state, step) : state, step.group, tensor_dim);
}

MeshDimList GroupSplitsIn(const DistState& state, MeshDimSet group, int tensor_dim) {
  MeshDimList out[kMaxTensorDims];
  GroupSplitsOfEach(state, group, tensor_dim + 1, out);
  return out[tensor_dim];
}

void GroupSplitsOfEach(const DistState& state, MeshDimSet group, int tensor_ndim,
                       MeshDimList* out) {
  // Each tensor dim's shards in the group, placed by their order positions.
  int at_position[kMaxTensorDims][kMaxMeshDims];
  int count[kMaxTensorDims] = {};
  for (int d = 0; d < tensor_ndim; ++d) {
    std::fill(at_position[d], at_position[d] + state.ndim(), -1);
  }
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement p = state.placement(m);
    if (group.Contains(m) && p.is_shard() && p.dim() < tensor_ndim) {
      at_position[p.dim()][state.OrderPosition(m)] = m;
      ++count[p.dim()];
    }
  }
  for (int d = 0; d < tensor_ndim; ++d) {
    out[d].clear();
    for (int i = 0; static_cast<int>(out[d].size()) < count[d]; ++i) {
      if (at_position[d][i] >= 0) out[d].push_back(at_position[d][i]);
    }
  }
}

}  // namespace reshard
