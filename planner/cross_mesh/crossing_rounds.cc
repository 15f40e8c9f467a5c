#include "planner/cross_mesh/crossing_rounds.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "planner/steps/plan_limit.h"
#include "planner/steps/step_memory.h"

namespace reshard {
namespace {

// Per participant, the bytes of its held and wanted blocks.
std::vector<int64_t> ResidentBytes(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                   int64_t itemsize) {
  std::vector<int64_t> bytes(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    bytes[i] = itemsize * (BoxElements(held[i]) + BoxElements(wanted[i]));
  }
  return bytes;
}

// The dim SplitBox cuts: the first whose trailing dims hold at most
// `max_elements`, with the rows of it a piece takes.
struct Cut {
  size_t dim = 0;
  int64_t rows = 0;
};
Cut CutOf(const Box& box, int64_t max_elements) {
  int64_t inner = 1;
  size_t d = box.size() - 1;
  // inner = elements of one row of dim d (the dims after it).
  while (d > 0 && inner * box[d].size <= max_elements) inner *= box[d--].size;
  if (inner * box[d].size <= max_elements) return {d, box[d].size};
  return {d, std::max<int64_t>(1, max_elements / inner)};
}

absl::Status TooManyRounds(int64_t max_memory);

// First fit, largest first (spec §14 "Memory"): each piece goes to
// the earliest round where both its ends have room; ResourceExhausted past
// kMaxCrossingRounds.
absl::StatusOr<std::vector<int64_t>> FirstFit(absl::Span<const SliceRoute> pieces,
                                              absl::Span<const int64_t> room, int64_t itemsize,
                                              int64_t max_memory) {
  std::vector<size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return BoxElements(pieces[a].box) > BoxElements(pieces[b].box);
  });
  std::vector<std::vector<int64_t>> used;  // per round, per participant
  std::vector<int64_t> round_of(pieces.size(), 0);
  for (size_t k : order) {
    const SliceRoute& p = pieces[k];
    const int64_t b = itemsize * BoxElements(p.box);
    size_t r = 0;
    while (r < used.size() &&
           (used[r][p.sender] + b > room[p.sender] || used[r][p.receiver] + b > room[p.receiver])) {
      ++r;
    }
    if (r == used.size()) {
      if (static_cast<int64_t>(used.size()) == kMaxCrossingRounds) {
        return TooManyRounds(max_memory);
      }
      used.emplace_back(room.size(), 0);
    }
    used[r][p.sender] += b;
    used[r][p.receiver] += b;
    round_of[k] = static_cast<int64_t>(r);
  }
  return round_of;
}

absl::Status TooManyRounds(int64_t max_memory) {
  return PlanLimitError(
      PlanLimit::kMaxMemory,
      absl::StrCat("the crossing would take more than ", kMaxCrossingRounds, " rounds under ",
                   max_memory, " bytes per rank; raise the limit"));
}

// Spec §14 "Memory" steps 3-4: every route between two participants cut
// into pieces of at most 1/divisor of what fits both its ends, placed first
// fit; ResourceExhausted past `max_pieces` pieces or kMaxCrossingRounds.
absl::StatusOr<RouteRounds> Schedule(absl::Span<const SliceRoute> routes,
                                     absl::Span<const int64_t> room, int64_t itemsize,
                                     int64_t max_memory, int64_t max_pieces, int64_t divisor) {
  auto fit = [&](const SliceRoute& r) {
    return std::max<int64_t>(1, std::min(room[r.sender], room[r.receiver]) / itemsize / divisor);
  };
  int64_t pieces = 0;
  for (const SliceRoute& r : routes) {
    pieces += r.sender == r.receiver ? 1 : SplitBoxCount(r.box, fit(r));
    if (pieces > max_pieces) {
      return PlanLimitError(
          PlanLimit::kMaxMemory,
          absl::StrCat("the crossing under ", max_memory, " bytes per rank would move more than ",
                       max_pieces, " slices; raise the limit"));
    }
  }
  RouteRounds out;
  std::vector<SliceRoute> moving;
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) {
      out.routes.push_back(r);  // a local copy: no buffers, round 0
      continue;
    }
    for (Box& piece : SplitBox(r.box, fit(r))) moving.push_back({r.sender, r.receiver, piece});
  }
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> round_of,
                           FirstFit(moving, room, itemsize, max_memory));
  out.round_of.assign(out.routes.size(), 0);
  for (size_t k = 0; k < moving.size(); ++k) {
    out.routes.push_back(std::move(moving[k]));
    out.round_of.push_back(round_of[k]);
    out.rounds = std::max(out.rounds, round_of[k] + 1);
  }
  return SortedByRound(std::move(out));
}

}  // namespace

