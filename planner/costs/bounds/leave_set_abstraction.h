// LeaveSetAbstraction: what the search bounds' two abstract graphs share
// (LeaveSetGraph for compat steps, NativeLeaveSetGraph for native ones). A
// state is abstracted to two masks over its mesh dims: its shard set (the
// Shard mesh dims: what a rank's bytes, and so every step's price, depend
// on) and its leave set (the mesh dims that must leave their placement,
// remaining_cost_bound.h), one abstract state shard_set | leave_set << ndim
// of 4^ndim. A graph fills to_go_, every abstract state's cheapest abstract
// path to dst's masks (abstract_distances.h), from its own edges: a
// consistent lower bound on the rest of any path, since every real step
// pays for one abstract edge.
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_ABSTRACTION_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_ABSTRACTION_H_

#include "planner/layout/dist_state.h"

namespace reshard {

class LeaveSetAbstraction {
 public:
  // The largest mesh rank a graph is built for: 4^4 = 256 abstract states,
  // a few microseconds per destination. Above it RemainingCostBound keeps
  // its sums.
  static constexpr int kMaxDims = 4;
  static constexpr int kMaxStates = 1 << (2 * kMaxDims);

  // The cheapest abstract path from (shard_set, leave_set) to dst's masks.
  double ToGo(unsigned shard_set, unsigned leave_set) const {
    return to_go_[shard_set | (leave_set << ndim_)];
  }

 protected:
  // Requires dst.ndim() <= kMaxDims.
  explicit LeaveSetAbstraction(const DistState& dst) : ndim_(dst.ndim()) {
    for (int m = 0; m < ndim_; ++m) {
      dst_shard_ |= dst.placement(m).is_shard() ? 1u << m : 0u;
      dst_partial_ |= dst.placement(m).is_partial() ? 1u << m : 0u;
    }
  }
  unsigned num_states() const { return 1u << (2 * ndim_); }

  int ndim_;
  unsigned dst_shard_ = 0;    // mesh dims where dst holds a Shard
  unsigned dst_partial_ = 0;  // ... a Partial
  // A fixed array: one graph per search, built without allocating.
  double to_go_[kMaxStates];  // [shard_set | leave_set << ndim]
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_ABSTRACTION_H_
