#include "planner/steps/rail_staging.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "planner/steps/permute_exchange.h"

namespace reshard {
namespace {

// Whether two boxes share an element, without building their meeting.
bool Overlap(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.size(); ++d) {
    if (std::max(a[d].offset, b[d].offset) >=
        std::min(a[d].offset + a[d].size, b[d].offset + b[d].size)) {
      return false;
    }
  }
  return !a.empty();
}

// Assigns each route across hosts the participant it enters its receiver's
// host through (the header's rule): stager[k] == routes[k].receiver where
// direct. Hosts are numbered densely in participant order; a NIC is a
// (host, rail) slot, whether or not a participant sits there (PXN sends
// through it all the same).
class RailAssignment {
 public:
  RailAssignment(absl::Span<const Box> held, absl::Span<const Box> wanted,
                 absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                 int64_t rails)
      : held_(held), wanted_(wanted), routes_(routes), ranks_(ranks), rails_(rails) {
    absl::flat_hash_map<int64_t, int64_t> dense;  // by host
    for (int64_t rank : ranks) {
      const auto [it, added] = dense.try_emplace(rank / rails, static_cast<int64_t>(hosts_.size()));
      if (added) hosts_.push_back(rank / rails);
      host_of_.push_back(it->second);
    }
    slot_.assign(hosts_.size() * rails, -1);
    for (size_t i = 0; i < ranks.size(); ++i) {
      slot_[Nic(host_of_[i], static_cast<int64_t>(i))] = static_cast<int64_t>(i);
    }
    send_.assign(slot_.size(), 0);
    receive_.assign(ranks.size(), 0);
    stager_.resize(routes.size());
    elements_.resize(routes.size());
    for (size_t k = 0; k < routes.size(); ++k) {
      stager_[k] = routes[k].receiver;
      elements_[k] = BoxElements(routes[k].box);
    }
  }

  // Whether any route is staged.
  bool Assign() {
    std::vector<size_t> across;
    for (size_t k = 0; k < routes_.size(); ++k) {
      if (host_of_[routes_[k].sender] != host_of_[routes_[k].receiver]) across.push_back(k);
    }
    std::stable_sort(across.begin(), across.end(),
                     [&](size_t a, size_t b) { return elements_[a] > elements_[b]; });
    for (size_t k : across) Place(k);
    const int64_t most = Busiest();
    bool staged = false;
    for (size_t k : across) {
      if (stager_[k] != routes_[k].receiver) staged |= !MoveBack(k, most);
    }
    return staged;
  }
  int64_t StagerOf(size_t k) const { return stager_[k]; }

 private:
  int64_t Busiest() const {
    int64_t most = 0;
    for (int64_t e : send_) most = std::max(most, e);
    for (int64_t e : receive_) most = std::max(most, e);
    return most;
  }

  // The NIC of dense host `host` on the rail of participant i.
  int64_t Nic(int64_t host, int64_t i) const { return host * rails_ + ranks_[i] % rails_; }
  int64_t Cost(int64_t host, int64_t c, int64_t elements) const {
    return std::max(send_[Nic(host, c)], receive_[c]) + elements;
  }
  void Add(int64_t host, int64_t c, int64_t elements) {
    send_[Nic(host, c)] += elements;
    receive_[c] += elements;
  }

  bool MayStage(int64_t c, const SliceRoute& r) const {
    return !Overlap(r.box, held_[c]) && !Overlap(r.box, wanted_[c]) &&
           !staging_.contains({c, r.box});
  }

  void Place(size_t k) {
    const SliceRoute& r = routes_[k];
    const int64_t from = host_of_[r.sender], to = host_of_[r.receiver], e = elements_[k];
    const int64_t first = (hosts_[from] + hosts_[to] + pairs_[{from, to}]++) % rails_;
    int64_t best = r.receiver, best_cost = -1;
    for (int64_t x = 0; x < rails_; ++x) {
      const int64_t c = slot_[to * rails_ + (first + x) % rails_];
      if (c < 0) continue;
      const int64_t cost = Cost(from, c, e);
      // MayStage (dearer) only where the candidate would win.
      if (best_cost >= 0 && cost >= best_cost) continue;
      if (c != r.receiver && !MayStage(c, r)) continue;
      best = c, best_cost = cost;
    }
    stager_[k] = best;
    Add(from, best, e);
    if (best != r.receiver) staging_.insert({best, r.box});
  }

