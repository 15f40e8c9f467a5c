#include "planner/costs/remaining_cost_bound.h"

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
    dst_cell_[m] = dst.cell(m);
    const double all_to_all = model.LowerBound(StepKind::kAllToAll, m);
    const double all_gather = model.LowerBound(StepKind::kAllGather, m);
    const double all_reduce = model.LowerBound(StepKind::kAllReduce, m);
    const double reduce_scatter = model.LowerBound(StepKind::kReduceScatter, m);
    double* leaves = leaves_[m];
    if (dst.placement(m).is_shard()) {
      leaves[kShardLeaves] = std::min(all_to_all, all_gather);
      if (native_) {
        leaves[kShardLeaves] =
            std::min(leaves[kShardLeaves], model.LowerBound(StepKind::kPermute, m));
      }
      leaves[kPartialLeaves] = std::min(reduce_scatter, all_reduce);
    } else {
      leaves[kShardLeaves] = all_gather;
      leaves[kPartialLeaves] = std::min(all_reduce, reduce_scatter + all_gather);
    }
    useful_ = useful_ || leaves[kShardLeaves] > 0 || leaves[kPartialLeaves] > 0;
  }
}

// Reads the state's cells (dist_state.h) directly, with as few branches on
// the kinds as the compiler allows: the search bounds every state it reaches,
// and to a branch predictor their placements are as good as random.
double RemainingCostBound::operator()(const DistState& state) const {
  constexpr auto kShard = static_cast<unsigned>(Placement::Kind::kShard);
  constexpr auto kPartial = static_cast<unsigned>(Placement::Kind::kPartial);
  const int ndim = state.ndim();
  // First position of each tensor dim's order that differs from dst's: the
  // lowest position holding a mesh dim that dst does not hold there (a cell
  // differs). The last slot takes what is not a Shard.
  unsigned diverge[kMaxTensorDims + 1];
  for (unsigned& d : diverge) d = kMaxMeshDims;
  for (int m = 0; m < ndim; ++m) {
    const unsigned c = state.cell(m);
    const bool moved = (c & 3u) == kShard && c != dst_cell_[m];
    const unsigned slot = moved ? (c >> 2) & 7u : kMaxTensorDims;
    diverge[slot] = std::min(diverge[slot], c >> 5);
  }
  // Summed in mesh dim order, so that adding a mesh dim never lowers the sum.
  // Native: one permute may move every Shard bound for a Shard (header).
  double sum = 0;
  double largest_permuted = 0;
  for (int m = 0; m < ndim; ++m) {
    const unsigned c = state.cell(m);
    const bool shard_leaves = (c & 3u) == kShard && (c >> 5) >= diverge[(c >> 2) & 7u];
    const bool partial_leaves = (c & 3u) == kPartial && c != dst_cell_[m];
    if (shard_leaves && native_ && (dst_cell_[m] & 3u) == kShard) {
      largest_permuted = std::max(largest_permuted, leaves_[m][kShardLeaves]);
      continue;
    }
    sum += leaves_[m][shard_leaves ? kShardLeaves : partial_leaves ? kPartialLeaves : kStays];
  }
  return (sum + largest_permuted) * kShrink;
}

}  // namespace reshard
