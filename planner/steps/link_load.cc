#include "planner/steps/link_load.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace reshard {

LinkLoad LinkLoadOfRoutes(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host) {
  // A crossing's routes may repeat a pair (pieces, relays, stagers): one
  // message, so one RouteSize per pair.
  return LinkLoadOfSizes(RouteSizesOfPairs(routes), ranks, devices_per_host);
}

LinkLoad LinkLoadOfSizes(absl::Span<const RouteSize> routes, absl::Span<const int64_t> ranks,
                         int64_t devices_per_host) {
  // Per participant: elements it sends and receives on NVLink, receives
  // over its NIC, and routes it sends and receives per link; per rail of a
  // host (host x devices_per_host + rail) the elements that leave the host
  // through that rail's NIC (PXN).
  const size_t n = ranks.size();
  std::vector<int64_t> intra_sent(n, 0), intra_received(n, 0), inter_received(n, 0);
  std::vector<int64_t> sends[2], receives[2];
  for (int link = 0; link < 2; ++link) {
    sends[link].assign(n, 0);
    receives[link].assign(n, 0);
  }
  absl::flat_hash_map<int64_t, int64_t> rail_sent;
  for (const RouteSize& r : routes) {
    if (r.sender == r.receiver) continue;
    const int64_t from = ranks[r.sender], to = ranks[r.receiver];
    const bool inter = from / devices_per_host != to / devices_per_host;
    ++sends[inter][r.sender];
    ++receives[inter][r.receiver];
    if (!inter) {
      intra_sent[r.sender] += r.elements;
      intra_received[r.receiver] += r.elements;
      continue;
    }
    // PXN: the NIC of this host's GPU with the receiver's local rank, over
    // NVLink first unless that GPU is the sender.
    const int64_t rail = to % devices_per_host;
    if (from % devices_per_host != rail) intra_sent[r.sender] += r.elements;
    rail_sent[from - from % devices_per_host + rail] += r.elements;
    inter_received[r.receiver] += r.elements;
  }
  LinkLoad load;
  for (size_t i = 0; i < n; ++i) {
    load.intra = std::max({load.intra, intra_sent[i], intra_received[i]});
    load.inter = std::max(load.inter, inter_received[i]);
    load.intra_messages = std::max({load.intra_messages, sends[0][i], receives[0][i]});
    load.inter_messages = std::max({load.inter_messages, sends[1][i], receives[1][i]});
  }
  for (const auto& [rail, elements] : rail_sent) load.inter = std::max(load.inter, elements);
  return load;
}

bool OnOneRail(absl::Span<const int64_t> ranks, int64_t devices_per_host) {
  for (int64_t r : ranks) {
    if (r % devices_per_host != ranks[0] % devices_per_host) return false;
  }
  return true;
}

LinkLoad LinkLoadOnOneLink(const RouteLoad& load, bool one_host) {
  const int64_t elements = std::max(load.max_sent, load.max_received);
  LinkLoad links;
  (one_host ? links.intra : links.inter) = elements;
  (one_host ? links.intra_messages : links.inter_messages) = load.max_messages;
  return links;
}

}  // namespace reshard
