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
  // The group's mesh dims that shard tensor_dim, placed by their positions
  // in its order (pricing asks this per tensor dim of every exchange).
  int at_position[kMaxMeshDims];
  std::fill(at_position, at_position + state.ndim(), -1);
  int n = 0;
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement p = state.placement(m);
    if (group.Contains(m) && p.is_shard() && p.dim() == tensor_dim) {
      at_position[state.OrderPosition(m)] = m, ++n;
    }
  }
  MeshDimList out;
  for (int i = 0; static_cast<int>(out.size()) < n; ++i) {
    if (at_position[i] >= 0) out.push_back(at_position[i]);
  }
  return out;
}

}  // namespace reshard
