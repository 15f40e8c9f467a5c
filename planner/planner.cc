#include "planner/planner.h"

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/chunk.h"
#include "planner/graph_planner.h"
#include "planner/greedy_planner.h"
#include "planner/step.h"

namespace reshard {
namespace {

absl::Status CheckCompatible(const DistSpec& src, const DistSpec& dst, const PlanOptions& options) {
  if (src.mesh() != dst.mesh()) {
    return absl::InvalidArgumentError(absl::StrCat("source mesh ", src.mesh().ToString(),
                                                   " differs from destination mesh ",
                                                   dst.mesh().ToString()));
  }
  if (src.global_shape() != dst.global_shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "source shape [", absl::StrJoin(src.global_shape(), ","), "] differs from destination [",
        absl::StrJoin(dst.global_shape(), ","), "]"));
  }
  if (src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("source dtype ", DTypeName(src.dtype()),
                                                   " differs from destination dtype ",
                                                   DTypeName(dst.dtype())));
  }
  if (options.max_expanded_states < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max expanded states: ",
                                                   options.max_expanded_states, "; must be >= 1"));
  }
  if (options.cost_model == nullptr) {
    return absl::InvalidArgumentError(
        "PlanOptions::cost_model is null; pass a model (e.g. MakeCostModel(\"pytorch\"))");
  }
  if (!options.coordinate.empty()) return src.mesh().ValidateCoordinate(options.coordinate);
  return absl::OkStatus();
}

absl::StatusOr<Plan> GraphPlan(const DistSpec& src, const DistSpec& dst,
                               const BoundCostModel& model, const PlanOptions& options,
                               const std::vector<int64_t>& coord) {
  RESHARD_ASSIGN_OR_RETURN(GraphPath path,
                           FindGraphPath(src.state(), dst.state(), src.tensor_ndim(), model,
                                         options.max_expanded_states));
  Plan plan;
  plan.algorithm = Algorithm::kGraph;
  plan.cost = path.cost;
  plan.expanded_states = path.expanded;
  plan.states = std::move(path.states);
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const Step& step = path.steps[i];
    plan.steps.push_back(
        {step, LogicalShape(plan.states[i], step, src.mesh(), src.global_shape(), coord),
         path.costs[i]});
  }
  return plan;
}

// Spec §8 (compat): a greedy step on mesh dim k reports the global shape split
// by the source Shards of mesh dims < k, whatever state it starts from.
std::vector<std::vector<int64_t>> GreedyLogicalShapes(const DistSpec& src,
                                                      const std::vector<int64_t>& coord) {
  const DeviceMesh& mesh = src.mesh();
  std::vector<std::vector<int64_t>> logical(mesh.ndim());
  std::vector<int64_t> shape = src.global_shape();
  for (int m = 0; m < mesh.ndim(); ++m) {
    logical[m] = shape;
    Placement p = src.state().placement(m);
    if (p.is_shard()) shape[p.dim()] = ChunkSize(shape[p.dim()], mesh.size(m), coord[m]);
  }
  return logical;
}

absl::StatusOr<Plan> GreedyPlan(const DistSpec& src, const DistSpec& dst,
                                const BoundCostModel& model, const std::vector<int64_t>& coord) {
  RESHARD_ASSIGN_OR_RETURN(std::vector<Step> steps,
                           GreedySteps(src.mesh(), src.state().placements(),
                                       dst.state().placements()));
  const std::vector<std::vector<int64_t>> logical = GreedyLogicalShapes(src, coord);
  Plan plan;
  plan.algorithm = Algorithm::kGreedy;
  plan.states.push_back(src.state());
  for (const Step& step : steps) {
    const double cost = model.StepCost(plan.states.back(), step);
    plan.cost += cost;
    plan.steps.push_back({step, logical[step.mesh_dim()], cost});
    plan.states.push_back(ApplyStep(plan.states.back(), step));
  }
  return plan;
}

}  // namespace

absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& options) {
  RESHARD_RETURN_IF_ERROR(CheckCompatible(src, dst, options));
  const std::unique_ptr<const BoundCostModel> model = options.cost_model->Bind(
      CostProblem{src.mesh(), src.global_shape(), ItemSize(src.dtype())});
  std::vector<int64_t> coord = options.coordinate;
  if (coord.empty()) coord.assign(src.mesh().ndim(), 0);

  // Spec §9: the greedy planner cannot express shard orders.
  const bool needs_graph = src.strided_input() || dst.strided_input() ||
                           !src.state().HasDefaultOrder() || !dst.state().HasDefaultOrder();
  if (needs_graph || options.algorithm == Algorithm::kGraph) {
    absl::StatusOr<Plan> plan = GraphPlan(src, dst, *model, options, coord);
    if (plan.status().code() != absl::StatusCode::kResourceExhausted) return plan;
    // Suggest the greedy planner only where it could be used.
    return absl::ResourceExhaustedError(absl::StrCat(
        plan.status().message(),
        needs_graph ? "; the greedy planner cannot be used instead: these layouts have shard "
                      "orders (spec §9)"
                    : " or use the greedy planner (--algorithm greedy)"));
  }
  return GreedyPlan(src, dst, *model, coord);
}

}  // namespace reshard
