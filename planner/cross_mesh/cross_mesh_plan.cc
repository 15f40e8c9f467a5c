#include "planner/cross_mesh/cross_mesh_plan.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "planner/cross_mesh/crossing_rounds.h"
#include "planner/cross_mesh/rail_balanced_crossing.h"
#include "planner/cross_mesh/relayed_crossing.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dtype.h"
#include "planner/steps/plan_limit.h"
#include "planner/steps/rail_staging.h"

namespace reshard {
namespace {

// `ranks`, or 0 .. size - 1 when empty; InvalidArgument naming `field` for
// a wrong size or a repeated or negative rank.
absl::StatusOr<std::vector<int64_t>> RanksOf(absl::string_view field,
                                             const std::vector<int64_t>& ranks, int64_t size) {
  if (ranks.empty()) {
    std::vector<int64_t> all(size);
    for (int64_t i = 0; i < size; ++i) all[i] = i;
    return all;
  }
  if (static_cast<int64_t>(ranks.size()) != size) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", ranks.size(),
                                                   ranks.size() == 1 ? " rank" : " ranks",
                                                   " for a mesh of ", size, " ranks"));
  }
  absl::flat_hash_set<int64_t> seen;
  for (int64_t r : ranks) {
    if (r < 0 || !seen.insert(r).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": rank ", r, r < 0 ? " is negative" : " appears twice"));
    }
  }
  return ranks;
}

// `spec` with every Partial mesh dim Replicate.
absl::StatusOr<DistSpec> WithoutPartials(const DistSpec& spec) {
  DistState state = spec.state();
  for (int m = 0; m < state.ndim(); ++m) {
    if (state.placement(m).is_partial()) state = state.WithPlacement(m, Placement::Replicate());
  }
  return DistSpec::Create(spec.mesh(), state, spec.global_shape(), spec.dtype());
}

// Spec §14 "Choosing the crossing layouts": `plain` with each of `free`'s
// mesh dims either left as it is (Replicate) or sharding one tensor dim
// (appended to its order), in odometer order with `plain` first; only
// `plain` when that would be more than kMaxCrossingCandidates layouts.
std::vector<DistSpec> LayoutsAround(const DistSpec& plain, const std::vector<int>& free,
                                    int64_t budget) {
  std::vector<DistSpec> out = {plain};
  const int choices = plain.tensor_ndim() + 1;
  int64_t count = 1;
  for (size_t i = 0; i < free.size() && count <= budget; ++i) count *= choices;
  if (count > budget) return out;
  for (int64_t k = 1; k < count; ++k) {
    DistState state = plain.state();
    int64_t rest = k;
    for (int m : free) {
      const int choice = static_cast<int>(rest % choices);
      rest /= choices;
      if (choice > 0) state = state.WithPlacement(m, Placement::Shard(choice - 1));
    }
    absl::StatusOr<DistSpec> spec =
        DistSpec::Create(plain.mesh(), state, plain.global_shape(), plain.dtype());
    if (spec.ok()) out.push_back(*std::move(spec));
  }
  return out;
}

// The mesh dims of `spec` holding a Partial (with `replicate`, also a
// Replicate): those a crossing layout may shard instead.
std::vector<int> FreeMeshDims(const DistSpec& spec, bool replicate) {
  std::vector<int> free;
  for (int m = 0; m < spec.state().ndim(); ++m) {
    const Placement p = spec.state().placement(m);
    if (p.is_partial() || (replicate && p.is_replicate())) free.push_back(m);
  }
  return free;
}