int64_t LeastCrossingMemory(absl::Span<const Box> held, absl::Span<const Box> wanted,
                            absl::Span<const SliceRoute> routes, int64_t itemsize) {
  const std::vector<int64_t> resident = ResidentBytes(held, wanted, itemsize);
  const std::vector<int64_t> traffic = TrafficBytes(routes, held.size(), itemsize);
  int64_t least = 0;
  for (size_t i = 0; i < held.size(); ++i) {
    least = std::max(least, resident[i] + (traffic[i] > 0 ? itemsize : 0));
  }
  return least;
}

int64_t RoundsLowerBound(absl::Span<const Box> held, absl::Span<const Box> wanted,
                         absl::Span<const SliceRoute> routes, int64_t itemsize,
                         int64_t max_memory) {
  const std::vector<int64_t> resident = ResidentBytes(held, wanted, itemsize);
  const std::vector<int64_t> traffic = TrafficBytes(routes, held.size(), itemsize);
  int64_t bound = 1;
  for (size_t i = 0; i < held.size(); ++i) {
    if (traffic[i] == 0) continue;
    const int64_t room = max_memory - resident[i];
    bound = std::max(bound, (traffic[i] + room - 1) / room);
  }
  return bound;
}

absl::StatusOr<RouteRounds> SplitIntoRounds(absl::Span<const Box> held,
                                            absl::Span<const Box> wanted,
                                            std::vector<SliceRoute> routes,
                                            absl::Span<const int64_t> participants,
                                            int64_t itemsize, int64_t max_memory,
                                            int64_t max_pieces) {
  const std::vector<int64_t> resident = ResidentBytes(held, wanted, itemsize);
  const std::vector<int64_t> traffic = TrafficBytes(routes, held.size(), itemsize);
  std::vector<int64_t> room(held.size());
  bool fits = true;
  for (size_t i = 0; i < held.size(); ++i) {
    room[i] = max_memory - resident[i];
    fits = fits && traffic[i] <= room[i];
  }
  if (fits) return OneRound(std::move(routes));
  const int64_t least = LeastCrossingMemory(held, wanted, routes, itemsize);
  if (least > max_memory) {
    const size_t i = std::max_element(resident.begin(), resident.end()) - resident.begin();
    return PlanLimitError(
        PlanLimit::kMaxMemory,
        absl::StrCat("the crossing's blocks alone take ", resident[i], " bytes on rank ",
                     participants[i],
                     " (the blocks it holds through the crossing), so no split into "
                     "rounds keeps every rank under ",
                     max_memory, " bytes; the crossing needs at least ", least));
  }
  const int64_t bound = RoundsLowerBound(held, wanted, routes, itemsize, max_memory);
  if (bound > kMaxCrossingRounds) return TooManyRounds(max_memory);
  // Pieces of the most that fits first; smaller ones (a half, a third, a
  // quarter of it) may pack into fewer rounds. The fewest rounds win, the
  // larger pieces on ties; the first try's errors are the crossing's.
  absl::StatusOr<RouteRounds> best =
      Schedule(routes, room, itemsize, max_memory, max_pieces, /*divisor=*/1);
  for (int64_t divisor = 2; best.ok() && best->rounds > bound && divisor <= 4; ++divisor) {
    absl::StatusOr<RouteRounds> finer =
        Schedule(routes, room, itemsize, max_memory, max_pieces, divisor);
    if (finer.ok() && finer->rounds < best->rounds) best = *std::move(finer);
  }
  return best;
}

std::vector<Box> SplitBox(const Box& box, int64_t max_elements) {
  if (box.empty() || BoxElements(box) <= max_elements) return {box};
  const Cut cut = CutOf(box, max_elements);
  std::vector<Box> out;
  Box piece = box;
  // Odometer over the dims before the cut (single rows), then runs of the cut dim.
  std::vector<int64_t> at(cut.dim, 0);
  while (true) {
    for (size_t e = 0; e < cut.dim; ++e) piece[e] = {box[e].offset + at[e], 1};
    for (int64_t row = 0; row < box[cut.dim].size; row += cut.rows) {
      piece[cut.dim] = {box[cut.dim].offset + row, std::min(cut.rows, box[cut.dim].size - row)};
      out.push_back(piece);
    }
    size_t e = cut.dim;
    while (e > 0 && ++at[e - 1] == box[e - 1].size) at[--e] = 0;
    if (e == 0) break;
  }
  return out;
}

int64_t SplitBoxCount(const Box& box, int64_t max_elements) {
  if (box.empty() || BoxElements(box) <= max_elements) return 1;
  const Cut cut = CutOf(box, max_elements);
  int64_t count = (box[cut.dim].size + cut.rows - 1) / cut.rows;
  for (size_t e = 0; e < cut.dim; ++e) count *= box[e].size;
  return count;
}

}  // namespace reshard
