// RemainingCostBound: a lower bound on the cost still to pay from a state to
// the destination, for the pruned graph search (spec §5.1).
//
// A mesh dim *must leave* its placement when no path can keep it:
//   * a Partial whose destination differs (P -> R or P -> S communicate);
//   * a Shard at or above the first position where its tensor dim's order
//     differs from the destination's order: orders are stacks (spec §4), so
//     everything from that position up must be popped, by all_gather or
//     all_to_all.
// Each such mesh dim needs its own communicating steps, at least
//   Shard, destination S: all_to_all or all_gather (then a free chunk)
//   Shard, destination R or P: an all_gather (the only way out of Shard)
//   Partial, destination S: reduce_scatter or all_reduce (then a chunk)
//   Partial, destination R or P: all_reduce, or reduce_scatter + all_gather
//   compat, a Shard whose destination is a Shard of the same tensor dim (only
//   its position differs; kShardReturns): it leaves and comes back, by two
//   all_to_alls or an all_gather (then a chunk)
// priced by BoundCostModel::LowerBound. The bound is their sum, shrunk by a
// millionth so that rounding cannot break its consistency.
//
//   RemainingCostBound bound(dst, model);
//   bound(state)   // <= the cost of any path from state to dst
//
// It is consistent (h(u) <= w(u, v) + h(v) for every edge): a step changes
// one mesh dim's must-leave status, a local step only from "no" to "yes".
//
// On the native graph (spec §4.2, §5.2) a step may move several mesh dims
// at once, so the bound there asks more of the model (cost_model.h): a
// collective on a group costs at least the sum of its members'
// LowerBound, a permute at least their largest. Permutes are the only steps
// that move a Shard to a Shard without moving it out of Shard, so the Shard
// mesh dims whose destination is a Shard contribute only their largest
// minimum (one permute may fix all of them); every other must-leave mesh dim
// is summed as above. An exchange (spec §4.2 case 13) may fix every
// must-leave Shard at once, whatever its destination, so the native bound is
// the smaller of that sum and a second one: over the must-leave Partials the
// sum of min(reduce_scatter, all_reduce) (each must take one, and an
// exchange may do the rest), plus the largest LowerBound(kExchange, m) over
// the must-leave Shards. The second is consistent too: a collective on a
// group of Partials costs at least the sum of its members' bounds, any
// other communicating step at least each of its members' exchange bound
// (cost_model.h), and the smaller of two consistent bounds is consistent.
//
// A model with a bytes bound (cost_model.h, e.g. pytorch's: an all_gather
// pays for the bytes it gathers) gives a second bound of the same shape: the
// must-leave sum of its PotentialLowerBound, plus the cheapest path from the
// state's shard set to dst's in the model's abstract graph (mesh dims join
// the set for free, leave it for GatherBytes), computed for every shard set
// once per destination. Each step pays its share of both terms (the model's
// contract), so that bound is consistent too, and so is the larger of the
// two, which operator() takes before the exchange bound's minimum. It is what makes the bound see
// bytes: on large meshes LowerBound's smallest b is tiny, while a plan that
// must gather a tensor pays for every byte of it (spec §5.1).
//
// On the native graph of a mesh of up to NativeLeaveSetGraph::kMaxDims
// dims, a model with group bounds (cost_model.h: nccl, alpha-beta) gets one abstract
// graph over (shard set, must-leave set) whose edges are native steps,
// each priced whole at its group (native_leave_set_graph.h): a state's
// bound is one table entry.
//
// On the compat graph of a mesh of up to LeaveSetGraph::kMaxDims dims, a
// model with a bytes bound gets one abstract graph over (shard set,
// must-leave set) instead of both sums (leave_set_graph.h), priced by
// LowerBoundAt: it bounds every step as the sums do and more tightly (each
// must-leave mesh dim's step at the bytes of the shard set it runs on), and
// a state's bound is one table entry, or the must-leave sum where that is
// larger (a Shard that must come back to its tensor dim, which the graph
// does not tell apart). Where prices do not depend on the shard set the
// graph's mesh dims are independent and its distance is the must-leave sum
// itself, so the other models keep the sum (no graph to build).
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_REMAINING_COST_BOUND_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_REMAINING_COST_BOUND_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "mesh/device_mesh.h"
#include "planner/costs/bounds/leave_set_graph.h"
#include "planner/costs/bounds/native_leave_set_graph.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"

