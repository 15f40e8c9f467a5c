#include "planner/costs/bounds/native_leave_set_graph.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "planner/costs/bounds/abstract_distances.h"
#include "planner/costs/bounds/shard_set_blocks.h"

namespace reshard {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

NativeLeaveSetGraph::NativeLeaveSetGraph(const DistState& dst, const BoundCostModel& model)
    : LeaveSetAbstraction(dst), all_((1u << dst.ndim()) - 1) {
  FillPrices(model);
  FillExchanges(dst, model);
  FillToGo();
}

// A Shard that need not leave sits where dst holds one (the must-leave rule
// of remaining_cost_bound.h), and every edge lands a Shard with l = 1
// wherever dst holds none (ForEachEdgeInto): no real state maps to a state
// with (s = 1, l = 0) on any other mesh dim, and no edge from a state that
// one maps to leads there. The fill leaves those out (infinite); the others'
// distances are the same, since no path of theirs passes through one.
bool NativeLeaveSetGraph::Reachable(unsigned x) const {
  return ((x & all_) & ~(x >> ndim_) & ~dst_shard_) == 0;
}

// Only the shard sets a move may start from: a gather or a shuffle from a
// set holding its group, a reduce or a scatter from one holding none of it.
// A shuffle is an all_to_all or, on two or more mesh dims, a permute.
void NativeLeaveSetGraph::FillPrices(const BoundCostModel& model) {
  for (unsigned set = 0; set <= all_; ++set) {
    price_[kLocalSlot + set] = model.LocalLowerBoundAt(set);
  }
  for (unsigned g = 1; g <= all_; ++g) {
    const MeshDimSet group = MeshDimSet::FromBits(static_cast<uint8_t>(g));
    for (unsigned set = 0; set <= all_; ++set) {
      auto at = [&](StepKind kind) { return model.GroupLowerBoundAt(set, kind, group); };
      auto price = [&](Move move) -> double& { return price_[Slot(move, g, set)]; };
      if ((set & g) == g) {
        price(kGather) = at(StepKind::kAllGather);
        price(kShuffle) = group.size() >= 2
                              ? std::min(at(StepKind::kAllToAll), at(StepKind::kPermute))
                              : at(StepKind::kAllToAll);
      } else if ((set & g) == 0) {
        price(kReduce) = at(StepKind::kAllReduce);
        price(kScatter) = at(StepKind::kReduceScatter);
      }
    }
  }
}

// The goal exchange (spec §4.2 edge 13) moves Shards and Replicates only,
// and every mesh dim outside its group already holds dst's placement: from
// a state with no Partial to leave, on any group holding every mesh dim
// whose masks differ from dst's and no Partial of dst's.
void NativeLeaveSetGraph::FillExchanges(const DistState& dst, const BoundCostModel& model) {
  const unsigned movable = all_ & ~dst_partial_;
  // The least each group's busiest member receives, priced by the model.
  const ShardSetBlocks& blocks = *model.group_blocks();
  auto price = [&](const int64_t* receipts, double* by_group) {
    for (unsigned g = 1; g <= all_; ++g) {
      by_group[g] =
          model.ExchangeLowerBoundAt(MeshDimSet::FromBits(static_cast<uint8_t>(g)), receipts[g]);
    }
  };
  int64_t receipts[kSets][kSets];  // [shard set][group]
  blocks.GoalReceipts(dst, receipts);
  double exchange[kSets][kSets];  // [shard set][group]
  for (unsigned set = 0; set <= all_; ++set) price(receipts[set], exchange[set]);
  double moved[kMaxDims][kSets];  // [Shard that must leave][group]
  for (int m = 0; m < ndim_; ++m) {
    blocks.MovedShardReceipts(dst, m, receipts[0]);
    price(receipts[0], moved[m]);
  }
  const unsigned states = num_states();
  for (unsigned x = 0; x < states; ++x) {
    const unsigned shard = x & all_;
    const unsigned leave = x >> ndim_;
    const unsigned differs = (shard ^ dst_shard_) | leave;
    to_go_[x] = differs == 0 ? 0 : kInfinity;
    if (differs == 0 || !Reachable(x) || (leave & ~shard) != 0 || (differs & ~movable) != 0) {
      continue;
    }
    ForEachSubset(movable & ~differs, [&](unsigned more) {
      const unsigned g = differs | more;
      double price = exchange[shard][g];
      // Each is a lower bound on the exchange's price: so is the larger.
      for (unsigned left = leave & shard; left != 0; left &= left - 1) {
        price = std::max(price, moved[__builtin_ctz(left)][g]);
      }
      to_go_[x] = std::min(to_go_[x], price);
    });
  }
}

void NativeLeaveSetGraph::FillToGo() {
  static thread_local AbstractEdgeCache cache;
  const unsigned states = num_states();
  const AbstractEdges& edges = cache.Get(ndim_, dst_shard_, dst_partial_, [&] {
    return AbstractEdges(states, [&](unsigned y, auto edge) {
      if (!Reachable(y)) return;
      ForEachEdgeInto(y, [&](unsigned x, unsigned slot) {
        if (x != y && Reachable(x)) edge(x, slot);
      });
    });
  });
  FillAbstractDistances<kMaxStates>(states, to_go_, [&](unsigned y, auto relax) {
    for (const AbstractEdges::Edge* e = edges.begin(y); e != edges.end(y); ++e) {
      relax(e->from, price_[e->slot]);
    }
  });
}

// A mesh dim's masks: a Shard (s = 1) that must leave (l = 1) or not; a
// Partial that must leave (s = 0, l = 1); an R or a Partial dst holds
// (s = 0, l = 0) -- except where dst holds a Partial (dst_partial_): there
// R is (s = 0, l = 1) too, since it must still be partitioned, and (s = 0,
// l = 0) is dst's Partial alone. A step landing a Shard lands it with l = 1
// exactly where dst holds no Shard: where dst holds one, the state with
// l = 0 is no farther from dst's masks than the one with l = 1 (every edge
// out of the one leaves the other at the same price, and dst's masks need
// l = 0 there), so the edge into it bounds both. Edges into y, from x, on
// group g (every member as the move needs; other mesh dims as in y):
//   g's members R in y: all_gather from Shards (l either), and all_reduce
//     from Partials (l either);
//   g's members landed Shards in y: a shuffle from Shards, a reduce_scatter
//     from Partials, and on one mesh dim a chunk from R (local);
//   one mesh dim, a Partial in y: partition from R (local).
// Local steps are priced by LocalLowerBoundAt of y's shard set. Abstract
// states no real state maps to get edges too (they only lower distances),
// but FillToGo relaxes none into a state that is not Reachable.
template <typename Edge>
void NativeLeaveSetGraph::ForEachEdgeInto(unsigned y, Edge edge) const {
  const unsigned shard = y & all_;
  const unsigned leave = y >> ndim_;
  const unsigned landed_leave = all_ & ~dst_shard_;
  const unsigned local = kLocalSlot + shard;
  for (unsigned g = 1; g <= all_; ++g) {
    const bool single = (g & (g - 1)) == 0;
    const unsigned rest = leave & ~g;
    if ((shard & g) == 0 && (leave & g) == (g & dst_partial_)) {  // g's members R
      const unsigned gather = Slot(kGather, g, shard | g);
      const unsigned reduce = Slot(kReduce, g, shard);
      ForEachSubset(g, [&](unsigned sub) {
        edge((shard | g) | ((rest | sub) << ndim_), gather);
        edge(shard | ((rest | sub) << ndim_), reduce);
      });
    }
    if ((shard & g) == g && (leave & g) == (g & landed_leave)) {
      const unsigned from = shard & ~g;
      const unsigned shuffle = Slot(kShuffle, g, shard);
      const unsigned scatter = Slot(kScatter, g, from);
      ForEachSubset(g, [&](unsigned sub) {
        edge(shard | ((rest | sub) << ndim_), shuffle);
        edge(from | ((rest | sub) << ndim_), scatter);
      });
      if (single) edge(from | ((rest | (g & dst_partial_)) << ndim_), local);
    }
    if (single && (shard & g) == 0) {
      // A Partial in y: dst's (from an R that l = 1 marks), or another.
      if ((g & dst_partial_) != 0 && (leave & g) == 0) edge(y | (g << ndim_), local);
      if ((g & dst_partial_) == 0 && (leave & g) != 0) edge(y ^ (g << ndim_), local);
    }
  }
}

}  // namespace reshard