// The slices the crossing's routes hold before balancing splits any: per
// destination rank, the source blocks its block meets. A layout's blocks
// are the product of one partition of [0, extent) per tensor dim (each
// mesh dim splits one tensor dim), so per tensor dim the count is the
// source intervals meeting the destination's, and their product is the
// rank's count. Cheap: per destination rank a binary search per tensor dim.
int64_t CrossingSlices(const CrossMeshPlan& p) {
  const DistSpec& src = p.crossing_src;
  std::vector<std::vector<int64_t>> begins(src.tensor_ndim()), ends(src.tensor_ndim());
  for (int64_t r = 0; r < src.mesh().num_ranks(); ++r) {
    const Box box = BlockOf(src, src.mesh().Coordinate(r));
    for (int d = 0; d < src.tensor_ndim(); ++d) {
      if (box[d].size == 0) continue;
      begins[d].push_back(box[d].offset);
      ends[d].push_back(box[d].offset + box[d].size);
    }
  }
  for (int d = 0; d < src.tensor_ndim(); ++d) {  // distinct, disjoint: sorted alike
    for (std::vector<int64_t>* v : {&begins[d], &ends[d]}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }
  int64_t total = 0;
  for (int64_t r = 0; r < p.crossing_dst.mesh().num_ranks(); ++r) {
    const Box box = BlockOf(p.crossing_dst, p.crossing_dst.mesh().Coordinate(r));
    int64_t slices = 1;
    for (int d = 0; d < src.tensor_ndim() && slices > 0; ++d) {
      if (box[d].size == 0) slices = 0;
      // Source intervals [b, e) with e > begin and b < end.
      const auto first = std::upper_bound(ends[d].begin(), ends[d].end(), box[d].offset);
      const auto last =
          std::lower_bound(begins[d].begin(), begins[d].end(), box[d].offset + box[d].size);
      slices *= std::max<int64_t>(0, (last - begins[d].begin()) - (first - ends[d].begin()));
    }
    total += slices;
  }
  return total;
}

// Whether the request's cost model prices an exchange (spec §14 "Price").
bool PricesExchanges(const PlanOptions& options) {
  return ResolvedCostModel(options)->ExchangeAmongRanksUs({0, 1}, {}, 1).has_value();
}

// `rounds` as the plan's crossing, with their load and the plan's peak.
void TakeCrossing(RouteRounds rounds, CrossMeshPlan* p) {
  p->routes = std::move(rounds.routes);
  p->route_rounds = std::move(rounds.round_of);
  p->rounds = rounds.rounds;
  p->load = LoadOfRoutes(p->routes, static_cast<int64_t>(p->participants.size()));
  int64_t crossing = 0;
  for (int64_t peak : p->CrossingPeakBytes()) crossing = std::max(crossing, peak);
  p->peak_bytes = std::max({p->before.peak_bytes, crossing, p->after.peak_bytes});
}

// Spec §14 "Memory": §11.1's routes, in rounds under options.max_memory
// (at most `max_slices` of them), with their load and the plan's peak.
absl::Status RouteCrossing(const PlanOptions& options, int64_t max_slices, CrossMeshPlan* p) {
  std::vector<Box> held, wanted;
  p->CrossingBoxes(&held, &wanted);
  const int64_t itemsize = ItemSize(p->crossing_src.dtype());
  RESHARD_ASSIGN_OR_RETURN(RouteRounds rounds,
                           SplitIntoRounds(held, wanted, RouteSlices(held, wanted), p->participants,
                                           itemsize, options.max_memory, max_slices));
  TakeCrossing(std::move(rounds), p);
  return absl::OkStatus();
}

// The total of the plan's parts, or none when the crossing is not priced:
// each round is one exchange, priced by the model's rule (spec §14 "Price").
void PriceCrossing(const PlanOptions& options, CrossMeshPlan* plan) {
  const std::shared_ptr<const CostModel>& model = ResolvedCostModel(options);
  double total = 0;
  for (int64_t r = 0; r < plan->rounds; ++r) {
    const std::optional<double> price = model->ExchangeAmongRanksUs(
        plan->participants, RoutesOfRound(plan->routes, plan->route_rounds, r),
        ItemSize(plan->crossing_src.dtype()));
    if (!price.has_value()) return;  // the model prices no exchange
    total += *price;
  }
  plan->crossing_cost = total;
  plan->cost = plan->before.cost + total + plan->after.cost;
}

// A crossing remade in 1 + chunks rounds (RelayedPlan, SpreadPlan), none
// when it does not apply or its routes could be more than max_routes.
using Remake = std::optional<CrossMeshPlan> (*)(const CrossMeshPlan& direct, int64_t chunks,
                                                int64_t rails_per_host, int64_t max_routes);

std::optional<CrossMeshPlan> Relay(const CrossMeshPlan& direct, int64_t chunks, int64_t,
                                   int64_t max_routes) {
  return RelayedPlan(direct, chunks, max_routes);
}

// Spec §14 "Relaying" and "Rails": `direct` (one round, priced) remade for
// kPipelineChunks in order, up to the first that is not cheaper than the
// one before (the cheapest so found); none when it does not apply, when
// none fits options.max_memory, or when its routes could be more than
// `*slices_left` (charged what is routed).
std::optional<CrossMeshPlan> CheapestRemade(const CrossMeshPlan& direct, Remake remake,
                                            const PlanOptions& options, int64_t* slices_left) {
  if (direct.rounds != 1 || !direct.cost.has_value()) return std::nullopt;
  const int64_t rails = ResolvedCostModel(options)->rails_per_host();
  std::optional<CrossMeshPlan> best;
  for (int64_t chunks : kPipelineChunks) {
    // More chunks, more routes: past the budget, so are the rest.
    std::optional<CrossMeshPlan> plan = remake(direct, chunks, rails, *slices_left);
    if (!plan.has_value()) break;
    *slices_left -= static_cast<int64_t>(plan->routes.size());
    if (plan->peak_bytes > options.max_memory) continue;
    PriceCrossing(options, &*plan);
    // Past the best, more chunks only add rounds (each one's latency).
    if (best.has_value() && *plan->cost >= *best->cost) break;
    best = std::move(plan);
  }
  return best;
}

}  // namespace

