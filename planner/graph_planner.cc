#include "planner/graph_planner.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/remaining_cost_bound.h"
#include "planner/state_search.h"
#include "planner/transitions.h"

namespace reshard {
namespace {

// The edge from `a` to `b` (spec §4). Each step changes one mesh dim to one
// placement, so at most one edge joins two states; the search does not keep
// edges, so the path's steps are found again here, a few per plan.
Step EdgeBetween(const DistState& a, const DistState& b, int tensor_ndim, unsigned partial_ops) {
  std::vector<Step> steps;
  AppendTransitions(a, tensor_ndim, partial_ops, &steps);
  for (const Step& step : steps) {
    if (ApplyStep(a, step) == b) return step;
  }
  return steps.front();  // unreachable: b was reached from a by an edge
}

absl::Status Failure(StateSearch::Outcome outcome, const DistState& src, const DistState& dst,
                     int64_t max_expanded) {
  if (outcome == StateSearch::Outcome::kBound) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the graph search expanded ", max_expanded,
        " states without reaching the destination; raise the bound (--max-states)"));
  }
  return absl::NotFoundError(absl::StrCat("no_path: ", dst.ToString(),
                                          " is not reachable from ", src.ToString()));
}

}  // namespace

absl::StatusOr<GraphPath> FindGraphPath(const DistState& src, const DistState& dst,
                                        int tensor_ndim, const BoundCostModel& model,
                                        int64_t max_expanded, GraphSearch kind) {
  const unsigned partial_ops = src.PartialOps() | dst.PartialOps();
  const RemainingCostBound bound(dst, model);
  const bool prune = kind == GraphSearch::kPruned && bound.useful();
  StateSearch search(tensor_ndim, partial_ops, model, prune ? &bound : nullptr);
  const DistState goal[] = {dst};

  int64_t expanded = 0;
  StateSearch::Pass pass = StateSearch::Pass::Dijkstra();
  if (prune) {
    StateSearch::Outcome found = search.Run(src, goal, StateSearch::Pass::Astar(), max_expanded);
    expanded += search.expanded();
    if (found != StateSearch::Outcome::kReached) {
      return Failure(found, src, dst, max_expanded);
    }
    pass = StateSearch::Pass::Pruned(search.CostTo(dst));
  }
  StateSearch::Outcome found = search.Run(src, goal, pass, max_expanded - expanded);
  expanded += search.expanded();
  if (found != StateSearch::Outcome::kReached) return Failure(found, src, dst, max_expanded);

  GraphPath path;
  path.cost = search.CostTo(dst);
  path.expanded = expanded;
  path.states = search.PathTo(dst);
  for (size_t i = 0; i + 1 < path.states.size(); ++i) {
    path.steps.push_back(
        EdgeBetween(path.states[i], path.states[i + 1], tensor_ndim, partial_ops));
    path.costs.push_back(model.StepCost(path.states[i], path.steps.back()));
  }
  return path;
}

}  // namespace reshard
