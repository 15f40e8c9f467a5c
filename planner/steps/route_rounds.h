// Routes in rounds: one exchange's slice routes (slice_routes.h) cut into
// pieces and run as several AllToAllVs in order. What a cross-mesh crossing
// runs under a memory limit, relayed or spread over rails (spec §14), and a
// permute or exchange staged over rails (spec §11.2).
//
//   RouteRounds r = OneRound(RouteSlices(held, wanted));
//   AddRoute({sender, stager, part}, /*round=*/0, &r);   // r.rounds grows
//   RoundsPeakBytes(held, wanted, r.routes, r.round_of, r.rounds, itemsize);
#ifndef RESHARD_PLANNER_STEPS_ROUTE_ROUNDS_H_
#define RESHARD_PLANNER_STEPS_ROUTE_ROUNDS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// The chunks a relayed or rail-balanced crossing's parts are cut into, each
// tried by PlanCrossMesh: 1 + chunks rounds that pipeline (spec §14
// "Relaying", "Rails").
inline constexpr int64_t kPipelineChunks[] = {1, 2, 4, 8};

struct RouteRounds {
  // Pieces of the routes (a route whole where it fits), sorted by round,
  // then receiver, then sender; local copies whole, in round 0.
  std::vector<SliceRoute> routes;
  std::vector<int64_t> round_of;  // the round of each of `routes`
  int64_t rounds = 1;
};

// `routes` as one round, unsplit: the crossing without a limit.
RouteRounds OneRound(std::vector<SliceRoute> routes);

// `rounds` sorted by round, then receiver, then sender; pieces of one route
// keep their order (the executor packs and unpacks them alike).
RouteRounds SortedByRound(RouteRounds rounds);

// The routes of round `round` (round_of[k] is the round of routes[k]), in order.
std::vector<SliceRoute> RoutesOfRound(absl::Span<const SliceRoute> routes,
                                      absl::Span<const int64_t> round_of, int64_t round);

// Per participant, the bytes it sends plus receives over `routes` (local
// copies aside).
std::vector<int64_t> TrafficBytes(absl::Span<const SliceRoute> routes, size_t participants,
                                  int64_t itemsize);

// Per participant, its peak bytes in the crossing (spec §14 "Memory"):
// ExchangePeakBytes(held, wanted, the most it sends plus receives in one
// of `rounds` rounds, plus what it keeps aside then: boxes brought to it
// that it does not want, from the round that brings one through the last
// that sends it on, spec §14 "Rails"), local copies not passing through
// buffers.
std::vector<int64_t> RoundsPeakBytes(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                     absl::Span<const SliceRoute> routes,
                                     absl::Span<const int64_t> round_of, int64_t rounds,
                                     int64_t itemsize);

// The dim of `box` with the most rows, the first of equals: where relayed
// and rail-balanced crossings cut a route.
size_t LongestDim(const Box& box);

// `box` cut along its longest dim into `parts` runs of rows as even as they
// go (fewer when the dim is shorter): how relayed and rail-balanced
// crossings cut a route into pipelined parts.
std::vector<Box> PartsOf(const Box& box, int64_t parts);

// `route` added to `out` in round `round` (out->rounds grown to hold it).
void AddRoute(SliceRoute route, int64_t round, RouteRounds* out);

// `box` from `sender` to `receiver` cut into `chunks` parts (PartsOf),
// pipelined through `stager`: part c goes to the stager in round c and on
// to the receiver in round c + 1; with stager == receiver, part c goes
// straight there in round c. How rail-balanced crossings and steps staged
// over rails lay out their routes (spec §14 "Rails", §11.2).
void AddPartsThrough(int64_t sender, int64_t stager, int64_t receiver, const Box& box,
                     int64_t chunks, RouteRounds* out);

// Per participant, the elements of the routes it sends (sent) or receives,
// local copies not counted, times `itemsize`.
std::vector<int64_t> RouteBytes(absl::Span<const SliceRoute> routes, size_t participants,
                                int64_t itemsize, bool sent);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_ROUTE_ROUNDS_H_
