// A fan-out crossing relayed by the destination's replicas (spec §14
// "Relaying"): where several destination ranks want the same piece, its
// holder sends it into them once, cut among those that hold nothing of the
// source (the relays), and each relay passes its part on to the piece's
// other receivers one round later. Cut finer, the parts pipeline: round r
// carries the holders' parts r and the relays' parts r - 1.
//
//   std::optional<RouteRounds> relayed =
//       RelayThroughReplicas(held, RouteSlices(held, wanted), 4, kMaxCrossingSlices);
//
// A route may so be sent by a participant that does not hold its box: it
// lies in the sender's wanted box, received in an earlier round
// (ExchangeSlices, collectives/slice_exchange.h, sends it from there).
#ifndef RESHARD_PLANNER_CROSS_MESH_RELAYED_CROSSING_H_
#define RESHARD_PLANNER_CROSS_MESH_RELAYED_CROSSING_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "planner/cross_mesh/crossing_rounds.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// `routes` (RouteSlices(held, wanted), one round) relayed: each piece (a
// box that two or more participants receive) with relays among its
// receivers (participants whose held box is empty) is cut into one share per
// relay and each share into `chunks` parts (PartsOf: along the longest dim,
// runs of rows as even as they go, fewer where the dim is shorter); part c
// of relay r's share goes from the sender §11.1 chose for r to r in round c,
// and from r to every other receiver of the piece in round c + 1. Every
// other route is cut into `chunks` parts, part c in round c. Local copies
// stay whole in round 0. Each participant receives exactly what `routes`
// give it. Sorted as SortedByRound; none when no piece has a relay, or
// when the routes could be more than `max_routes` (counted before any is
// made: relays * chunks * receivers per relayed piece, chunks per other
// route).
std::optional<RouteRounds> RelayThroughReplicas(absl::Span<const Box> held,
                                                absl::Span<const SliceRoute> routes, int64_t chunks,
                                                int64_t max_routes);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_RELAYED_CROSSING_H_
