#include "planner/steps/route_rounds.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "planner/steps/step_memory.h"

namespace reshard {
namespace {

// Spec §14 "Rails": per round, the participants keeping boxes aside and
// the bytes they keep (boxes brought to them that they do not want), from
// the round that brings one until the last round that sends it on (both
// counted: the copy aside is made while that round's buffers are held).
// Empty, with no work past one pass, where no route brings such a box
// (every crossing but a spread one).
std::vector<std::vector<std::pair<int64_t, int64_t>>> KeptAside(absl::Span<const Box> wanted,
                                                                absl::Span<const SliceRoute> routes,
                                                                absl::Span<const int64_t> round_of,
                                                                int64_t rounds, int64_t itemsize) {
  std::vector<size_t> kept;  // the routes that bring a box to keep aside
  for (size_t k = 0; k < routes.size(); ++k) {
    const SliceRoute& r = routes[k];
    if (r.sender != r.receiver && !BoxContains(wanted[r.receiver], r.box)) kept.push_back(k);
  }
  if (kept.empty()) return {};
  absl::flat_hash_map<std::pair<int64_t, Box>, int64_t> last_send;  // of the keepers' boxes
  for (size_t k : kept) last_send[{routes[k].receiver, routes[k].box}] = round_of[k];
  for (size_t k = 0; k < routes.size(); ++k) {
    const auto it = last_send.find({routes[k].sender, routes[k].box});
    if (it != last_send.end()) it->second = std::max(it->second, round_of[k]);
  }
  std::vector<std::vector<std::pair<int64_t, int64_t>>> by_round(rounds);
  for (size_t k : kept) {
    const SliceRoute& r = routes[k];
    const int64_t until = std::min(last_send[{r.receiver, r.box}], rounds - 1);
    for (int64_t round = round_of[k]; round <= until; ++round) {
      by_round[round].push_back({r.receiver, itemsize * BoxElements(r.box)});
    }
  }
  return by_round;
}

}  // namespace

std::vector<int64_t> TrafficBytes(absl::Span<const SliceRoute> routes, size_t participants,
                                  int64_t itemsize) {
  std::vector<int64_t> bytes(participants, 0);
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) continue;
    const int64_t b = itemsize * BoxElements(r.box);
    bytes[r.sender] += b;
    bytes[r.receiver] += b;
  }
  return bytes;
}

RouteRounds SortedByRound(RouteRounds rounds) {
  std::vector<size_t> order(rounds.routes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SliceRoute &x = rounds.routes[a], &y = rounds.routes[b];
    return std::tie(rounds.round_of[a], x.receiver, x.sender) <
           std::tie(rounds.round_of[b], y.receiver, y.sender);
  });
  RouteRounds sorted;
  sorted.rounds = rounds.rounds;
  for (size_t k : order) {
    sorted.routes.push_back(std::move(rounds.routes[k]));
    sorted.round_of.push_back(rounds.round_of[k]);
  }
  return sorted;
}

RouteRounds OneRound(std::vector<SliceRoute> routes) {
  RouteRounds out;
  out.round_of.assign(routes.size(), 0);
  out.routes = std::move(routes);
  return out;
}

std::vector<SliceRoute> RoutesOfRound(absl::Span<const SliceRoute> routes,
                                      absl::Span<const int64_t> round_of, int64_t round) {
  std::vector<SliceRoute> out;
  for (size_t k = 0; k < routes.size(); ++k) {
    if (round_of[k] == round) out.push_back(routes[k]);
  }
  return out;
}

std::vector<int64_t> RoundsPeakBytes(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                     absl::Span<const SliceRoute> routes,
                                     absl::Span<const int64_t> round_of, int64_t rounds,
                                     int64_t itemsize) {
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> kept =
      KeptAside(wanted, routes, round_of, rounds, itemsize);
  std::vector<int64_t> moved(held.size(), 0);
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<int64_t> t =
        TrafficBytes(RoutesOfRound(routes, round_of, r), held.size(), itemsize);
    if (!kept.empty()) {
      for (const auto& [i, bytes] : kept[r]) t[i] += bytes;
    }
    for (size_t i = 0; i < held.size(); ++i) moved[i] = std::max(moved[i], t[i]);
  }
  std::vector<int64_t> peak(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    peak[i] = ExchangePeakBytes(itemsize * BoxElements(held[i]), itemsize * BoxElements(wanted[i]),
                                moved[i]);
  }
  return peak;
}

size_t LongestDim(const Box& box) {
  size_t d = 0;
  for (size_t e = 1; e < box.size(); ++e) {
    if (box[e].size > box[d].size) d = e;
  }
  return d;
}

std::vector<Box> PartsOf(const Box& box, int64_t parts) {
  const size_t d = LongestDim(box);
  const int64_t rows = box[d].size;
  parts = std::min(parts, rows);
  std::vector<Box> out;
  for (int64_t i = 0; i < parts; ++i) {
    Box part = box;
    part[d].offset = box[d].offset + rows * i / parts;
    part[d].size = rows * (i + 1) / parts - rows * i / parts;
    out.push_back(std::move(part));
  }
  return out;
}

void AddRoute(SliceRoute route, int64_t round, RouteRounds* out) {
  out->routes.push_back(std::move(route));
  out->round_of.push_back(round);
  out->rounds = std::max(out->rounds, round + 1);
}

void AddPartsThrough(int64_t sender, int64_t stager, int64_t receiver, const Box& box,
                     int64_t chunks, RouteRounds* out) {
  const std::vector<Box> parts = PartsOf(box, chunks);
  for (size_t c = 0; c < parts.size(); ++c) {
    const int64_t round = static_cast<int64_t>(c);
    if (stager == receiver) {
      AddRoute({sender, receiver, parts[c]}, round, out);
    } else {
      AddRoute({sender, stager, parts[c]}, round, out);
      AddRoute({stager, receiver, parts[c]}, round + 1, out);
    }
  }
}

std::vector<int64_t> RouteBytes(absl::Span<const SliceRoute> routes, size_t participants,
                                int64_t itemsize, bool sent) {
  std::vector<int64_t> bytes(participants, 0);
  for (const SliceRoute& r : routes) {
    if (r.sender != r.receiver)
      bytes[sent ? r.sender : r.receiver] += itemsize * BoxElements(r.box);
  }
  return bytes;
}

}  // namespace reshard
