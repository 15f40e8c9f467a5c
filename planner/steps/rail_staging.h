// A permute or an exchange staged over rails (spec §11.2, issue 43 C2, C6).
// Under NCCL's PXN a send to a GPU of local rank k leaves its host through
// NIC k (rail k) and arrives on the receiver's NIC k, so an exchange whose
// routes across hosts share their receivers' local ranks loads a few NICs:
// the transpose S(0)S(1) -> S(1)S(0) on 8 hosts of 8 GPUs has every rank of
// host i send to local rank i of the other hosts, 7 blocks through NIC i.
// Staged, a route across hosts may go instead to a *stager* on its
// receiver's host, a GPU of another rail, which passes it on over NVLink one
// round later; the rails are chosen so that every NIC sends and receives
// about alike.
//
//   std::optional<RouteRounds> staged =
//       StageOverRails(held, wanted, RouteSlices(held, wanted), ranks, 8, /*chunks=*/2);
//   StagedExchange x = StagedExchangeOf(state, step, mesh, logical, coordinate);
//
// A stager keeps what it passes on aside until it sends it (ExchangeSlices,
// collectives/slice_exchange.h), as a crossing's stagers do (spec §14 "Rails").
#ifndef RESHARD_PLANNER_STEPS_RAIL_STAGING_H_
#define RESHARD_PLANNER_STEPS_RAIL_STAGING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/link_load.h"
#include "planner/steps/route_rounds.h"
#include "planner/steps/slice_routes.h"
#include "planner/steps/step.h"

namespace reshard {

// The chunks a step's staged forms are cut into, each an edge of the native
// search (spec §11.2): one. A stager's NVLink pass costs about 1/7 of its
// NIC time, so pipelining it pays little (the C6 transpose of 64 MiB
// blocks: 808.4 us in 2 chunks against 831.9 in one, 3%), while every form
// the search prices routes and stages the whole group (on 4-dim meshes of
// up to 144 ranks, 2 forms took planning from 3.4 to 33 s).
inline constexpr int32_t kStagingChunks[] = {1};

// `routes` (one exchange among participants whose global ranks are `ranks`,
// rank g on host g / rails_per_host, on rail g % rails_per_host) with a rail
// for each route across hosts. Routes go largest first (ties in order). A
// route from host A to host B enters B through its receiver (direct) or a
// stager: a participant of B that neither holds nor wants any of the
// route's box and does not stage that box already. Each candidate costs the
// larger of its rail's load sending from A and its load receiving in B, the
// route added; the least wins, ties going to rail (A + B + t) mod
// rails_per_host first and on in rail order, t the routes from A to B
// placed before (a Latin square: one host's routes to the others leave
// through distinct NICs). Then each staged route goes back to its receiver
// where that takes no load past the largest. Nothing is staged where the
// routes' NicLoad (link_load.h) is not MayStage(): staging could only add
// rounds there.
// Every route is cut into `chunks` (PartsOf): part c of a direct route in
// round c; of a staged one, sender to stager in round c and stager to
// receiver in round c + 1; local copies whole in round 0. Sorted as
// SortedByRound. None when no route is staged.
std::optional<RouteRounds> StageOverRails(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                          absl::Span<const SliceRoute> routes,
                                          absl::Span<const int64_t> ranks, int64_t rails_per_host,
                                          int64_t chunks);

// A staged step's exchange (step.staging.staged()) in the group of the rank
// at `coordinate`, at the logical shape `logical` (every member's).
struct StagedExchange {
  int64_t me = 0;                 // this rank's index in its group
  std::vector<int64_t> ranks;     // the group's global ranks, in group order
  std::vector<Box> held, wanted;  // every member's blocks (GroupBlocksOf)
  // The step's routes staged by StageOverRails on `ranks`, or direct in one
  // round where none is staged (staged false).
  RouteRounds rounds;
  bool staged = false;
};
StagedExchange StagedExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                absl::Span<const int64_t> logical,
                                absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_RAIL_STAGING_H_
