#include "planner/steps/link_load.h"

#include <algorithm>
#include <vector>

namespace reshard {

LinkLoad LinkLoadOfRoutes(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host) {
  // Per participant and link (0 NVLink, 1 network): elements sent and
  // received, routes sent and received.
  const size_t n = ranks.size();
  std::vector<int64_t> sent[2], received[2], sends[2], receives[2];
  for (int link = 0; link < 2; ++link) {
    for (std::vector<int64_t>* v : {&sent[link], &received[link], &sends[link], &receives[link]}) {
      v->assign(n, 0);
    }
  }
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) continue;
    const int link =
        ranks[r.sender] / devices_per_host == ranks[r.receiver] / devices_per_host ? 0 : 1;
    const int64_t elements = BoxElements(r.box);
    sent[link][r.sender] += elements;
    received[link][r.receiver] += elements;
    ++sends[link][r.sender];
    ++receives[link][r.receiver];
  }
  LinkLoad load;
  for (size_t i = 0; i < n; ++i) {
    load.intra = std::max({load.intra, sent[0][i], received[0][i]});
    load.inter = std::max({load.inter, sent[1][i], received[1][i]});
    load.intra_messages = std::max({load.intra_messages, sends[0][i], receives[0][i]});
    load.inter_messages = std::max({load.inter_messages, sends[1][i], receives[1][i]});
  }
  return load;
}

LinkLoad LinkLoadOnOneLink(const RouteLoad& load, bool one_host) {
  const int64_t elements = std::max(load.max_sent, load.max_received);
  LinkLoad links;
  (one_host ? links.intra : links.inter) = elements;
  (one_host ? links.intra_messages : links.inter_messages) = load.max_messages;
  return links;
}

}  // namespace reshard
