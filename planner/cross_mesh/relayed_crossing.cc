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

// Spec §14 "Relaying": the piece's shares into its relays, a part a round,
// then from each relay to the piece's other receivers a round later.
void Relay(absl::Span<const SliceRoute> routes, const std::vector<size_t>& piece,
           const std::vector<size_t>& relays, int64_t chunks, RouteRounds* out) {
  const std::vector<Box> shares =
      PartsOf(routes[piece[0]].box, static_cast<int64_t>(relays.size()));
  for (size_t r = 0; r < shares.size(); ++r) {
    const SliceRoute& in = routes[relays[r]];
    const std::vector<Box> parts = PartsOf(shares[r], chunks);
    for (size_t c = 0; c < parts.size(); ++c) {
      const int64_t round = static_cast<int64_t>(c);
      AddRoute({in.sender, in.receiver, parts[c]}, round, out);
      for (size_t k : piece) {
        if (routes[k].receiver != in.receiver) {
          AddRoute({in.receiver, routes[k].receiver, parts[c]}, round + 1, out);
        }
      }
    }
  }
}

}  // namespace

std::optional<RouteRounds> RelayThroughReplicas(absl::Span<const Box> held,
                                                absl::Span<const SliceRoute> routes, int64_t chunks,
                                                int64_t max_routes) {
  const std::vector<std::vector<size_t>> pieces = RoutesByPiece(routes);
  std::vector<std::vector<size_t>> relays;
  bool relayed = false;
  int64_t most = static_cast<int64_t>(routes.size()) * chunks;  // at most, before any is made
  for (const std::vector<size_t>& piece : pieces) {
    relays.push_back(RelaysOf(piece, held, routes));
    if (relays.back().empty()) continue;
    relayed = true;
    most +=
        static_cast<int64_t>(relays.back().size()) * chunks * static_cast<int64_t>(piece.size());
  }
  if (!relayed || most > max_routes) return std::nullopt;
  RouteRounds out;
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) AddRoute(r, 0, &out);
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::vector<size_t>& piece = pieces[i];
    if (!relays[i].empty()) {
      Relay(routes, piece, relays[i], chunks, &out);
      continue;
    }
    for (size_t k : piece) {
      const std::vector<Box> parts = PartsOf(routes[k].box, chunks);
      for (size_t c = 0; c < parts.size(); ++c) {
        AddRoute({routes[k].sender, routes[k].receiver, parts[c]}, static_cast<int64_t>(c), &out);
      }
    }
  }
  return SortedByRound(std::move(out));
}

}  // namespace reshard
