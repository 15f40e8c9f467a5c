// Slice routes: which participant sends which slice to which, when every
// participant holds one box of a tensor and wants another (spec §11.1). The
// one rule behind permutes and exchanges (permute_exchange.h): the executor
// moves these slices, BytesOfStep counts them, the cost models price them.
//
//   held[i]    the box participant i holds (empty: it holds nothing)
//   wanted[i]  the box it must hold afterwards (empty: it wants nothing)
//   std::vector<SliceRoute> routes = RouteSlices(held, wanted);
//
// Every participant receives exactly the part of wanted[i] it does not hold
// itself, each element once, from a participant that holds it; where several
// hold the same box (replicas), the sender is chosen to balance the elements
// each participant sends (spec §11.1 gives the rule). Deterministic: every
// participant computes the same routes from the same boxes.
//
// Cost: the held boxes are indexed per tensor dim (sorted extents), so each
// wanted box is tested only against the distinct held boxes of its shortest
// run of extents, not against all of them (unless there are few: then
// testing all costs less than the index); one participant's routes
// (RouteSlicesOf) build only its own boxes, and pricing (LoadOfGridRoutes)
// builds none, taking the boxes as tuples of per-dim slices.
#ifndef RESHARD_PLANNER_STEPS_SLICE_ROUTES_H_
#define RESHARD_PLANNER_STEPS_SLICE_ROUTES_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "planner/layout/chunk.h"

namespace reshard {

// A box: one Slice per tensor dim.
using Box = std::vector<Slice>;
// Elements in a box (0 when any slice is empty).
int64_t BoxElements(const Box& box);
// The intersection of `a` and `b`, with offsets relative to `origin`'s: an
// empty box (sizes and offsets 0) when they do not meet.
Box MeetBoxes(const Box& a, const Box& b, const Box& origin);
// Whether non-empty `inner` lies in `outer`.
bool BoxContains(const Box& outer, const Box& inner);

// One slice on its way: `box` (in the boxes' common coordinates) goes from
// participant `sender` to `receiver`. sender == receiver is a local copy.
struct SliceRoute {
  int64_t sender = 0;
  int64_t receiver = 0;
  Box box;
};

// The routes for `held` and `wanted` (one box each per participant, all of
// the same rank). Requires the distinct non-empty held boxes to be disjoint
// (one layout's blocks are); equal held boxes are replicas. Sorted by
// (receiver, sender); no empty boxes.
std::vector<SliceRoute> RouteSlices(absl::Span<const Box> held, absl::Span<const Box> wanted);

// The routes of RouteSlices(held, wanted) that `participant` sends or
// receives, in the same order (the senders are still chosen over all routes;
// only these boxes are built).
std::vector<SliceRoute> RouteSlicesOf(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                      int64_t participant);

// What the routes ask of the busiest participants, in elements and messages
// (a message: all one participant sends another in the exchange, however
// many routes: AllToAllV packs them as one).
struct RouteLoad {
  int64_t max_sent = 0;
  int64_t max_received = 0;
  int64_t max_sent_plus_received = 0;
  int64_t max_messages = 0;  // the most peers a participant sends to or receives from
  int64_t total_sent = 0;
};
RouteLoad LoadOfRoutes(absl::Span<const SliceRoute> routes, int64_t participants);

// Boxes as a grid, as a group's blocks are (GroupSliceGrid, chunk.h): per
// tensor dim d, a table of slices, and per participant i its index into it;
// participant i's box is (table[d][index[d][i]]) over d.
struct SliceGrid {
  std::vector<std::vector<Slice>> table;
  std::vector<std::vector<uint32_t>> index;
};
// LoadOfRoutes(RouteSlices(held, wanted), participants) for the grids'
// boxes, without building a box or comparing two (what pricing needs): a held box is its tuple of
// table indices, and those meeting a wanted box are the product of each dim's run of slices meeting
// it. Requires each held table's non-empty slices to be disjoint and in order of offset, with its
// empty ones where the order keeps offsets and ends ascending (GroupSliceGrid's tables are).
RouteLoad LoadOfGridRoutes(const SliceGrid& held, const SliceGrid& wanted, int64_t participants);

// What `receiver` receives from others in RouteSlices over the grids'
// boxes (as LoadOfGridRoutes requires them), by where the pieces' holders
// are: elements only participants `near` it hold, only others hold, or
// both. Found from its own meetings, without routing (search bounds).
struct ReceiptByPlace {
  int64_t near_only = 0;
  int64_t far_only = 0;
  int64_t either = 0;
};
ReceiptByPlace ReceiptOfGridMember(const SliceGrid& held, const SliceGrid& wanted,
                                   int64_t participants, int64_t receiver,
                                   absl::FunctionRef<bool(int64_t)> near);

// A route's participants and elements, without its box.
struct RouteSize {
  int64_t sender = 0;
  int64_t receiver = 0;
  int64_t elements = 0;
};
// The routes of RouteSlices over the grids' boxes (as LoadOfGridRoutes
// requires them) between two different participants, as sizes, each passed
// to `visit` in no particular order, never stored: pricing per link tallies
// them as they come (link_load.h).
void VisitRouteSizesOfGrids(const SliceGrid& held, const SliceGrid& wanted, int64_t participants,
                            absl::FunctionRef<void(const RouteSize&)> visit);
// `routes` between two different participants as sizes, one per pair, its
// routes' elements summed: all one participant sends another in an exchange
// is one message (AllToAllV packs it). In order of each pair's first route.
std::vector<RouteSize> RouteSizesOfPairs(absl::Span<const SliceRoute> routes);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_SLICE_ROUTES_H_
