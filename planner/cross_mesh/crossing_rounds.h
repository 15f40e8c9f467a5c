// A cross-mesh crossing under a memory limit (spec §14 "Memory"): its
// routes (slice_routes.h) split into rounds, each one AllToAllV over the
// participants, so that no participant holds more than the limit at once.
//
//   absl::StatusOr<RouteRounds> r =
//       SplitIntoRounds(held, wanted, routes, participants, itemsize, max_memory, budget);
//   // r->routes: pieces of `routes`, r->round_of[k] the round of r->routes[k]
//
// A participant holds its source block (held) and its destination block
// (wanted) through the whole crossing, and in each round buffers for what it
// sends plus what it receives in that round: ExchangePeakBytes (step_memory.h,
// the rule of exchange steps, spec §12) with the round's traffic.
#ifndef RESHARD_PLANNER_CROSS_MESH_CROSSING_ROUNDS_H_
#define RESHARD_PLANNER_CROSS_MESH_CROSSING_ROUNDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/steps/route_rounds.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// The most rounds a crossing may take: each is a collective call over every
// participant, so a limit that needs more is refused (raise --max-memory).
inline constexpr int64_t kMaxCrossingRounds = 1024;

// The least limit under which the routes split into rounds: the largest
// over participants of its held and wanted blocks, plus one element in
// flight where it sends or receives anything.
int64_t LeastCrossingMemory(absl::Span<const Box> held, absl::Span<const Box> wanted,
                            absl::Span<const SliceRoute> routes, int64_t itemsize);

// No schedule has fewer rounds than this: per participant, what it sends
// plus receives over the room the limit leaves beside its blocks, rounded
// up (max_memory >= LeastCrossingMemory).
int64_t RoundsLowerBound(absl::Span<const Box> held, absl::Span<const Box> wanted,
                         absl::Span<const SliceRoute> routes, int64_t itemsize, int64_t max_memory);

// Spec §14 "Memory": `routes` (RouteSlices(held, wanted)) in one round when
// every participant's peak fits `max_memory`; otherwise every route cut into
// pieces that fit both its ends (SplitBox) and the pieces placed first-fit,
// largest first, in the earliest round where both ends still have room,
// tried again with smaller pieces (down to a quarter) while the rounds are
// over RoundsLowerBound, the fewest rounds kept.
// ResourceExhausted carrying PlanLimit::kMaxMemory ("max_memory: ...",
// naming the participant's global rank from `participants` and the least
// limit) when max_memory < LeastCrossingMemory, when the pieces would be
// more than `max_pieces`, or the rounds more than kMaxCrossingRounds.
absl::StatusOr<RouteRounds> SplitIntoRounds(absl::Span<const Box> held,
                                            absl::Span<const Box> wanted,
                                            std::vector<SliceRoute> routes,
                                            absl::Span<const int64_t> participants,
                                            int64_t itemsize, int64_t max_memory,
                                            int64_t max_pieces);

// `box` cut in row-major order into boxes of at most `max_elements` (>= 1)
// elements: the first tensor dim d whose trailing dims fit is cut into runs
// of as many rows as fit, every dim before d into single rows, so each piece
// is contiguous in the box. The box itself when it fits.
std::vector<Box> SplitBox(const Box& box, int64_t max_elements);

// How many boxes SplitBox(box, max_elements) returns, without making them.
int64_t SplitBoxCount(const Box& box, int64_t max_elements);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_CROSSING_ROUNDS_H_
