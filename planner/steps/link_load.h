// Link load: what the routes of one exchange (slice_routes.h) ask of each
// link, when participants live on hosts of devices_per_host consecutive
// global ranks (spec §6.4 "Send/recv"): NVLink among a host's GPUs, the
// network between hosts. The nccl cost model prices permutes, exchanges
// and cross-mesh crossings by it: a rank's time is its NVLink bytes or its
// network bytes, whichever takes longer, so a rank that talks only to its
// own host pays no network round, and a rank that receives all it wants
// from another host pays for all of it on its NIC. Sends across hosts take
// NCCL's PXN path (NCCL_P2P_PXN_LEVEL, default 2: NVIDIA/nccl
// src/graph/search.cc ncclTopoGetNetDev): a send to a GPU of local rank k
// leaves through the NIC of this host's GPU k (rail k), after an NVLink hop
// to that GPU unless it is the sender; it arrives on the receiver's own NIC.
//
//   LinkLoad l = LinkLoadOfRoutes(routes, ranks, /*devices_per_host=*/8);
//   l.inter           // the most elements any rank moves across hosts
//   l.inter_messages  // the most peers on other hosts any rank talks to
#ifndef RESHARD_PLANNER_STEPS_LINK_LOAD_H_
#define RESHARD_PLANNER_STEPS_LINK_LOAD_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

// Per link, the busiest participant's load, each the most over the
// participants (not one participant's: a bound on the busiest one's, and
// its exact load where one participant is busiest on every link). Elements
// are the more of those sent and those received (links are full duplex);
// messages the more of peers sent to and peers received from (the routes
// between two participants are one message).
struct LinkLoad {
  // To and from participants on its own host, and PXN's hops.
  int64_t intra = 0;
  // Through one NIC: what a host's participants send on that rail, what one
  // participant receives from other hosts.
  int64_t inter = 0;
  int64_t intra_messages = 0;
  int64_t inter_messages = 0;
};

// The load of `routes` among participants where participant i is global
// rank ranks[i], on host ranks[i] / devices_per_host with local rank (and
// rail) ranks[i] % devices_per_host.
LinkLoad LinkLoadOfRoutes(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host);

// The NIC loads of an exchange's routes, in elements (spec §11.2):
// `direct`, the busiest NIC (a host's sends on one rail, a participant's
// receipts from other hosts) of the routes as they are; `least`, what the
// busiest NIC carries at least however the rails are assigned, a host's
// sends across hosts over its rails and its receipts over its
// participants, rounded up. Staging over rails can lower the busiest NIC
// only where direct > least.
struct NicLoad {
  int64_t direct = 0;
  int64_t least = 0;
  bool MayStage() const { return direct > least; }
};

// Whether tables by NIC, a (host, rail) slot for each of `hosts` hosts of
// `devices_per_host` rails, stay about as small as the group of
// `participants` (at most 16 slots each, and 256): the ranks of a group
// fill their hosts. Not so where devices_per_host is huge or a group's
// ranks each sit on another host.
bool NicSlotsAreDense(int64_t hosts, int64_t devices_per_host, int64_t participants);

// LinkLoadOfRoutes one route at a time, routes given by their sizes, at
// most one per pair of participants where messages count (VisitRouteSizesOfGrids
// and RouteSizesOfPairs give that), so that pricing need not store them.
// Reset keeps the storage: a tally kept per thread allocates only for a
// larger group.
class LinkLoadTally {
 public:
  void Reset(absl::Span<const int64_t> ranks, int64_t devices_per_host);
  void Add(const RouteSize& route);  // sender != receiver
  LinkLoad Load() const;
  // With a rail per GPU (devices_per_host rails per host).
  NicLoad Nic() const;

  // A tally of `routes`, those from a participant to itself left out.
  static LinkLoadTally Of(absl::Span<const RouteSize> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host);

 private:
  int64_t devices_per_host_ = 1;
  // Per participant: its host's index among the group's hosts, its rail.
  std::vector<int64_t> host_, rail_;
  // Per participant: elements sent and received on NVLink (PXN's hops
  // included), received over its NIC; routes sent and received per link.
  std::vector<int64_t> intra_sent_, intra_received_, inter_received_;
  std::vector<int64_t> sends_[2], receives_[2];
  // The most elements leaving through one NIC.
  int64_t BusiestNic() const;

  // Per host index x devices_per_host + rail: elements leaving through that
  // NIC, in a vector where that is dense (dense_rails_), else in the map.
  bool dense_rails_ = true;
  std::vector<int64_t> rail_sent_;
  absl::flat_hash_map<int64_t, int64_t> sparse_rail_sent_;
  // Per host index: its participants, elements sent to and received from
  // other hosts.
  std::vector<int64_t> host_members_, host_sent_, host_received_;
};

// Whether the global ranks `ranks` share one local rank (rank %
// devices_per_host), so that each is on its own host and every route among
// them crosses hosts on that one rail.
bool OnOneRail(absl::Span<const int64_t> ranks, int64_t devices_per_host);

// The same load where every route stays in one host (`one_host`), or
// where every route crosses hosts on one rail (every participant on its own
// host, all of one local rank), from the busiest participants' RouteLoad
// alone.
LinkLoad LinkLoadOnOneLink(const RouteLoad& load, bool one_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_LINK_LOAD_H_
