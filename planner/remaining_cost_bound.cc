#include "planner/remaining_cost_bound.h"

#include <algorithm>

namespace reshard {

namespace {

// Keeps the bound consistent under rounding: a communicating step then lowers
// it by less than its price by a margin far above any rounding error.
constexpr double kShrink = 1.0 - 1e-6;

}  // namespace

RemainingCostBound::RemainingCostBound(const DistState& dst, const BoundCostModel& model,
                                       Graph graph)
    : native_(graph == Graph::kNative) {
  for (int m = 0; m < dst.ndim(); ++m) {
    dst_placement_[m] = dst.placement(m);
    dst_position_[m] = dst.OrderPosition(m);
    const double all_to_all = model.LowerBound(StepKind::kAllToAll, m);
    const double all_gather = model.LowerBound(StepKind::kAllGather, m);
    const double all_reduce = model.LowerBound(StepKind::kAllReduce, m);
    const double reduce_scatter = model.LowerBound(StepKind::kReduceScatter, m);
    if (dst_placement_[m].is_shard()) {
      shard_leaves_[m] = std::min(all_to_all, all_gather);
      if (native_) {
        shard_leaves_[m] = std::min(shard_leaves_[m], model.LowerBound(StepKind::kPermute, m));
      }
      partial_leaves_[m] = std::min(reduce_scatter, all_reduce);
    } else {
      shard_leaves_[m] = all_gather;
      partial_leaves_[m] = std::min(all_reduce, reduce_scatter + all_gather);
    }
    useful_ = useful_ || shard_leaves_[m] > 0 || partial_leaves_[m] > 0;
  }
}

double RemainingCostBound::operator()(const DistState& state) const {
  const int ndim = state.ndim();
  // First position of each tensor dim's order that differs from dst's: the
  // lowest position holding a mesh dim that dst does not hold there.
  int diverge[kMaxTensorDims];
  for (int d = 0; d < kMaxTensorDims; ++d) diverge[d] = kMaxMeshDims;
  Placement placement[kMaxMeshDims];
  for (int m = 0; m < ndim; ++m) {
    const Placement p = placement[m] = state.placement(m);
    if (!p.is_shard()) continue;
    const int pos = state.OrderPosition(m);
    if ((p != dst_placement_[m] || pos != dst_position_[m]) && pos < diverge[p.dim()]) {
      diverge[p.dim()] = pos;
    }
  }
  // Summed in mesh dim order, so that adding a mesh dim never lowers the sum.
  // Native: one permute may move every Shard bound for a Shard (header).
  double sum = 0;
  double largest_permuted = 0;
  for (int m = 0; m < ndim; ++m) {
    const Placement p = placement[m];
    if (p.is_shard() && state.OrderPosition(m) >= diverge[p.dim()]) {
      if (native_ && dst_placement_[m].is_shard()) {
        largest_permuted = std::max(largest_permuted, shard_leaves_[m]);
      } else {
        sum += shard_leaves_[m];
      }
    } else if (p.is_partial() && p != dst_placement_[m]) {
      sum += partial_leaves_[m];
    }
  }
  return (sum + largest_permuted) * kShrink;
}

}  // namespace reshard
