// LeaveSetGraph: the compat bound's abstract graph (spec §5.1 item 1,
// "abstract bound"). A compat state is abstracted to two masks over its mesh
// dims: its shard set (the Shard mesh dims: what a rank's bytes, and so every
// step's price, depend on) and its leave set (the mesh dims that must leave
// their placement, remaining_cost_bound.h). Each compat step (spec §4) acts
// on one mesh dim k and changes only k's bits of both masks, so it maps to
// an abstract edge between the two states' masks, priced by
// BoundCostModel::LowerBoundAt on the step's source shard set, which is at
// most the step's price. The cheapest abstract path from a state's masks to
// dst's (its shard set, nothing left to leave) is therefore a consistent
// lower bound on the rest of any path: it is a shortest-path distance, and
// every real step pays for one abstract edge.
//
// It sees what the must-leave sums cannot: every collective's bytes at the
// shard set it runs on (an all_to_all or a reduce_scatter before a gather
// moves more bytes than after a chunk), and that a plan may shard over one
// mesh dim first to move fewer bytes over another.
//
//   LeaveSetGraph graph(dst, model);       // 4^ndim abstract states, ndim <= kMaxDims
//   graph.ToGo(shard_set, leave_set)       // <= the cost of any path to dst
#ifndef RESHARD_PLANNER_COSTS_LEAVE_SET_GRAPH_H_
#define RESHARD_PLANNER_COSTS_LEAVE_SET_GRAPH_H_

#include <cstdint>

#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"

namespace reshard {

class LeaveSetGraph {
 public:
  // The largest mesh rank it is built for: 4^4 = 256 abstract states, a few
  // microseconds per destination. Above it RemainingCostBound keeps its sums.
  static constexpr int kMaxDims = 4;
  static constexpr int kMaxStates = 1 << (2 * kMaxDims);

  // Requires dst.ndim() <= kMaxDims.
  LeaveSetGraph(const DistState& dst, const BoundCostModel& model);

  // The cheapest abstract path from (shard_set, leave_set) to dst's masks.
  double ToGo(unsigned shard_set, unsigned leave_set) const {
    return to_go_[shard_set | (leave_set << ndim_)];
  }

 private:
  // Prices of the compat kinds on one mesh dim, by source shard set.
  struct Prices {
    double all_to_all, all_gather, all_reduce, reduce_scatter, chunk, partition;
  };
  void FillPrices(const BoundCostModel& model);
  // Relaxes every abstract edge into state `y` (a step of the reversed search).
  template <typename Relax>
  void ForEachEdgeInto(unsigned y, Relax relax) const;
  // A label-correcting search from dst's masks on the reversed edges: to_go_ of every state.
  void FillToGo();

  int ndim_;
  unsigned dst_shard_ = 0;    // mesh dims where dst holds a Shard
  unsigned dst_partial_ = 0;  // ... a Partial
  // Fixed arrays: one graph per search, built without allocating.
  Prices prices_[(1 << kMaxDims) * kMaxDims];  // [shard_set * ndim + mesh_dim]
  double to_go_[kMaxStates];                   // [shard_set | leave_set << ndim]
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_LEAVE_SET_GRAPH_H_
