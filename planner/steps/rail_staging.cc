#include "planner/steps/rail_staging.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "planner/steps/permute_exchange.h"

namespace reshard {
namespace {

// The NICs' loads in elements, by global rank: what the GPU of that rank's
// rail sends for its host, and what it receives.
struct RailLoads {
  absl::flat_hash_map<int64_t, int64_t> send, receive;
  int64_t Cost(int64_t send_nic, int64_t receive_nic, int64_t elements) {
    return std::max(send[send_nic], receive[receive_nic]) + elements;
  }
  void Add(int64_t send_nic, int64_t receive_nic, int64_t elements) {
    send[send_nic] += elements;
    receive[receive_nic] += elements;
  }
  int64_t Largest() const {
    int64_t most = 0;
    for (const auto& [rank, e] : send) most = std::max(most, e);
    for (const auto& [rank, e] : receive) most = std::max(most, e);
    return most;
  }
};

// Assigns each route across hosts the participant it enters its receiver's
// host through (the header's rule): stager[k] == routes[k].receiver where
// direct.
class RailAssignment {
 public:
  RailAssignment(absl::Span<const Box> held, absl::Span<const Box> wanted,
                 absl::Span<const SliceRoute> routes, absl::Span<const int64_t> ranks,
                 int64_t rails)
      : held_(held), wanted_(wanted), routes_(routes), ranks_(ranks), rails_(rails) {
    for (size_t i = 0; i < ranks.size(); ++i) participant_[ranks[i]] = static_cast<int64_t>(i);
    stager_.resize(routes.size());
    for (size_t k = 0; k < routes.size(); ++k) stager_[k] = routes[k].receiver;
  }

  // Whether any route is staged.
  bool Assign() {
    std::vector<size_t> across;
    for (size_t k = 0; k < routes_.size(); ++k) {
      if (Host(routes_[k].sender) != Host(routes_[k].receiver)) across.push_back(k);
    }
    std::stable_sort(across.begin(), across.end(), [&](size_t a, size_t b) {
      return BoxElements(routes_[a].box) > BoxElements(routes_[b].box);
    });
    for (size_t k : across) Place(k);
    bool staged = false;
    const int64_t most = loads_.Largest();
    for (size_t k : across) {
      if (stager_[k] != routes_[k].receiver) staged |= !MoveBack(k, most);
    }
    return staged;
  }
  int64_t StagerOf(size_t k) const { return stager_[k]; }

 private:
  int64_t Host(int64_t i) const { return ranks_[i] / rails_; }
  // The NIC of host `host` on the rail of participant i.
  int64_t NicOf(int64_t host, int64_t i) const { return host * rails_ + ranks_[i] % rails_; }

  bool MayStage(int64_t c, const SliceRoute& r) const {
    return BoxElements(MeetBoxes(r.box, held_[c], r.box)) == 0 &&
           BoxElements(MeetBoxes(r.box, wanted_[c], r.box)) == 0 && !staging_.contains({c, r.box});
  }

  void Place(size_t k) {
    const SliceRoute& r = routes_[k];
    const int64_t from = Host(r.sender), to = Host(r.receiver), e = BoxElements(r.box);
    const int64_t first = (from + to + pairs_[{from, to}]++) % rails_;
    int64_t best = r.receiver, best_cost = -1;
    for (int64_t x = 0; x < rails_; ++x) {
      const auto it = participant_.find(to * rails_ + (first + x) % rails_);
      if (it == participant_.end()) continue;
      const int64_t c = it->second;
      if (c != r.receiver && !MayStage(c, r)) continue;
      const int64_t cost = loads_.Cost(NicOf(from, c), ranks_[c], e);
      if (best_cost < 0 || cost < best_cost) best = c, best_cost = cost;
    }
    stager_[k] = best;
    loads_.Add(NicOf(from, best), ranks_[best], e);
    if (best != r.receiver) staging_.insert({best, r.box});
  }

  // Route k back to its receiver when that loads no NIC past `most`;
  // whether it moved.
  bool MoveBack(size_t k, int64_t most) {
    const SliceRoute& r = routes_[k];
    const int64_t from = Host(r.sender), e = BoxElements(r.box);
    loads_.Add(NicOf(from, stager_[k]), ranks_[stager_[k]], -e);
    if (loads_.Cost(NicOf(from, r.receiver), ranks_[r.receiver], e) > most) {
      loads_.Add(NicOf(from, stager_[k]), ranks_[stager_[k]], e);
      return false;
    }
    loads_.Add(NicOf(from, r.receiver), ranks_[r.receiver], e);
    staging_.erase({stager_[k], r.box});
    stager_[k] = r.receiver;
    return true;
  }

  absl::Span<const Box> held_, wanted_;
  absl::Span<const SliceRoute> routes_;
  absl::Span<const int64_t> ranks_;
  int64_t rails_;
  absl::flat_hash_map<int64_t, int64_t> participant_;                // by global rank
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> pairs_;  // routes placed, by hosts
  absl::flat_hash_set<std::pair<int64_t, Box>> staging_;             // (stager, box)
  RailLoads loads_;
  std::vector<int64_t> stager_;
};

}  // namespace

std::optional<RouteRounds> StageOverRails(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                          absl::Span<const SliceRoute> routes,
                                          absl::Span<const int64_t> ranks, int64_t rails_per_host,
                                          int64_t chunks) {
  if (rails_per_host < 2) return std::nullopt;
  RailAssignment rails(held, wanted, routes, ranks, rails_per_host);
  if (!rails.Assign()) return std::nullopt;
  RouteRounds out;
  for (size_t k = 0; k < routes.size(); ++k) {
    const SliceRoute& r = routes[k];
    if (r.sender == r.receiver) {
      AddRoute(r, 0, &out);
      continue;
    }
    const int64_t stager = rails.StagerOf(k);
    const std::vector<Box> parts = PartsOf(r.box, chunks);
    for (size_t c = 0; c < parts.size(); ++c) {
      const int64_t round = static_cast<int64_t>(c);
      if (stager == r.receiver) {
        AddRoute({r.sender, r.receiver, parts[c]}, round, &out);
      } else {
        AddRoute({r.sender, stager, parts[c]}, round, &out);
        AddRoute({stager, r.receiver, parts[c]}, round + 1, &out);
      }
    }
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
  x.rounds = staged.has_value() ? *std::move(staged) : OneRound(std::move(routes));
  return x;
}

}  // namespace reshard
