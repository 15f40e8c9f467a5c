#include "planner/planner.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/layout/chunk.h"
#include "planner/search/graph_planner.h"
#include "planner/search/greedy_planner.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"
#include "planner/steps/step_memory.h"

namespace reshard {
namespace {

SearchLimits LimitsOf(const PlanOptions& options) {
  return SearchLimits{options.max_expanded_states, options.max_search_edges};
}

Plan PlanOf(GraphPath path, const DistSpec& src, const std::vector<int64_t>& coord) {
  Plan plan;
  plan.algorithm = Algorithm::kGraph;
  plan.cost = path.cost;
  plan.expanded_states = path.expanded;
  plan.states = std::move(path.states);
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const Step& step = path.steps[i];
    plan.steps.push_back({step,
                          LogicalShape(plan.states[i], step, src.mesh(), src.global_shape(), coord),
                          path.costs[i]});
  }
  return plan;
}

absl::StatusOr<Plan> GraphPlan(const DistSpec& src, const DistSpec& dst,
                               const BoundCostModel& model, const PlanOptions& options,
                               const std::vector<int64_t>& coord) {
  RESHARD_ASSIGN_OR_RETURN(
      GraphPath path,
      FindGraphPath(src.state(), dst.state(), src.tensor_ndim(), model, LimitsOf(options)));
  return PlanOf(std::move(path), src, coord);
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
  RESHARD_ASSIGN_OR_RETURN(
      std::vector<Step> steps,
      GreedySteps(src.mesh(), src.state().placements(), dst.state().placements()));
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

// Whether a search ended at max_expanded_states or max_search_edges.
bool StoppedByLimit(const absl::Status& status) {
  const std::optional<PlanLimit> limit = PlanLimitOf(status);
  return limit == PlanLimit::kMaxExpandedStates || limit == PlanLimit::kMaxSearchEdges;
}

// Spec §9: the greedy planner cannot express shard orders.
bool NeedsGraph(const DistSpec& src, const DistSpec& dst) {
  return src.strided_input() || dst.strided_input() || !src.state().HasDefaultOrder() ||
         !dst.state().HasDefaultOrder();
}

// Spec §5, §8, §9.
absl::StatusOr<Plan> PyTorchPlan(const DistSpec& src, const DistSpec& dst,
                                 const BoundCostModel& model, const PlanOptions& options,
                                 const std::vector<int64_t>& coord) {
  const bool needs_graph = NeedsGraph(src, dst);
  if (needs_graph || options.algorithm == Algorithm::kGraph) {
    absl::StatusOr<Plan> plan = GraphPlan(src, dst, model, options, coord);
    if (!StoppedByLimit(plan.status())) return plan;
    // Suggest the greedy planner only where it could be used.
    absl::Status advised(plan.status().code(),
                         absl::StrCat(plan.status().message(),
                                      needs_graph ? "; the greedy planner cannot be used instead: "
                                                    "these layouts have shard orders (spec §9)"
                                                  : " or use the greedy planner (`algorithm` "
                                                    "greedy)"));
    plan.status().ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
      advised.SetPayload(url, payload);
    });
    return advised;
  }
  return GreedyPlan(src, dst, model, coord);
}

// Spec §5.2 item 9: pytorch mode's plan, priced by the native model, is a
// path on the native graph where its steps fit; its states are the native
// search's incumbent. None when pytorch mode has no plan, or when it needs
// its graph search and `graph` is false (that search, priced by the native
// model, costs as much as the native one: it is run only once a limit has
// stopped the native search).
std::optional<Plan> IncumbentPlan(const DistSpec& src, const DistSpec& dst,
                                  const BoundCostModel& model, const PlanOptions& options,
                                  const std::vector<int64_t>& coord, bool graph) {
  if (!graph && NeedsGraph(src, dst)) return std::nullopt;
  PlanOptions pytorch = options;
  pytorch.algorithm = Algorithm::kAuto;
  absl::StatusOr<Plan> plan = PyTorchPlan(src, dst, model, pytorch, coord);
  if (!plan.ok()) return std::nullopt;
  return *std::move(plan);
}

// What a plan found by a search that `stopped` at a limit says (Plan::not_optimal).
std::string StoppedNote(SearchLimit stopped, const PlanOptions& options) {
  if (stopped == SearchLimit::kNone) return "";
  const int64_t value =
      stopped == SearchLimit::kSearchEdges ? options.max_search_edges : options.max_expanded_states;
  return absl::StrCat("the search stopped at ", SearchLimitField(stopped), " (", value,
                      ") before proving a plan cheapest; this is the cheapest it found (at most "
                      "pytorch mode's cost); raise the limit for the optimum");
}

