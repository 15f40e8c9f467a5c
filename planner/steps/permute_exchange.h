// What a permute (spec §4.2, step.h StepKind::kPermute) moves for one rank.
//
// Before a permute, member j of its group holds the source block of the
// rank's logical tensor (spec §10): per tensor dim, NestedChunk of the
// logical extent over the group's splits in the state (GroupSplitsOf, after
// = false); after it, the target block, by the splits after the step. So
// member `me` sends member j the intersection of its source block with j's
// target block, and receives from j the intersection of j's source block
// with its own target block. A pure permutation of blocks moves each block
// once; a transpose (S(0)S(1) -> S(1)S(0)) moves pieces of every block.
//
//   PermuteExchange x = PermuteExchangeOf(state, step, mesh, logical, coordinate);
//   x.send[j]       // the box of this rank's source block going to member j
//   x.recv[j]       // the box of its target block coming from member j
//   x.source_shape, x.target_shape  // the blocks' shapes
//
// The one rule for a permute's data: the executor packs, exchanges
// (Communicator::AllToAllV) and places with it, BytesOfStep counts it.
#ifndef RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_
#define RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// A box: one Slice per tensor dim, relative to the block it is cut from.
using Box = std::vector<Slice>;
// Elements in a box (0 when any slice is empty).
int64_t BoxElements(const Box& box);

// Indexed by group member (DeviceMesh::GroupOf order); member `me` is this
// rank, whose send[me] and recv[me] hold the same elements (a local copy).
struct PermuteExchange {
  int64_t me = 0;
  std::vector<Box> send;  // boxes of the source block (shape: the rank's current shard)
  std::vector<Box> recv;  // boxes of the target block
  std::vector<int64_t> source_shape;  // this rank's block before the permute
  std::vector<int64_t> target_shape;  // and after it

  // Elements per member, for Communicator::AllToAllV.
  std::vector<int64_t> SendCounts() const;
  std::vector<int64_t> RecvCounts() const;
};

// The exchange of `step` (a legal permute from `state`, CheckStep) at the
// rank with `coordinate`, whose logical shape for the step is `logical`
// (LogicalShape, step_bytes.h).
PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step,
                                  const DeviceMesh& mesh, absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_
