// ApplyStep's group form and GroupSplitsOf: the one shard-order replay
// (spec §4, §4.2).
#include "planner/steps/step.h"

namespace reshard {

DistState ApplyGroupStep(const DistState& state, const Step& step) {
  // The group is the tail of every order it leaves (CheckStep), so the
  // removals commute; entering Shard, the mesh dims join in entries' order.
  // Permutes and exchanges: every group mesh dim leaves, then entries join.
  const bool joins = MovesSlices(step.kind) || !step.entries.empty();
  DistState next = state;
  for (unsigned bits = step.group.bits(); bits != 0; bits &= bits - 1) {
    next = next.WithPlacement(__builtin_ctz(bits), joins ? Placement::Replicate() : step.dst);
  }
  if (!joins) return next;
  for (int i = 0; i < step.entries.size(); ++i) {
    next =
        next.WithPlacement(step.entries.mesh_dim(i), Placement::Shard(step.entries.tensor_dim(i)));
  }
  return next;
}

MeshDimList GroupSplitsOf(const DistState& state, const Step& step, int tensor_dim, bool after) {
  return GroupSplitsIn(after ? ApplyStep(state, step) : state, step.group, tensor_dim);
}

MeshDimList GroupSplitsIn(const DistState& state, MeshDimSet group, int tensor_dim) {
  MeshDimList out;
  for (int m : state.OrderOf(tensor_dim)) {
    if (group.Contains(m)) out.push_back(m);
  }
  return out;
}

}  // namespace reshard