namespace reshard {

class RemainingCostBound {
 public:
  enum class Graph { kCompat, kNative };
  RemainingCostBound(const DistState& dst, const BoundCostModel& model,
                     Graph graph = Graph::kCompat);

  // False when the model offers no bound (every CommunicationLowerBound is
  // 0): the bound is then 0 everywhere and pruning by it is pointless.
  bool useful() const { return useful_; }

  double operator()(const DistState& state) const;

  // A lower bound on StepCost(from, step), bit for bit, from the prices
  // this bound is built on (the native abstract graph's; 0 without one or
  // for an exchange): a few loads, for searches that skip edges which
  // cannot beat a path already found (state_search.h). `from_shard_set` is
  // from.ShardSet(), `to` the state after the step.
  double StepLowerBound(unsigned from_shard_set, const Step& step, const DistState& to) const {
    if (!native_graph_.has_value()) return 0;
    return native_graph_->StepPrice(from_shard_set, step, to);
  }

 private:
  // What leaving costs at least, by a mesh dim's case: 0 when it need not
  // leave, kShardLeaves or kPartialLeaves (what it holds now); compat only,
  // kShardReturns: a Shard that must leave the tensor dim dst shards it on.
  enum Case : uint8_t { kStays = 0, kShardLeaves = 1, kPartialLeaves = 2, kShardReturns = 3 };
  static constexpr int kCases = 4;
  // Fills table[m] from `lower_bound` (kind, mesh dim), as the header says.
  template <typename LowerBoundFn>
  void FillLeaves(const DistState& dst, LowerBoundFn lower_bound, double (*table)[kCases]);
  // A state's mesh dims by case, and its shard set (the bytes bound's key).
  struct Leaving {
    int ndim = 0;
    Case of[kMaxMeshDims];  // of[0, ndim) set by LeavingOf
    unsigned shard_set = 0;
    unsigned leave_set = 0;  // the mesh dims that must leave
  };
  Leaving LeavingOf(const DistState& state) const;
  // The must-leave rule itself, on every cell at once: bit m of each mask is
  // mesh dim m's.
  struct Masks {
    unsigned shard_set;
    unsigned shard_leaves;
    unsigned partial_leaves;
    unsigned shard_returns;  // compat: the kShardReturns among shard_leaves
    unsigned same;           // the cells equal to dst's
  };
  Masks MasksOf(const DistState& state) const;
  // The must-leave sum of `table` (native: with one permute's share, header).
  double MustLeaveSum(const Leaving& leaving, const double (*table)[kCases]) const;
  // Native: the exchange bound (header), over the must-leave Partials and Shards.
  double ExchangeBound(const Leaving& leaving) const;
  // dst's cell (dist_state.h) per mesh dim: its placement and order position.
  unsigned dst_cell_[kMaxMeshDims] = {};
  uint64_t dst_bits_ = 0;     // dst's cells, packed (DistState::bits)
  unsigned dst_partial_ = 0;  // the mesh dims where dst holds a Partial
  double leaves_[kMaxMeshDims][kCases] = {};
  double reduced_[kMaxMeshDims] = {};    // min(reduce_scatter, all_reduce) bounds
  double exchanged_[kMaxMeshDims] = {};  // LowerBound(kExchange, m), native only
  // Fills bytes_to_go_ (the header's abstract graph, a Dijkstra towards dst).
  void FillBytesToGo(const DistState& dst, const BoundCostModel& model);
  // The bytes bound's table, and per shard set its cheapest abstract path to
  // dst's; empty without a bytes bound.
  double potential_leaves_[kMaxMeshDims][kCases] = {};
  std::vector<double> bytes_to_go_;
  // Compat, ndim <= LeaveSetGraph::kMaxDims: what operator() reads instead.
  std::optional<LeaveSetGraph> leave_set_graph_;
  // Native, a model with group bounds, ndim <= NativeLeaveSetGraph::kMaxDims: the same.
  std::optional<NativeLeaveSetGraph> native_graph_;
  bool native_;
  bool useful_ = false;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_REMAINING_COST_BOUND_H_
