#include "planner/costs/bounds/leave_set_graph.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "planner/costs/bounds/abstract_distances.h"

namespace reshard {

LeaveSetGraph::LeaveSetGraph(const DistState& dst, const BoundCostModel& model)
    : LeaveSetAbstraction(dst) {
  FillPrices(model);
  FillToGo();
}

// Distances to dst's masks on the reversed edges (abstract_distances.h).
void LeaveSetGraph::FillToGo() {
  const unsigned states = num_states();
  std::fill(to_go_, to_go_ + states, std::numeric_limits<double>::infinity());
  to_go_[dst_shard_] = 0;
  FillAbstractDistances<kMaxStates>(states, to_go_,
                                    [this](unsigned y, auto relax) { ForEachEdgeInto(y, relax); });
}

// Only the kinds that can leave a mesh dim in that set: Shard steps where m
// is in it, the others where it is not (ForEachEdgeInto reads no other).
void LeaveSetGraph::FillPrices(const BoundCostModel& model) {
  for (unsigned set = 0; set < (1u << ndim_); ++set) {
    for (int m = 0; m < ndim_; ++m) {
      auto at = [&](StepKind kind) { return model.LowerBoundAt(set, kind, m); };
      Prices& prices = prices_[set * ndim_ + m];
      if (set & (1u << m)) {
        prices.all_to_all = at(StepKind::kAllToAll);
        prices.all_gather = at(StepKind::kAllGather);
      } else {
        prices.all_reduce = at(StepKind::kAllReduce);
        prices.reduce_scatter = at(StepKind::kReduceScatter);
        prices.chunk = at(StepKind::kChunk);
        prices.partition = at(StepKind::kPartition);
      }
    }
  }
}

// The compat steps on mesh dim m (spec §4) and what they do to m's bits
// (s: in the shard set, l: in the leave set). An R is never in the leave
// set; a Shard or a Partial lands in it unless dst holds one there too, and
// a Shard always does where dst holds none (so s = 1, l = 0 exists only
// where dst holds a Shard). Edges into y, from x, priced on x's shard set:
//   s = 1 in y: chunk from R, reduce_scatter from a Partial (x: s = 0), and
//     all_to_all from x = y with l = 1;
//   s = 0, l = 0 (an R, or a Partial dst holds): all_gather from a Shard,
//     all_reduce from a Partial that must leave;
//   s = 0, l = 1 (a Partial that must leave): partition from R.
// Left out, as they never shorten a path: a step landing a Shard in the
// leave set where dst holds a Shard (all_to_all, chunk, reduce_scatter):
// from s = 1, l = 1 every way on (all_to_all, all_gather) costs at least
// what the same step landing with l = 0 leaves to pay, and all_gather is an
// edge from both. Abstract states no real state maps to (a Partial dst
// holds where no step can make one) get edges too; they only lower
// distances.
template <typename Relax>
void LeaveSetGraph::ForEachEdgeInto(unsigned y, Relax relax) const {
  const unsigned shard_set = y & ((1u << ndim_) - 1);
  for (int m = 0; m < ndim_; ++m) {
    const unsigned s = 1u << m;
    const unsigned l = s << ndim_;
    const bool dst_shard = (dst_shard_ & s) != 0;
    if (y & s) {
      if (!dst_shard && !(y & l)) continue;  // no state maps to y
      if (!(y & l)) relax(y | l, prices_[shard_set * ndim_ + m].all_to_all);
      // Landing in the leave set where dst holds a Shard: the same step
      // landing out of it (y without l) is no dearer to finish from.
      if (dst_shard && (y & l)) continue;
      const unsigned x = (y ^ s) & ~l;
      const Prices& from = prices_[(shard_set ^ s) * ndim_ + m];
      relax(x, from.chunk);
      relax(x | l, from.reduce_scatter);
      if (dst_partial_ & s) relax(x, from.reduce_scatter);
    } else if (!(y & l)) {
      const double all_gather = prices_[(shard_set | s) * ndim_ + m].all_gather;
      if (dst_shard) relax(y | s, all_gather);
      relax(y | s | l, all_gather);
      relax(y | l, prices_[shard_set * ndim_ + m].all_reduce);
    } else {
      relax(y ^ l, prices_[shard_set * ndim_ + m].partition);
    }
  }
}

}  // namespace reshard