Box BlockOf(const DistSpec& spec, absl::Span<const int64_t> coordinate) {
  Box box;
  for (int d = 0; d < spec.tensor_ndim(); ++d) {
    std::vector<int64_t> sizes, indices;
    for (int m : spec.state().OrderOf(d)) {
      sizes.push_back(spec.mesh().size(m));
      indices.push_back(coordinate[m]);
    }
    box.push_back(NestedChunk(spec.global_shape()[d], sizes, indices));
  }
  return box;
}

namespace {

struct Ranks {
  std::vector<int64_t> src, dst, participants;
};

// A memory-limit error of the steps before or after, saying which part of
// the move it comes from (spec §14 "Memory"); other errors as they are.
absl::Status InPart(const absl::Status& status, absl::string_view part) {
  if (PlanLimitOf(status) != PlanLimit::kMaxMemory) return status;
  absl::string_view detail = status.message();
  absl::ConsumePrefix(&detail, "max_memory: ");
  return PlanLimitError(PlanLimit::kMaxMemory, absl::StrCat(part, ": ", detail));
}

// One candidate of spec §14: the plan through `crossing_src` and
// `crossing_dst`, routed and priced; ResourceExhausted past `max_slices`.
absl::StatusOr<CrossMeshPlan> PlanThrough(const CrossMeshRequest& request, const Ranks& ranks,
                                          DistSpec crossing_src, DistSpec crossing_dst,
                                          const PlanOptions& options, int64_t max_slices) {
  absl::StatusOr<Plan> before = PlanRedistribution(request.src, crossing_src, options);
  if (!before.ok()) return InPart(before.status(), "the steps before the crossing (source mesh)");
  absl::StatusOr<Plan> after = PlanRedistribution(crossing_dst, request.dst, options);
  if (!after.ok()) return InPart(after.status(), "the steps after the crossing (destination mesh)");
  CrossMeshPlan plan{ranks.src,
                     ranks.dst,
                     ranks.participants,
                     *std::move(before),
                     std::move(crossing_src),
                     std::move(crossing_dst),
                     {},
                     {},
                     1,
                     {},
                     *std::move(after)};
  if (const int64_t slices = CrossingSlices(plan); slices > max_slices) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "dst_ranks: the crossing would move ", slices, " slices, more than ", max_slices,
        " (its routes take time and memory in proportion); move fewer "
        "ranks at once or coarser blocks"));
  }
  RESHARD_RETURN_IF_ERROR(RouteCrossing(options, max_slices, &plan));
  PriceCrossing(options, &plan);
  return plan;
}

