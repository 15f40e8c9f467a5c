// The least data a rank must receive in a redistribution, whatever the plan:
// the part of its destination block it does not already hold. `reshard
// bench` reports it beside the bytes each plan moves.
//
//   ReceiveBound b = ReceiveLowerBound(src, dst);
//   b.max_bytes   // the largest over ranks
//
// Per group G of destination ranks whose values reduce to the tensor (the
// ranks that differ only on dst's Partial mesh dims; one rank without
// Partial), with D their destination block of the global tensor and the
// blocks S whose values G holds (RegionOf, harness/ground_truth.h: boxes):
//   missing = |D| - |D ∩ ∪S|   elements, times the item size;
// a source rank's block when it is in G, or with a Partial source the block
// of a source group (ranks differing only on src's Partial mesh dims) whose
// every addend is in G: one addend is not the tensor's value. G's ranks
// must receive `missing` together, so one of them at least missing / |G|
// (each may take a share: P(sum)R -> RP(sum) on 2x2 is half a block per
// rank), and total_bytes sums `missing` over the groups.
// A lower bound for every plan: data a rank does not hold has to arrive.
// Also for cross-mesh moves (ReceiveLowerBoundAcross).
#ifndef RESHARD_HARNESS_RECEIVE_BOUND_H_
#define RESHARD_HARNESS_RECEIVE_BOUND_H_

#include <cstdint>
#include <vector>

#include "planner/layout/dist_spec.h"

namespace reshard {

struct ReceiveBound {
  int64_t max_bytes = 0;    // the largest over ranks
  int64_t total_bytes = 0;  // summed over ranks
};

// src and dst must share mesh, shape and dtype.
ReceiveBound ReceiveLowerBound(const DistSpec& src, const DistSpec& dst);

// The same rule for a cross-mesh move (spec §14): src on its mesh placed on
// global ranks `src_ranks`, dst on `dst_ranks` (full lists, row-major); a
// destination rank holds S only when it is also a source rank, a rank that
// is only a source must receive nothing. ReceiveLowerBound is this with
// both lists 0 .. n - 1.
ReceiveBound ReceiveLowerBoundAcross(const DistSpec& src, const DistSpec& dst,
                                     const std::vector<int64_t>& src_ranks,
                                     const std::vector<int64_t>& dst_ranks);

}  // namespace reshard

#endif  // RESHARD_HARNESS_RECEIVE_BOUND_H_
