// The least data a rank must receive in a redistribution, whatever the plan:
// the part of its destination block it does not already hold. `reshard
// bench` reports it beside the bytes each plan moves.
//
//   ReceiveBound b = ReceiveLowerBound(src, dst);
//   b.max_bytes   // the largest over ranks
//
// Per rank, with S and D its blocks of the global tensor in src and dst
// (RegionOf, harness/ground_truth.h: boxes, one interval per tensor
// dim):
//   |D| - |D ∩ S|   elements, times the item size;
//   |D|             when src has a Partial mesh dim (the rank's values are
//                   not the tensor's: every element of D needs the others'
//                   contributions, reduced or not);
//   0               when dst has a Partial mesh dim (any values that reduce
//                   right will do, e.g. the rank's own data and zeros).
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