// The rank lists with their defaults, and their union.
absl::StatusOr<Ranks> RanksOfRequest(const CrossMeshRequest& request) {
  const int64_t named = request.src.mesh().num_ranks() + request.dst.mesh().num_ranks();
  if (named > kMaxCrossingRanks) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "dst_ranks: the move names ", named,
        " ranks (source and destination meshes together), "
        "more than ",
        kMaxCrossingRanks,
        " (planning reads every rank's block, and the plan lists every rank); move between "
        "smaller meshes"));
  }
  Ranks ranks;
  RESHARD_ASSIGN_OR_RETURN(ranks.src,
                           RanksOf("src_ranks", request.src_ranks, request.src.mesh().num_ranks()));
  RESHARD_ASSIGN_OR_RETURN(ranks.dst,
                           RanksOf("dst_ranks", request.dst_ranks, request.dst.mesh().num_ranks()));
  ranks.participants = ranks.src;
  ranks.participants.insert(ranks.participants.end(), ranks.dst.begin(), ranks.dst.end());
  std::sort(ranks.participants.begin(), ranks.participants.end());
  ranks.participants.erase(std::unique(ranks.participants.begin(), ranks.participants.end()),
                           ranks.participants.end());
  return ranks;
}

}  // namespace

absl::StatusOr<CrossMeshPlan> PlanPlainCrossMesh(const CrossMeshRequest& request,
                                                 const PlanOptions& options) {
  if (request.src.global_shape() != request.dst.global_shape() ||
      request.src.dtype() != request.dst.dtype()) {
    return absl::InvalidArgumentError(
        "dst: a cross-mesh move keeps the global shape and dtype of src");
  }
  RESHARD_ASSIGN_OR_RETURN(const Ranks ranks, RanksOfRequest(request));
  RESHARD_ASSIGN_OR_RETURN(DistSpec plain_src, WithoutPartials(request.src));
  RESHARD_ASSIGN_OR_RETURN(DistSpec plain_dst, WithoutPartials(request.dst));
  return PlanThrough(request, ranks, std::move(plain_src), std::move(plain_dst), options,
                     kMaxCrossingSlices);
}

namespace {

// `direct` with `rounds` as its crossing, unpriced; none without rounds.
std::optional<CrossMeshPlan> WithCrossing(const CrossMeshPlan& direct,
                                          std::optional<RouteRounds> rounds) {
  if (!rounds.has_value()) return std::nullopt;
  CrossMeshPlan plan = direct;
  TakeCrossing(*std::move(rounds), &plan);
  plan.crossing_cost.reset();
  plan.cost.reset();
  return plan;
}

}  // namespace

std::optional<CrossMeshPlan> RelayedPlan(const CrossMeshPlan& direct, int64_t chunks,
                                         int64_t max_routes) {
  std::vector<Box> held, wanted;
  direct.CrossingBoxes(&held, &wanted);
  return WithCrossing(direct, RelayThroughReplicas(held, direct.routes, chunks, max_routes));
}

std::optional<CrossMeshPlan> SpreadPlan(const CrossMeshPlan& direct, int64_t chunks,
                                        int64_t rails_per_host, int64_t max_routes) {
  std::vector<Box> held, wanted;
  direct.CrossingBoxes(&held, &wanted);
  return WithCrossing(direct, SpreadOverRails(held, wanted, direct.routes, direct.participants,
                                              rails_per_host, chunks, max_routes));
}

