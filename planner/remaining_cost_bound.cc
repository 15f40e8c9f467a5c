#include "planner/remaining_cost_bound.h"

namespace reshard {

namespace {

// Keeps the bound consistent under rounding: a communicating step then lowers
// it by less than its price by a margin far above any rounding error.
constexpr double kShrink = 1.0 - 1e-6;

}  // namespace

RemainingCostBound::RemainingCostBound(const DistState& dst, const BoundCostModel& model)
    : dst_(dst) {
  for (int m = 0; m < dst.ndim(); ++m) {
    per_dim_[m] = model.CommunicationLowerBound(m);
    useful_ = useful_ || per_dim_[m] > 0;
  }
}

double RemainingCostBound::operator()(const DistState& state) const {
  const int ndim = state.ndim();
  // First position of each tensor dim's order that differs from dst's: the
  // lowest position holding a mesh dim that dst does not hold there.
  int diverge[kMaxTensorDims];
  for (int d = 0; d < kMaxTensorDims; ++d) diverge[d] = kMaxMeshDims;
  for (int m = 0; m < ndim; ++m) {
    const Placement p = state.placement(m);
    if (!p.is_shard()) continue;
    const int pos = state.OrderPosition(m);
    if ((p != dst_.placement(m) || pos != dst_.OrderPosition(m)) && pos < diverge[p.dim()]) {
      diverge[p.dim()] = pos;
    }
  }
  // Summed in mesh dim order, so that adding a mesh dim never lowers the sum.
  double sum = 0;
  for (int m = 0; m < ndim; ++m) {
    const Placement p = state.placement(m);
    const bool must_leave = p.is_shard() ? state.OrderPosition(m) >= diverge[p.dim()]
                                         : p.is_partial() && p != dst_.placement(m);
    if (must_leave) sum += per_dim_[m];
  }
  return sum * kShrink;
}

}  // namespace reshard
