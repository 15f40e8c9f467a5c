#include "planner/planner.h"

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/layout/chunk.h"
#include "planner/search/graph_planner.h"
#include "planner/search/greedy_planner.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"
#include "planner/steps/step_memory.h"

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
  if (options.max_memory < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max memory: ", options.max_memory, " bytes; must be >= 1"));
  }
  if (!options.coordinate.empty()) return src.mesh().ValidateCoordinate(options.coordinate);
  return absl::OkStatus();
}

Plan PlanOf(GraphPath path, const DistSpec& src, const std::vector<int64_t>& coord) {
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

absl::StatusOr<Plan> GraphPlan(const DistSpec& src, const DistSpec& dst,
                               const BoundCostModel& model, const PlanOptions& options,
                               const std::vector<int64_t>& coord) {
  RESHARD_ASSIGN_OR_RETURN(GraphPath path,
                           FindGraphPath(src.state(), dst.state(), src.tensor_ndim(), model,
                                         options.max_expanded_states));
  return PlanOf(std::move(path), src, coord);
}

// Spec §5.2: the cheapest plan on the native graph, under the memory limit.
absl::StatusOr<Plan> NativePlan(const DistSpec& src, const DistSpec& dst,
                                const BoundCostModel& model, const PlanOptions& options,
                                const std::vector<int64_t>& coord) {
  if (options.algorithm == Algorithm::kGreedy) {
    return absl::InvalidArgumentError(
        "algorithm: greedy is a pytorch-mode planner; native mode always searches its graph "
        "(use --mode pytorch for greedy plans)");
  }
  if (LocalBytes(src.state(), src.mesh(), src.global_shape(), src.dtype()) > options.max_memory) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "max memory: the source shard alone takes ",
        LocalBytes(src.state(), src.mesh(), src.global_shape(), src.dtype()),
        " bytes per rank, over --max-memory ", options.max_memory));
  }
  absl::StatusOr<GraphPath> path =
      FindNativePath(src.mesh(), src.global_shape(), src.dtype(), src.state(), dst.state(), model,
                     options.max_expanded_states, options.max_memory);
  if (absl::IsNotFound(path.status()) &&
      options.max_memory != std::numeric_limits<int64_t>::max()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "max memory: no plan keeps every rank under ", options.max_memory,
        " bytes (--max-memory); raise it, or drop it to see the plan's peak"));
  }
  if (!path.ok()) return path.status();
  Plan plan = PlanOf(*std::move(path), src, coord);
  plan.mode = PlanMode::kNative;
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

// Spec §5, §8, §9.
absl::StatusOr<Plan> PyTorchPlan(const DistSpec& src, const DistSpec& dst,
                                 const BoundCostModel& model, const PlanOptions& options,
                                 const std::vector<int64_t>& coord) {

  // Spec §9: the greedy planner cannot express shard orders.
  const bool needs_graph = src.strided_input() || dst.strided_input() ||
                           !src.state().HasDefaultOrder() || !dst.state().HasDefaultOrder();
  if (needs_graph || options.algorithm == Algorithm::kGraph) {
    absl::StatusOr<Plan> plan = GraphPlan(src, dst, model, options, coord);
    if (plan.status().code() != absl::StatusCode::kResourceExhausted) return plan;
    // Suggest the greedy planner only where it could be used.
    return absl::ResourceExhaustedError(absl::StrCat(
        plan.status().message(),
        needs_graph ? "; the greedy planner cannot be used instead: these layouts have shard "
                      "orders (spec §9)"
                    : " or use the greedy planner (--algorithm greedy)"));
  }
  return GreedyPlan(src, dst, model, coord);
}

}  // namespace

PlanMode ResolvedMode(const PlanOptions& options) {
  if (options.mode != PlanMode::kAuto) return options.mode;
  return options.cost_model != nullptr && !options.cost_model->prices_native_steps()
             ? PlanMode::kPyTorch
             : PlanMode::kNative;
}

const std::shared_ptr<const CostModel>& ResolvedCostModel(const PlanOptions& options) {
  if (options.cost_model != nullptr) return options.cost_model;
  static const auto* const native = new std::shared_ptr<const CostModel>(DefaultNativeCostModel());
  static const auto* const pytorch = new std::shared_ptr<const CostModel>(DefaultCostModel());
  return ResolvedMode(options) == PlanMode::kNative ? *native : *pytorch;
}

namespace {

// `requested` with mode and model decided. InvalidArgument when native mode
// is asked of a model that prices compat steps only.
absl::StatusOr<PlanOptions> Resolve(const PlanOptions& requested) {
  PlanOptions out = requested;
  out.mode = ResolvedMode(requested);
  out.cost_model = ResolvedCostModel(requested);
  if (out.cost_model == nullptr) return absl::InternalError("no native cost model is built in");
  if (out.mode == PlanMode::kNative && !out.cost_model->prices_native_steps()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mode: native planning needs a cost model that prices native steps; \"",
        out.cost_model->fingerprint(), "\" prices compat steps only (use --mode pytorch, or "
        "--cost-model nccl)"));
  }
  return out;
}

}  // namespace

absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& requested) {
  RESHARD_ASSIGN_OR_RETURN(const PlanOptions options, Resolve(requested));
  RESHARD_RETURN_IF_ERROR(CheckCompatible(src, dst, options));
  const std::unique_ptr<const BoundCostModel> model = options.cost_model->Bind(
      CostProblem{src.mesh(), src.global_shape(), ItemSize(src.dtype())});
  std::vector<int64_t> coord = options.coordinate;
  if (coord.empty()) coord.assign(src.mesh().ndim(), 0);
  absl::StatusOr<Plan> plan = options.mode == PlanMode::kNative
                                  ? NativePlan(src, dst, *model, options, coord)
                                  : PyTorchPlan(src, dst, *model, options, coord);
  if (!plan.ok()) return plan;
  plan->peak_bytes =
      PlanPeakBytes(*plan, src.mesh(), src.global_shape(), src.dtype(), model->memory_backend());
  if (plan->peak_bytes > options.max_memory) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "max memory: the pytorch-mode plan needs ", plan->peak_bytes,
        " bytes per rank, over --max-memory ", options.max_memory,
        "; native mode plans under a memory limit (--mode native)"));
  }
  return plan;
}

}  // namespace reshard