std::optional<CrossMeshPlan> StagedPlan(const CrossMeshPlan& direct, int64_t chunks,
                                        int64_t rails_per_host, int64_t max_routes) {
  // Each route makes at most two per chunk.
  if (2 * chunks * static_cast<int64_t>(direct.routes.size()) > max_routes) return std::nullopt;
  std::vector<Box> held, wanted;
  direct.CrossingBoxes(&held, &wanted);
  return WithCrossing(direct, StageOverRails(held, wanted, direct.routes, direct.participants,
                                             rails_per_host, chunks));
}

absl::StatusOr<CrossMeshPlan> PlanCrossMesh(const CrossMeshRequest& request,
                                            const PlanOptions& options) {
  absl::StatusOr<CrossMeshPlan> plain = PlanPlainCrossMesh(request, options);
  // Under a memory limit the other candidates may fit where the plain one
  // does not (spec §14 "Memory"); its error stands when none does.
  const bool over_memory = PlanLimitOf(plain.status()) == PlanLimit::kMaxMemory;
  if (!plain.ok() && !over_memory) return plain.status();
  if (plain.ok() && !plain->cost.has_value()) return plain;  // unpriced: nothing to choose by
  if (!plain.ok() && !PricesExchanges(options)) return plain.status();
  RESHARD_ASSIGN_OR_RETURN(const Ranks ranks, RanksOfRequest(request));
  RESHARD_ASSIGN_OR_RETURN(const DistSpec plain_src, WithoutPartials(request.src));
  RESHARD_ASSIGN_OR_RETURN(const DistSpec plain_dst, WithoutPartials(request.dst));
  std::optional<CrossMeshPlan> best;
  if (plain.ok()) best = *std::move(plain);
  // Each direct plan, then it remade; the earlier wins on ties.
  const auto consider = [&](CrossMeshPlan plan) {
    if (!best.has_value() || *plan.cost < *best->cost) best = std::move(plan);
  };
  // Every candidate's routes, and its scan of every participant's block,
  // count against one budget of kMaxCrossingSlices.
  const auto work = [&](const CrossMeshPlan& plan) {
    return static_cast<int64_t>(plan.routes.size() + ranks.participants.size());
  };
  int64_t slices_left = kMaxCrossingSlices - (best.has_value() ? work(*best) : 0);
  // A direct plan relayed (spec §14 "Relaying"), spread over rails and
  // staged over rails ("Rails", §11.2).
  const auto remade = [&](const CrossMeshPlan& direct) {
    std::vector<CrossMeshPlan> out;
    for (Remake remake : {Remake(Relay), Remake(SpreadPlan), Remake(StagedPlan)}) {
      if (std::optional<CrossMeshPlan> r = CheapestRemade(direct, remake, options, &slices_left)) {
        out.push_back(*std::move(r));
      }
    }
    return out;
  };
  if (best.has_value()) {
    for (CrossMeshPlan& r : remade(*best)) consider(std::move(r));
  }
  const std::vector<DistSpec> srcs =
      LayoutsAround(plain_src, FreeMeshDims(request.src, false), kMaxCrossingCandidates);
  const std::vector<DistSpec> dsts =
      LayoutsAround(plain_dst, FreeMeshDims(request.dst, true),
                    kMaxCrossingCandidates / static_cast<int64_t>(srcs.size()));
  for (size_t i = 0; i < srcs.size(); ++i) {
    for (size_t j = (i == 0 ? 1 : 0); j < dsts.size() && slices_left > 0; ++j) {
      absl::StatusOr<CrossMeshPlan> plan =
          PlanThrough(request, ranks, srcs[i], dsts[j], options, slices_left);
      // A candidate past a limit or without a plan is not taken.
      if (!plan.ok()) continue;
      slices_left -= work(*plan);
      std::vector<CrossMeshPlan> others = remade(*plan);
      consider(*std::move(plan));
      for (CrossMeshPlan& r : others) consider(std::move(r));
    }
  }
  if (!best.has_value()) return plain.status();
  return *std::move(best);
}

namespace {

// The position of `rank` in the unordered `ranks`, or -1.
int64_t PositionIn(const std::vector<int64_t>& ranks, int64_t rank) {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : it - ranks.begin();
}

}  // namespace

