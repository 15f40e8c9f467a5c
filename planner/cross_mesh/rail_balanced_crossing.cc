#include "planner/cross_mesh/rail_balanced_crossing.h"

#include <algorithm>
#include <map>
#include <vector>

namespace reshard {
namespace {

// A run of a route's rows and the participant it enters through (-1: the
// receiver itself).
struct Part {
  Box box;
  int64_t stager = -1;
};

// Each participant's crossing_src block (empty if none) and crossing_dst block.
struct Blocks {
  absl::Span<const Box> held, wanted;
};

// A participant below its host's share, and the elements it may still take.
struct Spare {
  int64_t stager;
  int64_t room;
};

Box Rows(const Box& box, size_t d, int64_t begin, int64_t n) {
  Box out = box;
  out[d].offset = box[d].offset + begin;
  out[d].size = n;
  return out;
}

// Whether `stager` may carry `box` aside: it neither holds nor wants any of
// it (else it would receive what it holds, or the same elements twice).
bool MayStage(int64_t stager, const Box& box, const Blocks& blocks) {
  return BoxElements(MeetBoxes(box, blocks.held[stager], box)) == 0 &&
         BoxElements(MeetBoxes(box, blocks.wanted[stager], box)) == 0;
}

// The first spare from `*next` on with room that may stage `box`; *next
// moves past the spares without room.
Spare* SpareFor(const Box& box, const Blocks& blocks, std::vector<Spare>& spares, size_t* next,
                int64_t per_row) {
  while (*next < spares.size() && 2 * spares[*next].room < per_row) ++*next;
  for (size_t j = *next; j < spares.size(); ++j) {
    if (2 * spares[j].room >= per_row && MayStage(spares[j].stager, box, blocks)) {
      return &spares[j];
    }
  }
  return nullptr;
}

// The routes `into` one participant (in order), their first `share`
// elements (rounded up to rows) direct and the rest through `spares` that
// may stage them, each up to its room (at least a row); direct where none.
// Whether any part is staged.
bool CutOverflow(absl::Span<const SliceRoute> routes, const std::vector<size_t>& into,
                 int64_t share, const Blocks& blocks, std::vector<Spare>& spares, size_t* next,
                 std::vector<std::vector<Part>>* parts) {
  int64_t keep = share;
  bool staged = false;
  for (size_t k : into) {
    const Box& box = routes[k].box;
    const size_t d = LongestDim(box);
    const int64_t rows = box[d].size, per_row = BoxElements(box) / rows;
    std::vector<Part>& out = (*parts)[k];
    out.clear();
    int64_t at = std::min(rows, (std::max<int64_t>(keep, 0) + per_row - 1) / per_row);
    keep -= at * per_row;
    if (at > 0) out.push_back({Rows(box, d, 0, at), -1});
    while (at < rows) {
      Spare* s = SpareFor(box, blocks, spares, next, per_row);
      if (s == nullptr) {
        out.push_back({Rows(box, d, at, rows - at), -1});
        break;
      }
      const int64_t n =
          std::min(rows - at, std::max<int64_t>(1, (s->room + per_row / 2) / per_row));
      out.push_back({Rows(box, d, at, n), s->stager});
      s->room -= n * per_row;
      at += n;
      staged = true;
    }
  }
  return staged;
}

// Per route, its parts: whole and direct, or cut where its receiver's host
// is spread (the header's rule). `*spread`: whether any part is staged.
std::vector<std::vector<Part>> PartsOfRoutes(const Blocks& blocks,
                                             absl::Span<const SliceRoute> routes,
                                             absl::Span<const int64_t> ranks,
                                             int64_t rails_per_host, bool* spread) {
  const auto host = [&](int64_t i) { return ranks[i] / rails_per_host; };
  std::vector<std::vector<Part>> parts(routes.size());
  std::vector<int64_t> received(ranks.size(), 0);
  std::vector<std::vector<size_t>> into(ranks.size());
  for (size_t k = 0; k < routes.size(); ++k) {
    parts[k] = {{routes[k].box, -1}};
    if (host(routes[k].sender) == host(routes[k].receiver)) continue;
    received[routes[k].receiver] += BoxElements(routes[k].box);
    into[routes[k].receiver].push_back(k);
  }
  std::map<int64_t, std::vector<int64_t>> members;  // by host, in order
  for (size_t i = 0; i < ranks.size(); ++i) members[host(i)].push_back(static_cast<int64_t>(i));
  *spread = false;
  for (const auto& [h, m] : members) {
    int64_t total = 0, most = 0;
    for (int64_t i : m) total += received[i], most = std::max(most, received[i]);
    const int64_t share = (total + static_cast<int64_t>(m.size()) - 1) / m.size();
    if (8 * most <= 9 * share) continue;
    std::vector<Spare> spares;
    for (int64_t i : m) {
      if (received[i] < share) spares.push_back({i, share - received[i]});
    }
    size_t next = 0;
    for (int64_t i : m) {
      if (received[i] > share &&
          CutOverflow(routes, into[i], share, blocks, spares, &next, &parts)) {
        *spread = true;
      }
    }
  }
  return parts;
}

}  // namespace

std::optional<RouteRounds> SpreadOverRails(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                           absl::Span<const SliceRoute> routes,
                                           absl::Span<const int64_t> ranks, int64_t rails_per_host,
                                           int64_t chunks, int64_t max_routes) {
  // Per chunk, a route makes at most two direct parts (its head and a tail
  // no stager may take) and staged ones that each end the route or fill a
  // spare (at most routes + participants), two routes each.
  const int64_t n_routes = static_cast<int64_t>(routes.size());
  const int64_t most = (4 * n_routes + 2 * static_cast<int64_t>(ranks.size())) * chunks;
  if (rails_per_host < 2 || most > max_routes) return std::nullopt;
  bool spread = false;
  const std::vector<std::vector<Part>> parts =
      PartsOfRoutes({held, wanted}, routes, ranks, rails_per_host, &spread);
  if (!spread) return std::nullopt;
  RouteRounds out;
  for (size_t k = 0; k < routes.size(); ++k) {
    const SliceRoute& r = routes[k];
    if (r.sender == r.receiver) {
      AddRoute(r, 0, &out);
      continue;
    }
    for (const Part& p : parts[k]) {
      AddPartsThrough(r.sender, p.stager < 0 ? r.receiver : p.stager, r.receiver, p.box, chunks,
                      &out);
    }
  }
  return SortedByRound(std::move(out));
}

}  // namespace reshard
