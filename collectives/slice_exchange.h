// One exchange of exact slices among participants (spec §11.1 routes, spec
// §14): each holds one box of a tensor and wants another, and one AllToAllV
// moves every route's box (participants that only send or only receive pass
// zero counts; a route to itself is a local copy). What a cross-mesh
// crossing runs, and each hop of the naive baseline (naive_plan.h).
//
//   // Every participant, with the same routes (RouteSlices(held, wanted)):
//   absl::StatusOr<LocalTensor> out =
//       ExchangeSlices(in, held[me], wanted[me], routes, me, dtype, comm, &stats);
#ifndef RESHARD_COLLECTIVES_SLICE_EXCHANGE_H_
#define RESHARD_COLLECTIVES_SLICE_EXCHANGE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/communicator.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dtype.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// Bytes a participant sent to and received from the others in its
// exchanges (local copies not counted), and what the steps before and after
// a crossing sent on their meshes (ExecutionStats::bytes_sent).
struct CrossingStats {
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int64_t steps_bytes_sent = 0;
};

// `in` holds box `held` (its shape); the result holds `wanted`. `routes`
// are all participants' (participant indices = comm's ranks on a 1-D mesh);
// `me` is comm.rank(). Adds this participant's bytes to *stats (may be
// null). Collective over comm.
absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           int64_t me, DType dtype, Communicator& comm,
                                           CrossingStats* stats);

// The same in `rounds` AllToAllVs (spec §14 "Memory") among the members of
// `group` (comm's mesh dims; participant i its member i, comm.mesh().GroupOf
// order): route k in round
// route_rounds[k] (0 <= it < rounds; empty: every route in round 0), the
// local copy first; each round's send and receive buffers are freed before
// the next. A route whose box lies outside `held` is sent from the result,
// where an earlier round brought it (a relay, spec §14 "Relaying"), or,
// outside `wanted` too, from a copy kept aside since the round that brought
// exactly that box (a stager, spec §14 "Rails"; freed after its last send);
// InvalidArgument when no round did.
absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           absl::Span<const int64_t> route_rounds, int64_t rounds,
                                           int64_t me, DType dtype, Communicator& comm,
                                           MeshDimSet group, CrossingStats* stats);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_SLICE_EXCHANGE_H_
