// What a permute or an exchange (spec §4.2, §11.1; step.h StepKind::kPermute,
// kExchange) moves for one rank.
//
// Before the step, member j of its group holds the source block of the
// rank's logical tensor (spec §10): per tensor dim, NestedChunk of the
// logical extent over the group's splits in the state (GroupSplitsOf, after
// = false); after it, the target block, by the splits after the step. A
// group mesh dim that is Replicate before the step makes several members
// hold one source block (replicas). RouteSlices (slice_routes.h) says who
// sends what: every member receives the part of its target block it does
// not hold, each element from one holder, replicas balanced. A permute has
// no replicas: a pure permutation of blocks moves each block once; a
// transpose (S(0)S(1) -> S(1)S(0)) moves pieces of every block.
//
//   PermuteExchange x = PermuteExchangeOf(state, step, mesh, logical, coordinate);
//   x.send[j]       // the box of this rank's source block going to member j
//   x.recv[j]       // the box of its target block coming from member j
//   x.source_shape, x.target_shape  // the blocks' shapes
//
// The one rule for these steps' data: the executor packs, exchanges
// (Communicator::AllToAllV) and places with it, BytesOfStep counts it, the
// cost models price it (ExchangeLoadOf) and StepPeakBytes bounds its buffers.
#ifndef RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_
#define RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/link_load.h"
#include "planner/steps/slice_routes.h"
#include "planner/steps/step.h"

namespace reshard {

// Indexed by group member (DeviceMesh::GroupOf order); member `me` is this
// rank, whose send[me] and recv[me] hold the same elements (a local copy).
// Boxes are relative to this rank's source block (send) or target block
// (recv); empty boxes for members it exchanges nothing with.
struct PermuteExchange {
  int64_t me = 0;
  std::vector<Box> send;
  std::vector<Box> recv;
  std::vector<int64_t> source_shape;  // this rank's block before the step
  std::vector<int64_t> target_shape;  // and after it

  // Elements per member, for Communicator::AllToAllV.
  std::vector<int64_t> SendCounts() const;
  std::vector<int64_t> RecvCounts() const;
};

// The exchange of `step` (a legal permute or exchange from `state`,
// CheckStep) at the rank with `coordinate`, whose logical shape for the step
// is `logical` (LogicalShape, logical_shape.h).
PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                  absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate);

// Every member's source block (after = false) or target block (after =
// true) of the step, as boxes of the logical tensor `logical`, in group
// order: what RouteSlices routes.
std::vector<Box> GroupBlocksOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                               absl::Span<const int64_t> logical, bool after);

// The step's routes (RouteSlices of GroupBlocksOf) between two different
// members of the group of global rank 0 at `logical`, found from the
// blocks' grids without building a box, tallied per link (link_load.h) on
// hosts of `devices_per_host` ranks into `tally`, reset first: what
// pricing per link needs, its links' load and its NICs'.
void TallyExchangeAtOrigin(const DistState& state, const Step& step, const DeviceMesh& mesh,
                           absl::Span<const int64_t> logical, int64_t devices_per_host,
                           LinkLoadTally* tally);

// The busiest members of the step's group at the logical shape `logical`
// (every member of a group shares it), in elements and messages
// (slice_routes.h): what the cost models price and StepPeakBytes counts.
RouteLoad ExchangeLoadOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                         absl::Span<const int64_t> logical);

// ExchangeLoadOf at the logical shape of the rank at coordinate 0, the
// largest (chunks are ceil-first, spec §2): the load every cost model
// prices an exchange by (spec §6.2).
RouteLoad ExchangeLoadAtOrigin(const DistState& state, const Step& step, const DeviceMesh& mesh,
                               absl::Span<const int64_t> global_shape);

// What the group's first member (coordinate 0 on every group mesh dim)
// receives in the step at `logical`, found from its own blocks and the
// source slices alone, without routing: what deferred pricing bounds an
// exchange by (spec §5.2 item 7).
struct FirstMemberReceipt {
  // The part of its target block it does not hold (spec §11.1): at most
  // ExchangeLoadOf's max_received.
  int64_t elements = 0;
  // The distinct source blocks, other than its own, that meet its target
  // block: each is held by other members than it, one of which must send
  // it a message, so at most ExchangeLoadOf's max_messages.
  int64_t senders = 0;
};
FirstMemberReceipt FirstMemberReceiptOf(const DistState& state, const Step& step,
                                        const DeviceMesh& mesh, absl::Span<const int64_t> logical);

// FirstMemberReceiptOf's elements by where their holders are: on the first
// member's host only (so they come over NVLink), on other hosts only (over
// its NIC), or on both, in the group at coordinate 0 on hosts of
// `devices_per_host` ranks. From its own meetings, without routing: the
// nccl model's per-link bound on an exchange (spec §5.2 item 7).
ReceiptByPlace FirstMemberReceiptByHostOf(const DistState& state, const Step& step,
                                          const DeviceMesh& mesh, absl::Span<const int64_t> logical,
                                          int64_t devices_per_host);

// Lower bounds on ExchangeLoadOf's busiest members, found from every
// member's blocks in one pass, without routing (dearer than
// FirstMemberReceiptOf, far cheaper than routing): what the search bounds an
// exchange by before it prices it (spec §5.2 item 7). Each thread keeps the
// members' terms of every tensor dim it met, by mesh, group, splits and
// length, and multiplies them per exchange.
struct ExchangeLoadBound {
  // At most max(max_sent, max_received): the most any member lacks of its
  // target block, or the elements of the first member's block that other
  // members want, shared among its holders (one of them sends at least that
  // share).
  int64_t elements = 0;
  // At most max_messages: the most distinct source blocks, other than its
  // own, that meet one member's target block (it receives one message from
  // each), or the members wanting part of the first member's block, shared
  // among its holders.
  int64_t messages = 0;
};
ExchangeLoadBound ExchangeLoadBoundOf(const DistState& state, const Step& step,
                                      const DeviceMesh& mesh, absl::Span<const int64_t> logical);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_PERMUTE_EXCHANGE_H_
