#include "planner/costs/leave_set_graph.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "planner/costs/abstract_distances.h"

namespace reshard {

LeaveSetGraph::LeaveSetGraph(const DistState& dst, const BoundCostModel& model)
    : ndim_(dst.ndim()) {
  for (int m = 0; m < ndim_; ++m) {
    dst_shard_ |= dst.placement(m).is_shard() ? 1u << m : 0u;
    dst_partial_ |= dst.placement(m).is_partial() ? 1u << m : 0u;
  }
  FillPrices(model);
  FillToGo();
}

// Distances to dst's masks on the reversed edges (abstract_distances.h).
void LeaveSetGraph::FillToGo() {
  const unsigned states = 1u << (2 * ndim_);
  std::fill(to_go_, to_go_ + states, std::numeric_limits<double>::infinity());
  to_go_[dst_shard_] = 0;
  static thread_local AbstractEdgeCache cache;
  const AbstractEdges& edges = cache.Get(ndim_, dst_shard_, dst_partial_, [&] {
    return AbstractEdges(states, [&](unsigned y, auto edge) { ForEachEdgeInto(y, edge); });
  });
  FillAbstractDistances<kMaxStates>(states, to_go_, edges, price_);
}

// Only the kinds that can leave a mesh dim in that set: Shard steps where m
// is in it, the others where it is not (ForEachEdgeInto reads no other).
void LeaveSetGraph::FillPrices(const BoundCostModel& model) {
  for (unsigned set = 0; set < (1u << ndim_); ++set) {
    for (int m = 0; m < ndim_; ++m) {
      auto price = [&](Kind kind, StepKind step) {
        price_[Slot(set, m, kind)] = model.LowerBoundAt(set, step, m);
      };
      if (set & (1u << m)) {
        price(kAllToAll, StepKind::kAllToAll);
        price(kAllGather, StepKind::kAllGather);
      } else {
        price(kAllReduce, StepKind::kAllReduce);
        price(kReduceScatter, StepKind::kReduceScatter);
        price(kChunk, StepKind::kChunk);
        price(kPartition, StepKind::kPartition);
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
template <typename Edge>
void LeaveSetGraph::ForEachEdgeInto(unsigned y, Edge edge) const {
  const unsigned shard_set = y & ((1u << ndim_) - 1);
  for (int m = 0; m < ndim_; ++m) {
    const unsigned s = 1u << m;
    const unsigned l = s << ndim_;
    const bool dst_shard = (dst_shard_ & s) != 0;
    if (y & s) {
      if (!dst_shard && !(y & l)) continue;  // no state maps to y
      if (!(y & l)) edge(y | l, Slot(shard_set, m, kAllToAll));
      // Landing in the leave set where dst holds a Shard: the same step
      // landing out of it (y without l) is no dearer to finish from.
      if (dst_shard && (y & l)) continue;
      const unsigned x = (y ^ s) & ~l;
      const unsigned from = shard_set ^ s;
      edge(x, Slot(from, m, kChunk));
      edge(x | l, Slot(from, m, kReduceScatter));
      if (dst_partial_ & s) edge(x, Slot(from, m, kReduceScatter));
    } else if (!(y & l)) {
      const unsigned all_gather = Slot(shard_set | s, m, kAllGather);
      if (dst_shard) edge(y | s, all_gather);
      edge(y | s | l, all_gather);
      edge(y | l, Slot(shard_set, m, kAllReduce));
    } else {
      edge(y ^ l, Slot(shard_set, m, kPartition));
    }
  }
}

}  // namespace reshard