  // Route k back to its receiver when that loads no NIC past `most`;
  // whether it moved.
  bool MoveBack(size_t k, int64_t most) {
    const SliceRoute& r = routes_[k];
    const int64_t from = host_of_[r.sender], e = elements_[k];
    Add(from, stager_[k], -e);
    if (Cost(from, r.receiver, e) > most) {
      Add(from, stager_[k], e);
      return false;
    }
    Add(from, r.receiver, e);
    staging_.erase({stager_[k], r.box});
    stager_[k] = r.receiver;
    return true;
  }

  absl::Span<const Box> held_, wanted_;
  absl::Span<const SliceRoute> routes_;
  absl::Span<const int64_t> ranks_;
  int64_t rails_;
  std::vector<int64_t> hosts_;    // by dense host, its global host number
  std::vector<int64_t> host_of_;  // by participant, its dense host
  std::vector<int64_t> slot_;     // by NIC, the participant there or -1
  std::vector<int64_t> send_;     // by NIC, what its host sends through it
  std::vector<int64_t> receive_;  // by participant, what it receives from other hosts
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> pairs_;  // routes placed, by hosts
  absl::flat_hash_set<std::pair<int64_t, Box>> staging_;             // (stager, box)
  std::vector<int64_t> stager_;
  std::vector<int64_t> elements_;  // by route
};

}  // namespace

std::optional<RouteRounds> StageOverRails(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                          absl::Span<const SliceRoute> routes,
                                          absl::Span<const int64_t> ranks, int64_t rails_per_host,
                                          int64_t chunks) {
  if (rails_per_host < 2) return std::nullopt;
  // The assignment's tables are by NIC: none where its slots are sparse,
  // whose hosts hold few participants to stage through anyway.
  absl::flat_hash_set<int64_t> hosts;
  for (int64_t rank : ranks) hosts.insert(rank / rails_per_host);
  const auto n = static_cast<int64_t>(ranks.size());
  if (!NicSlotsAreDense(static_cast<int64_t>(hosts.size()), rails_per_host, n)) {
    return std::nullopt;
  }
  std::vector<RouteSize> sizes;  // NIC loads only sum them: no need to merge pairs
  for (const SliceRoute& r : routes) sizes.push_back({r.sender, r.receiver, BoxElements(r.box)});
  if (!LinkLoadTally::Of(sizes, ranks, rails_per_host).Nic().MayStage()) return std::nullopt;
  RailAssignment rails(held, wanted, routes, ranks, rails_per_host);
  if (!rails.Assign()) return std::nullopt;
  RouteRounds out;
  for (size_t k = 0; k < routes.size(); ++k) {
    const SliceRoute& r = routes[k];
    if (r.sender == r.receiver) {
      AddRoute(r, 0, &out);
      continue;
    }
    AddPartsThrough(r.sender, rails.StagerOf(k), r.receiver, r.box, chunks, &out);
  }
  return SortedByRound(std::move(out));
}

StagedExchange StagedExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                absl::Span<const int64_t> logical,
                                absl::Span<const int64_t> coordinate) {
  StagedExchange x;
  const int64_t rank = mesh.Rank(coordinate);
  x.me = mesh.IndexInGroup(step.group, rank);
  x.ranks = mesh.GroupOf(step.group, rank);
  x.held = GroupBlocksOf(state, step, mesh, logical, /*after=*/false);
  x.wanted = GroupBlocksOf(state, step, mesh, logical, /*after=*/true);
  std::vector<SliceRoute> routes = RouteSlices(x.held, x.wanted);
  std::optional<RouteRounds> staged = StageOverRails(
      x.held, x.wanted, routes, x.ranks, step.staging.rails_per_host, step.staging.chunks);
  x.staged = staged.has_value();
  x.rounds = x.staged ? *std::move(staged) : OneRound(std::move(routes));
  return x;
}

}  // namespace reshard
