#include "planner/search/transitions.h"

namespace reshard {

void AppendTransitions(const DistState& state, int tensor_ndim, unsigned partial_ops,
                       std::vector<Step>* out) {
  const int ndim = state.ndim();
  // Each mesh dim's placement, decoded once: the loops below read them for
  // every edge, and the search generates every state's edges.
  Placement placements[kMaxMeshDims];
  for (int m = 0; m < ndim; ++m) placements[m] = state.placement(m);
  // The last mesh dim of each tensor dim's order: the only one that may leave
  // it (stack discipline).
  int last[kMaxTensorDims];
  for (int d = 0; d < kMaxTensorDims; ++d) last[d] = -1;
  for (int m = 0; m < ndim; ++m) {
    const Placement p = placements[m];
    if (p.is_shard() &&
        (last[p.dim()] < 0 || state.OrderPosition(m) > state.OrderPosition(last[p.dim()]))) {
      last[p.dim()] = m;
    }
  }
  auto add = [&](int m, StepKind kind, Placement dst) {
    out->push_back(Step{MeshDimSet::Single(m), kind, placements[m], dst});
  };
  // 1. S(a) -> S(b), all_to_all.
  for (int a = 0; a < tensor_ndim; ++a) {
    if (last[a] < 0) continue;
    for (int b = 0; b < tensor_ndim; ++b) {
      if (b != a) add(last[a], StepKind::kAllToAll, Placement::Shard(b));
    }
  }
  // 2. S(a) -> R, all_gather.
  for (int a = 0; a < tensor_ndim; ++a) {
    if (last[a] >= 0) add(last[a], StepKind::kAllGather, Placement::Replicate());
  }
  // 3. P -> R, all_reduce.
  for (int m = 0; m < ndim; ++m) {
    if (placements[m].is_partial()) add(m, StepKind::kAllReduce, Placement::Replicate());
  }
  // 4. R -> S(b), chunk.
  for (int m = 0; m < ndim; ++m) {
    if (!placements[m].is_replicate()) continue;
    for (int b = 0; b < tensor_ndim; ++b) add(m, StepKind::kChunk, Placement::Shard(b));
  }
  // 5. P -> S(b), reduce_scatter.
  for (int m = 0; m < ndim; ++m) {
    if (!placements[m].is_partial()) continue;
    for (int b = 0; b < tensor_ndim; ++b) add(m, StepKind::kReduceScatter, Placement::Shard(b));
  }
  // 6. R -> P(op), partition, for the ops of source and target only.
  const unsigned held = state.PartialOps();
  for (int m = 0; m < ndim; ++m) {
    if (!placements[m].is_replicate()) continue;
    for (int op = 0; op < kNumReduceOps; ++op) {
      if (!(partial_ops & (1u << op)) || !PartialOpsCompatible(held | (1u << op))) continue;
      add(m, StepKind::kPartition, Placement::Partial(static_cast<ReduceOp>(op)));
    }
  }
}

}  // namespace reshard
