#include "planner/steps/link_load.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace reshard {

LinkLoad LinkLoadOfRoutes(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                          int64_t devices_per_host) {
  // A crossing's routes may repeat a pair (pieces, relays, stagers): one
  // message, so one RouteSize per pair.
  return LinkLoadTally::Of(RouteSizesOfPairs(routes), ranks, devices_per_host).Load();
}

LinkLoadTally LinkLoadTally::Of(absl::Span<const RouteSize> routes, absl::Span<const int64_t> ranks,
                                int64_t devices_per_host) {
  LinkLoadTally tally;
  tally.Reset(ranks, devices_per_host);
  for (const RouteSize& r : routes) {
    if (r.sender != r.receiver) tally.Add(r);
  }
  return tally;
}

bool NicSlotsAreDense(int64_t hosts, int64_t devices_per_host, int64_t participants) {
  return hosts * devices_per_host <= 16 * participants + 256;
}

void LinkLoadTally::Reset(absl::Span<const int64_t> ranks, int64_t devices_per_host) {
  const size_t n = ranks.size();
  devices_per_host_ = devices_per_host;
  host_.resize(n);
  rail_.resize(n);
  // Hosts numbered in order of first sight: a group's ranks ascend, so a
  // new host is one past the last; a map only for ranks out of order.
  int64_t hosts = 0;
  absl::flat_hash_map<int64_t, int64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const int64_t host = ranks[i] / devices_per_host;
    const int64_t last = i > 0 ? ranks[i - 1] / devices_per_host : -1;
    if (host == last) {
      host_[i] = host_[i - 1];
    } else if (host > last && seen.empty()) {
      host_[i] = hosts++;
    } else {  // out of order: number every host seen so far once
      if (seen.empty()) {
        for (size_t k = 0; k < i; ++k) seen.try_emplace(ranks[k] / devices_per_host, host_[k]);
      }
      host_[i] = seen.try_emplace(host, hosts).first->second;
      hosts += host_[i] == hosts;
    }
    rail_[i] = ranks[i] % devices_per_host;
  }
  for (std::vector<int64_t>* v : {&intra_sent_, &intra_received_, &inter_received_, &sends_[0],
                                  &sends_[1], &receives_[0], &receives_[1]}) {
    v->assign(n, 0);
  }
  dense_rails_ = NicSlotsAreDense(hosts, devices_per_host, static_cast<int64_t>(n));
  rail_sent_.assign(dense_rails_ ? hosts * devices_per_host : 0, 0);
  sparse_rail_sent_.clear();
  host_members_.assign(hosts, 0);
  for (int64_t h : host_) ++host_members_[h];
  host_sent_.assign(hosts, 0);
  host_received_.assign(hosts, 0);
}

void LinkLoadTally::Add(const RouteSize& r) {
  const bool inter = host_[r.sender] != host_[r.receiver];
  ++sends_[inter][r.sender];
  ++receives_[inter][r.receiver];
  if (!inter) {
    intra_sent_[r.sender] += r.elements;
    intra_received_[r.receiver] += r.elements;
    return;
  }
  // PXN: the NIC of this host's GPU with the receiver's local rank, over
  // NVLink first unless that GPU is the sender.
  const int64_t rail = rail_[r.receiver];
  if (rail_[r.sender] != rail) intra_sent_[r.sender] += r.elements;
  const int64_t nic = host_[r.sender] * devices_per_host_ + rail;
  (dense_rails_ ? rail_sent_[nic] : sparse_rail_sent_[nic]) += r.elements;
  inter_received_[r.receiver] += r.elements;
  host_sent_[host_[r.sender]] += r.elements;
  host_received_[host_[r.receiver]] += r.elements;
}

LinkLoad LinkLoadTally::Load() const {
  LinkLoad load;
  for (size_t i = 0; i < host_.size(); ++i) {
    load.intra = std::max({load.intra, intra_sent_[i], intra_received_[i]});
    load.inter = std::max(load.inter, inter_received_[i]);
    load.intra_messages = std::max({load.intra_messages, sends_[0][i], receives_[0][i]});
    load.inter_messages = std::max({load.inter_messages, sends_[1][i], receives_[1][i]});
  }
  load.inter = std::max(load.inter, BusiestNic());
  return load;
}

int64_t LinkLoadTally::BusiestNic() const {
  int64_t most = 0;
  for (int64_t elements : rail_sent_) most = std::max(most, elements);
  for (const auto& [nic, elements] : sparse_rail_sent_) most = std::max(most, elements);
  return most;
}

NicLoad LinkLoadTally::Nic() const {
  NicLoad load;
  for (size_t h = 0; h < host_members_.size(); ++h) {
    const int64_t out = (host_sent_[h] + devices_per_host_ - 1) / devices_per_host_;
    const int64_t in = (host_received_[h] + host_members_[h] - 1) / host_members_[h];
    load.least = std::max({load.least, out, in});
  }
  load.direct = std::max(load.direct, BusiestNic());
  for (int64_t elements : inter_received_) load.direct = std::max(load.direct, elements);
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
