#include "planner/cross_mesh/relayed_crossing.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace reshard {
namespace {

// The routes of `routes` (local copies aside) that carry one piece: the same
// box to several receivers, in order of first appearance.
std::vector<std::vector<size_t>> RoutesByPiece(absl::Span<const SliceRoute> routes) {
  absl::flat_hash_map<std::vector<int64_t>, size_t> piece_of;
  std::vector<std::vector<size_t>> pieces;
  for (size_t k = 0; k < routes.size(); ++k) {
    if (routes[k].sender == routes[k].receiver) continue;
    std::vector<int64_t> key;
    for (const Slice& s : routes[k].box) key.insert(key.end(), {s.offset, s.size});
    auto [it, added] = piece_of.try_emplace(std::move(key), pieces.size());
    if (added) pieces.emplace_back();
    pieces[it->second].push_back(k);
  }
  return pieces;
}

// The routes of one piece whose receivers hold nothing (the relays).
std::vector<size_t> RelaysOf(const std::vector<size_t>& piece, absl::Span<const Box> held,
                             absl::Span<const SliceRoute> routes) {
  std::vector<size_t> relays;
  if (piece.size() < 2) return relays;
  for (size_t k : piece) {
    if (BoxElements(held[routes[k].receiver]) == 0) relays.push_back(k);
  }
  return relays;
}

// `box` in parts of at most |box| / parts elements, rounded up.
std::vector<Box> PartsOf(const Box& box, int64_t parts) {
  return SplitBox(box, (BoxElements(box) + parts - 1) / parts);
}

void Add(SliceRoute route, int64_t round, CrossingRounds* out) {
  out->routes.push_back(std::move(route));
  out->round_of.push_back(round);
  out->rounds = std::max(out->rounds, round + 1);
}

// Spec §14 "Relaying": the piece's parts into its relays, then from each
// relay to the piece's other receivers.
void Relay(absl::Span<const SliceRoute> routes, const std::vector<size_t>& piece,
           const std::vector<size_t>& relays, int64_t chunks, CrossingRounds* out) {
  const int64_t m = static_cast<int64_t>(relays.size());
  const std::vector<Box> parts = PartsOf(routes[piece[0]].box, m * chunks);
  const int64_t n = static_cast<int64_t>(parts.size());
  for (int64_t t = 0; t < n; ++t) {
    const SliceRoute& in = routes[relays[t % m]];
    const int64_t round = t * chunks / n;
    Add({in.sender, in.receiver, parts[t]}, round, out);
    for (size_t k : piece) {
      if (routes[k].receiver != in.receiver)
        Add({in.receiver, routes[k].receiver, parts[t]}, round + 1, out);
    }
  }
}

}  // namespace

std::optional<CrossingRounds> RelayThroughReplicas(absl::Span<const Box> held,
                                                   absl::Span<const SliceRoute> routes,
                                                   int64_t chunks) {
  CrossingRounds out;
  bool relayed = false;
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) Add(r, 0, &out);
  }
  for (const std::vector<size_t>& piece : RoutesByPiece(routes)) {
    const std::vector<size_t> relays = RelaysOf(piece, held, routes);
    if (!relays.empty()) {
      Relay(routes, piece, relays, chunks, &out);
      relayed = true;
      continue;
    }
    for (size_t k : piece) {
      const std::vector<Box> parts = PartsOf(routes[k].box, chunks);
      const int64_t n = static_cast<int64_t>(parts.size());
      for (int64_t t = 0; t < n; ++t) {
        Add({routes[k].sender, routes[k].receiver, parts[t]}, t * chunks / n, &out);
      }
    }
  }
  if (!relayed) return std::nullopt;
  return SortedByRound(std::move(out));
}

}  // namespace reshard
