// Link load: what the routes of one exchange (slice_routes.h) ask of each
// link, when participants live on hosts of devices_per_host consecutive
// global ranks (spec §6.4 "Send/recv"): NVLink among a host's GPUs, the
// network between hosts. The nccl cost model prices permutes, exchanges
// and cross-mesh crossings by it: a rank's time is its NVLink bytes or its
// network bytes, whichever takes longer, so a rank that talks only to its
// own host pays no network round, and a rank that receives all it wants
// from another host pays for all of it on its NIC.
//
//   LinkLoad l = LinkLoadOfRoutes(routes, ranks, /*devices_per_host=*/8);
//   l.inter           // the most elements any rank moves across hosts
//   l.inter_messages  // the most peers on other hosts any rank talks to
#ifndef RESHARD_PLANNER_STEPS_LINK_LOAD_H_
#define RESHARD_PLANNER_STEPS_LINK_LOAD_H_

#include <cstdint>

#include "absl/types/span.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// Per link, the busiest participant's load, each the most over the
// participants (not one participant's: a bound on the busiest one's, and
// its exact load where one participant is busiest on every link). Elements
// are the more of those sent and those received (links are full duplex);
// messages the more of routes sent and routes received.
struct LinkLoad {
  int64_t intra = 0;  // to and from participants on its own host
  int64_t inter = 0;  // to and from other hosts
  int64_t intra_messages = 0;
  int64_t inter_messages = 0;
};

// The load of `routes` among participants where participant i is global
// rank ranks[i], on host ranks[i] / devices_per_host.
LinkLoad LinkLoadOfRoutes(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host);

// The same load where every route stays in one host (`one_host`) or every
// route crosses hosts, from the busiest participants' RouteLoad alone.
LinkLoad LinkLoadOnOneLink(const RouteLoad& load, bool one_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_LINK_LOAD_H_
