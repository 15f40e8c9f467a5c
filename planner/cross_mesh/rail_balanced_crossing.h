// A crossing spread over the receiving hosts' NICs (spec §14 "Rails",
// issue 43 C4). NCCL receives a send on the receiver's own NIC and, under
// PXN, sends it from the sending host's NIC of the receiver's local rank, so
// routes into a few ranks of a host use a few of its NICs while the others
// idle. Here what a rank receives from other hosts beyond its host's even
// share enters through the host's other ranks (its stagers) and is passed
// on to it over NVLink one round later.
//
//   std::optional<RouteRounds> spread =
//       SpreadOverRails(held, wanted, RouteSlices(held, wanted), participants,
//                       /*rails_per_host=*/8, /*chunks=*/2, max_routes);
//
// A stager forwards a box it neither holds nor wants: it keeps what an
// earlier round brought it aside until sent (ExchangeSlices,
// collectives/slice_exchange.h).
#ifndef RESHARD_PLANNER_CROSS_MESH_RAIL_BALANCED_CROSSING_H_
#define RESHARD_PLANNER_CROSS_MESH_RAIL_BALANCED_CROSSING_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "planner/cross_mesh/crossing_rounds.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// `routes` (one round over participants whose global ranks are `ranks`,
// rank g on host g / rails_per_host) spread over rails. Per host, each
// participant's share is the elements its host receives from other hosts
// over its participants, rounded up. A host is spread when one of its
// participants receives more than 9/8 of its share (the forward costs an
// NVLink hop, about 1/7 of a NIC's time per byte: less cannot pay). There,
// each route into a participant over its share is cut along its longest
// dim: rows up to the share go direct, the rest in runs to the host's
// participants below their share (in index order, each up to its share)
// that neither hold nor want any of the route's box (`held`, `wanted`:
// each participant's blocks), direct where none may.
// Every part is cut again into `chunks` (PartsOf): part c of a direct part
// in round c; of a staged part, sender to stager in round c and stager to
// receiver in round c + 1. Every other route is cut into `chunks` parts,
// part c in round c; local copies stay whole in round 0. Sorted as
// SortedByRound. None when nothing is staged, or when the routes could be
// more than `max_routes` (counted before any is made).
std::optional<RouteRounds> SpreadOverRails(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                           absl::Span<const SliceRoute> routes,
                                           absl::Span<const int64_t> ranks, int64_t rails_per_host,
                                           int64_t chunks, int64_t max_routes);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_RAIL_BALANCED_CROSSING_H_
