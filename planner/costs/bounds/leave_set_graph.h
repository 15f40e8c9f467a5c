// LeaveSetGraph: the compat bound's abstract graph (spec §5.1 item 1,
// "abstract bound") over a state's shard set and leave set
// (leave_set_abstraction.h). Each compat step (spec §4) acts on one mesh dim
// k and changes only k's bits of both masks, so it maps to an abstract edge
// between the two states' masks, priced by BoundCostModel::LowerBoundAt on
// the step's source shard set, which is at most the step's price.
//
// It sees what the must-leave sums cannot: every collective's bytes at the
// shard set it runs on (an all_to_all or a reduce_scatter before a gather
// moves more bytes than after a chunk), and that a plan may shard over one
// mesh dim first to move fewer bytes over another.
//
//   LeaveSetGraph graph(dst, model);       // 4^ndim abstract states, ndim <= kMaxDims
//   graph.ToGo(shard_set, leave_set)       // <= the cost of any path to dst
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_GRAPH_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_GRAPH_H_

#include <cstdint>

#include "planner/costs/bounds/leave_set_abstraction.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"

namespace reshard {

class LeaveSetGraph : public LeaveSetAbstraction {
 public:
  // Requires dst.ndim() <= kMaxDims.
  LeaveSetGraph(const DistState& dst, const BoundCostModel& model);

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

  // A fixed array, as to_go_: built without allocating.
  Prices prices_[(1 << kMaxDims) * kMaxDims];  // [shard_set * ndim + mesh_dim]
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_LEAVE_SET_GRAPH_H_
