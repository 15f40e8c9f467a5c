#include "planner/search/graph_planner.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/costs/bounds/remaining_cost_bound.h"
#include "planner/search/state_search.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

// A step of a path and its price.
struct PricedStep {
  Step step;
  double cost;
};

// The cheapest edge from `a` to `b`, the first of equals, as the search
// relaxed it, and its price: each edge to b priced once (an exchange's
// price is a routing). The search does not keep edges, so a path's steps
// are found again here, a few per plan. Nullopt when there is none.
std::optional<PricedStep> EdgeBetween(const DistState& a, const DistState& b,
                                      const EdgeSource& edges, const BoundCostModel& model) {
  std::vector<Step> steps;
  steps.reserve(64);  // one allocation for the few dozen edges of a state, not five
  edges.Append(a, &steps);
  std::optional<PricedStep> best;
  for (const Step& step : steps) {
    if (ApplyStep(a, step) != b) continue;
    const double cost = model.StepCost(a, step);
    if (!best.has_value() || cost < best->cost) best = PricedStep{step, cost};
  }
  return best;
}

// `states` as a path on `edges` (its cost summed left to right, as a search
// sums it), or nullopt when two of them are not joined by an edge.
std::optional<GraphPath> PathThrough(absl::Span<const DistState> states, const EdgeSource& edges,
                                     const BoundCostModel& model) {
  if (states.empty()) return std::nullopt;
  GraphPath path;
  path.states.assign(states.begin(), states.end());
  for (size_t i = 0; i + 1 < states.size(); ++i) {
    std::optional<PricedStep> step = EdgeBetween(states[i], states[i + 1], edges, model);
    if (!step.has_value()) return std::nullopt;
    path.steps.push_back(std::move(step->step));
    path.costs.push_back(step->cost);
    path.cost += step->cost;
  }
  return path;
}

// The compat graph's one edge from `a` to `b` (spec §4): it changes one mesh
// dim's placement, and nothing else but that mesh dim's order position.
// EdgeBetween's answer, without generating a's edges again.
PricedStep CompatEdgeBetween(const DistState& a, const DistState& b, const BoundCostModel& model) {
  int m = 0;
  while (a.placement(m) == b.placement(m)) ++m;
  const Step step = MakeStep(MeshDimSet::Single(m), a.placement(m), b.placement(m));
  return {step, model.StepCost(a, step)};
}

// `edge_between(a, b)`: the step from a to b on the searched graph, priced.
template <typename EdgeBetweenFn>
GraphPath PathOf(const StateSearch& search, const DistState& dst, int64_t expanded,
                 EdgeBetweenFn edge_between) {
  GraphPath path;
  path.cost = search.CostTo(dst);
  path.expanded = expanded;
  path.states = search.PathTo(dst);
  for (size_t i = 0; i + 1 < path.states.size(); ++i) {
    PricedStep step = edge_between(path.states[i], path.states[i + 1]);
    path.steps.push_back(std::move(step.step));
    path.costs.push_back(step.cost);
  }
  return path;
}

}  // namespace

absl::Status SearchFailure(const StateSearch& search, StateSearch::Outcome outcome,
                           const DistState& src, const DistState& dst, const SearchLimits& limits) {
  if (outcome != StateSearch::Outcome::kBound) {
    return absl::NotFoundError(
        absl::StrCat("no_path: ", dst.ToString(), " is not reachable from ", src.ToString()));
  }
  const SearchLimit limit = search.limit_hit();
  const std::string what =
      limit == SearchLimit::kSearchEdges
          ? absl::StrCat("generated ", search.edges(), " edges and the next state's would pass ",
                         SearchLimitField(limit), " (", limits.max_search_edges, ")")
          : absl::StrCat("expanded ", limits.max_expanded_states, " states, ",
                         SearchLimitField(limit));
  return PlanLimitError(
      limit == SearchLimit::kSearchEdges ? PlanLimit::kMaxSearchEdges
                                         : PlanLimit::kMaxExpandedStates,
      absl::StrCat("the graph search from ", src.ToString(), " to ", dst.ToString(), " ", what,
                   " without reaching the destination; raise the limit"));
}