int64_t CrossMeshPlan::ParticipantIndex(int64_t rank) const {
  auto it = std::lower_bound(participants.begin(), participants.end(), rank);
  return it == participants.end() || *it != rank ? -1 : it - participants.begin();
}

void CrossMeshPlan::CrossingBoxes(std::vector<Box>* held, std::vector<Box>* wanted) const {
  const Box nothing(crossing_src.global_shape().size());
  held->assign(participants.size(), nothing);
  wanted->assign(participants.size(), nothing);
  for (size_t r = 0; r < src_ranks.size(); ++r) {
    (*held)[ParticipantIndex(src_ranks[r])] =
        BlockOf(crossing_src, crossing_src.mesh().Coordinate(static_cast<int64_t>(r)));
  }
  for (size_t r = 0; r < dst_ranks.size(); ++r) {
    (*wanted)[ParticipantIndex(dst_ranks[r])] =
        BlockOf(crossing_dst, crossing_dst.mesh().Coordinate(static_cast<int64_t>(r)));
  }
}

int64_t CrossMeshPlan::SrcIndex(int64_t rank) const { return PositionIn(src_ranks, rank); }

int64_t CrossMeshPlan::DstIndex(int64_t rank) const { return PositionIn(dst_ranks, rank); }

bool CrossMeshPlan::Relayed() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(&held, &wanted);
  return std::any_of(routes.begin(), routes.end(), [&](const SliceRoute& r) {
    return BoxElements(MeetBoxes(r.box, held[r.sender], r.box)) != BoxElements(r.box);
  });
}

bool CrossMeshPlan::Staged() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(&held, &wanted);
  return std::any_of(routes.begin(), routes.end(), [&](const SliceRoute& r) {
    return !BoxContains(held[r.sender], r.box) && !BoxContains(wanted[r.sender], r.box);
  });
}

absl::string_view CrossMeshPlan::RoundsFor() const {
  if (rounds == 1) return "";
  if (Staged()) return "rails";
  return Relayed() ? "relaying" : "memory";
}

namespace {}  // namespace

std::vector<int64_t> CrossMeshPlan::BytesSent() const {
  return RouteBytes(routes, participants.size(), ItemSize(crossing_src.dtype()), /*sent=*/true);
}

std::vector<int64_t> CrossMeshPlan::BytesReceived() const {
  return RouteBytes(routes, participants.size(), ItemSize(crossing_src.dtype()), /*sent=*/false);
}

std::vector<int64_t> CrossMeshPlan::ReceiveLowerBoundBytes() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(&held, &wanted);
  const int64_t itemsize = ItemSize(crossing_src.dtype());
  std::vector<int64_t> bound(participants.size(), 0);
  for (size_t i = 0; i < participants.size(); ++i) {
    bound[i] =
        itemsize * (BoxElements(wanted[i]) - BoxElements(MeetBoxes(wanted[i], held[i], wanted[i])));
  }
  return bound;
}

std::vector<int64_t> CrossMeshPlan::CrossingPeakBytes() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(&held, &wanted);
  return RoundsPeakBytes(held, wanted, routes, route_rounds, rounds,
                         ItemSize(crossing_src.dtype()));
}

int64_t CrossMeshPlan::LeastCrossingBytes() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(&held, &wanted);
  return LeastCrossingMemory(held, wanted, routes, ItemSize(crossing_src.dtype()));
}

std::string CrossMeshPlan::Summary() const {
  return absl::StrCat(before.Trace(), " on ", crossing_src.mesh().ToString(), " ranks [",
                      absl::StrJoin(src_ranks, ","), "] -> exchange (", routes.size(), " slices",
                      rounds > 1 ? absl::StrCat(" in ", rounds, " rounds") : "", ") -> ",
                      after.Trace(), " on ", crossing_dst.mesh().ToString(), " ranks [",
                      absl::StrJoin(dst_ranks, ","), "]");
}

}  // namespace reshard
