// NativeLeaveSetGraph: the native bound's abstract graph (spec §5.2 item 2,
// "abstract bound"), for a model with group bounds (cost_model.h,
// group_blocks: nccl and alpha-beta), over a state's shard set and leave set
// (leave_set_abstraction.h) as LeaveSetGraph's, but its edges are native
// steps (spec §4.2): a
// collective or a permute on any group of mesh dims, priced by
// GroupLowerBoundAt at its source's shard set, whole (no share of a call
// per mesh dim), a local step (chunk, partition) by LocalLowerBoundAt at the
// shard set after it (where dst holds a Partial, an R counts as must-leave:
// it must still be partitioned), and the goal exchange, which leads to dst, priced by
// ExchangeLowerBoundAt at the least its busiest member receives
// (ShardSetBlocks: GoalReceipts, and MovedShardReceipts where a Shard must
// leave). A native step changes only its group's bits of both masks, so
// every step pays for one abstract edge.
//
//   NativeLeaveSetGraph graph(dst, model);  // 4^ndim abstract states, ndim <= kMaxDims
//   graph.ToGo(shard_set, leave_set)        // <= the cost of any native path to dst
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_NATIVE_LEAVE_SET_GRAPH_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_NATIVE_LEAVE_SET_GRAPH_H_

#include "planner/costs/bounds/leave_set_abstraction.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"

namespace reshard {

// Each abstract state has an edge per group and kind whose members it fits.
class NativeLeaveSetGraph : public LeaveSetAbstraction {
 public:
  // Requires dst.ndim() <= kMaxDims and model.group_blocks() != nullptr.
  NativeLeaveSetGraph(const DistState& dst, const BoundCostModel& model);

  // The price of the abstract edge that `step` (not an exchange) pays for,
  // from a state of shard set `shard_set` to `after`: a lower bound on its
  // StepCost, bit for bit, in a few loads (the search asks it per edge). An
  // exchange gets 0 (its model's DeferredCostBound is the cheap bound there).
  double StepPrice(unsigned shard_set, const Step& step, const DistState& after) const {
    const unsigned g = step.group.bits();
    switch (step.kind) {
      case StepKind::kAllGather:
        return price_[Slot(kGather, g, shard_set)];
      case StepKind::kAllReduce:
        return price_[Slot(kReduce, g, shard_set)];
      case StepKind::kAllToAll:
      case StepKind::kPermute:
        return price_[Slot(kShuffle, g, shard_set)];
      case StepKind::kReduceScatter:
        return price_[Slot(kScatter, g, shard_set)];
      case StepKind::kChunk:
      case StepKind::kPartition:
        return price_[kLocalSlot + after.ShardSet()];
      case StepKind::kExchange:
        return 0;
    }
    return 0;
  }

 private:
  static constexpr int kSets = 1 << kMaxDims;
  // The kinds of edge, by what they do to their group's mesh dims.
  enum Move {
    kGather,   // all_gather: Shard -> R
    kReduce,   // all_reduce: Partial -> R
    kShuffle,  // all_to_all or permute: Shard -> Shard
    kScatter,  // reduce_scatter: Partial -> Shard
    kMoves
  };
  // Slots of price_: [move][group][source shard set] flat, then (the last
  // kSets) a local step's by the shard set after it.
  static constexpr unsigned Slot(Move move, unsigned group, unsigned shard_set) {
    return (move * kSets + group) * kSets + shard_set;
  }
  static constexpr unsigned kLocalSlot = kMoves * kSets * kSets;
  static constexpr unsigned kSlots = kLocalSlot + kSets;
  // Whether any real state maps to abstract state x (the .cc says which do not).
  bool Reachable(unsigned x) const;
  void FillPrices(const BoundCostModel& model);
  // Every abstract state's goal exchange to dst, if it may take one: its
  // to_go_ before the search.
  void FillExchanges(const DistState& dst, const BoundCostModel& model);
  // Calls edge(x, slot) for every abstract edge x -> y, priced at
  // price_[slot] (listed once per thread and masks: AbstractEdgeCache).
  template <typename Edge>
  void ForEachEdgeInto(unsigned y, Edge edge) const;
  // A label-correcting search on the reversed edges (as LeaveSetGraph's).
  void FillToGo();

  unsigned all_ = 0;  // every mesh dim
  // By slot: [move][group][source shard set], only the sets a move may
  // start from; then LocalLowerBoundAt by the shard set after the step.
  double price_[kSlots] = {};
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_NATIVE_LEAVE_SET_GRAPH_H_