absl::StatusOr<GraphPath> FindGraphPath(const DistState& src, const DistState& dst, int tensor_ndim,
                                        const BoundCostModel& model, const SearchLimits& limits,
                                        GraphSearch kind) {
  const CompatEdges edges(tensor_ndim, src.PartialOps() | dst.PartialOps());
  const RemainingCostBound bound(dst, model);
  const bool prune = kind == GraphSearch::kPruned && bound.useful();
  StateSearch search(edges, model, prune ? &bound : nullptr);
  const DistState goal[] = {dst};

  int64_t expanded = 0;
  StateSearch::Pass pass = StateSearch::Pass::Dijkstra();
  if (prune) {
    StateSearch::Outcome found = search.Run(src, goal, StateSearch::Pass::Astar(),
                                            limits.max_expanded_states, limits.max_search_edges);
    expanded += search.expanded();
    if (found != StateSearch::Outcome::kReached) {
      return SearchFailure(search, found, src, dst, limits);
    }
    pass = StateSearch::Pass::Pruned(search.CostTo(dst));
  }
  StateSearch::Outcome found =
      search.Run(src, goal, pass, limits.max_expanded_states - expanded, limits.max_search_edges);
  expanded += search.expanded();
  if (found != StateSearch::Outcome::kReached) {
    return SearchFailure(search, found, src, dst, limits);
  }
  return PathOf(search, dst, expanded, [&](const DistState& a, const DistState& b) {
    return CompatEdgeBetween(a, b, model);
  });
}

StateSearch::Outcome SearchToward(StateSearch* search, const DistState& src, const DistState& dst,
                                  const RemainingCostBound* bound, const SearchLimits& limits) {
  const bool astar = bound != nullptr && bound->useful();
  search->SetBound(astar ? bound : nullptr);
  const DistState goal[] = {dst};
  return search->Run(src, goal, astar ? StateSearch::Pass::Astar() : StateSearch::Pass::Dijkstra(),
                     limits.max_expanded_states, limits.max_search_edges);
}

absl::StatusOr<GraphPath> FindPathOn(const EdgeSource& edges, const DistState& src,
                                     const DistState& dst, const BoundCostModel& model,
                                     const SearchLimits& limits, const RemainingCostBound* bound,
                                     absl::Span<const DistState> incumbent) {
  std::optional<GraphPath> known = PathThrough(incumbent, edges, model);
  if (known.has_value() && (known->states.front() != src || known->states.back() != dst)) {
    known.reset();
  }
  StateSearch search(edges, model, nullptr);
  search.KeepOnlyOpenEdges();
  if (known.has_value()) search.SetIncumbent(known->cost);
  const StateSearch::Outcome found = SearchToward(&search, src, dst, bound, limits);
  const auto edge_between = [&](const DistState& a, const DistState& b) {
    return *EdgeBetween(a, b, edges, model);  // the search relaxed an edge from a to b
  };
  if (found == StateSearch::Outcome::kReached) {
    return PathOf(search, dst, search.expanded(), edge_between);
  }
  if (!known.has_value()) return SearchFailure(search, found, src, dst, limits);
  // Stopped by a limit (exhausted cannot happen: the incumbent's own keys
  // stay within its cost): the cheaper of the incumbent and the search's
  // path to dst so far.
  GraphPath best = search.CostTo(dst) < known->cost
                       ? PathOf(search, dst, search.expanded(), edge_between)
                       : *std::move(known);
  best.expanded = search.expanded();
  best.stopped = found == StateSearch::Outcome::kBound ? search.limit_hit() : SearchLimit::kNone;
  return best;
}

absl::StatusOr<GraphPath> FindNativePath(const DeviceMesh& mesh,
                                         absl::Span<const int64_t> global_shape, DType dtype,
                                         const DistState& src, const DistState& dst,
                                         const BoundCostModel& model, const SearchLimits& limits,
                                         int64_t max_memory,
                                         absl::Span<const DistState> incumbent) {
  const NativeEdges edges(mesh, std::vector<int64_t>(global_shape.begin(), global_shape.end()),
                          dtype, dst, src.PartialOps() | dst.PartialOps(), max_memory,
                          model.memory_backend(), model.rails_per_host());
  const RemainingCostBound bound(dst, model, RemainingCostBound::Graph::kNative);
  return FindPathOn(edges, src, dst, model, limits, &bound, incumbent);
}

}  // namespace reshard