// Spec §5.2 item 10: where the model cannot tell the native optimum from
// pytorch mode's greedy plan (the latter's price, by the native model,
// within the model's tie resolution of the former's), pytorch mode's plan,
// if it fits the memory limit. Not where pytorch mode needs its graph search
// (its plan is then not at hand: it costs as much as the native search).
Plan PreferPyTorchWithinResolution(Plan native, std::optional<Plan> greedy, const DistSpec& src,
                                   const BoundCostModel& model, const PlanOptions& options) {
  const double resolution = options.cost_model->tie_resolution();
  if (!(resolution > 0) || !greedy.has_value() || !native.not_optimal.empty() ||
      !(greedy->cost <= native.cost * (1 + resolution)) ||
      PlanPeakBytes(*greedy, src.mesh(), src.global_shape(), src.dtype(), model.memory_backend()) >
          options.max_memory) {
    return native;
  }
  greedy->mode = PlanMode::kNative;
  return *std::move(greedy);
}

// Spec §5.2: the cheapest plan on the native graph, under the memory limit.
absl::StatusOr<Plan> NativePlan(const DistSpec& src, const DistSpec& dst,
                                const BoundCostModel& model, const PlanOptions& options,
                                const std::vector<int64_t>& coord) {
  const int64_t source_bytes = LocalBytes(src.state(), src.mesh(), src.global_shape(), src.dtype());
  if (source_bytes > options.max_memory) {
    return PlanLimitError(PlanLimit::kMaxMemory,
                          absl::StrCat("the source shard alone takes ", source_bytes,
                                       " bytes per rank, over the limit of ", options.max_memory));
  }
  const auto search = [&](absl::Span<const DistState> incumbent) {
    return FindNativePath(src.mesh(), src.global_shape(), src.dtype(), src.state(), dst.state(),
                          model, LimitsOf(options), options.max_memory, incumbent);
  };
  std::optional<Plan> greedy = IncumbentPlan(src, dst, model, options, coord, false);
  absl::StatusOr<GraphPath> path =
      search(greedy.has_value() ? greedy->states : std::vector<DistState>());
  if (!greedy.has_value() && StoppedByLimit(path.status())) {
    const std::optional<Plan> incumbent = IncumbentPlan(src, dst, model, options, coord, true);
    if (incumbent.has_value()) path = search(incumbent->states);
  }
  if (absl::IsNotFound(path.status()) &&
      options.max_memory != std::numeric_limits<int64_t>::max()) {
    return PlanLimitError(PlanLimit::kMaxMemory,
                          absl::StrCat("no plan keeps every rank under ", options.max_memory,
                                       " bytes; raise it, or drop it to see the plan's peak"));
  }
  if (!path.ok()) return path.status();
  const SearchLimit stopped = path->stopped;
  Plan plan = PlanOf(*std::move(path), src, coord);
  plan.mode = PlanMode::kNative;
  plan.not_optimal = StoppedNote(stopped, options);
  return PreferPyTorchWithinResolution(std::move(plan), std::move(greedy), src, model, options);
}

}  // namespace

absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& options) {
  return PlanRedistribution(PlanRequest{src, dst, options});
}

absl::StatusOr<Plan> PlanRedistribution(const PlanRequest& request) {
  RESHARD_RETURN_IF_ERROR(ValidatePlanRequest(request));
  const DistSpec& src = request.src;
  const DistSpec& dst = request.dst;
  PlanOptions options = request.options;
  options.mode = ResolvedMode(request.options);
  options.cost_model = ResolvedCostModel(request.options);
  const std::unique_ptr<const BoundCostModel> model =
      options.cost_model->Bind(CostProblem{src.mesh(), src.global_shape(), ItemSize(src.dtype())});
  std::vector<int64_t> coord = options.coordinate;
  if (coord.empty()) coord.assign(src.mesh().ndim(), 0);
  absl::StatusOr<Plan> plan = options.mode == PlanMode::kNative
                                  ? NativePlan(src, dst, *model, options, coord)
                                  : PyTorchPlan(src, dst, *model, options, coord);
  if (!plan.ok()) return plan;
  // JSON has no inf: a model whose prices overflow is refused, not printed
  // (the built-in models' parameters are range-checked so this cannot
  // happen with them, spec §6.2).
  if (!std::isfinite(plan->cost)) {
    return absl::InvalidArgumentError(absl::StrCat("cost_model: the plan's cost is ", plan->cost,
                                                   " under \"", options.cost_model->fingerprint(),
                                                   "\"; its parameters make prices overflow"));
  }
  plan->cost_model = options.cost_model->fingerprint();
  plan->peak_bytes =
      PlanPeakBytes(*plan, src.mesh(), src.global_shape(), src.dtype(), model->memory_backend());
  if (plan->peak_bytes > options.max_memory) {
    return PlanLimitError(PlanLimit::kMaxMemory,
                          absl::StrCat("the pytorch-mode plan needs ", plan->peak_bytes,
                                       " bytes per rank, over the limit of ", options.max_memory,
                                       "; native mode plans under a memory limit (`mode` native)"));
  }
  return plan;
}

}  // namespace reshard
