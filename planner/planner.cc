#include "planner/planner.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/chunk.h"
#include "planner/cost_model.h"
#include "planner/graph_planner.h"
#include "planner/greedy_planner.h"

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
  if (!options.coordinate.empty()) return src.mesh().ValidateCoordinate(options.coordinate);
  return absl::OkStatus();
}

// Spec §10, graph planner: split by every mesh dim of the current order but this one.
std::vector<int64_t> GraphLogicalShape(const DistSpec& spec, const DistState& current,
                                       int mesh_dim, const std::vector<int64_t>& coord) {
  std::vector<int64_t> shape = spec.global_shape();
  for (int d = 0; d < spec.tensor_ndim(); ++d) {
    for (int m : current.OrderOf(d)) {
      if (m != mesh_dim) shape[d] = ChunkSize(shape[d], spec.mesh().size(m), coord[m]);
    }
  }
  return shape;
}

absl::StatusOr<Plan> GraphPlan(const DistSpec& src, const DistSpec& dst, const CostModel& model,
                               const PlanOptions& options, const std::vector<int64_t>& coord) {
  absl::StatusOr<GraphPath> path = FindGraphPath(src.state(), dst.state(), src.tensor_ndim(),
                                                 model, options.max_expanded_states);
  if (!path.ok()) return path.status();
  Plan plan;
  plan.algorithm = Algorithm::kGraph;
  plan.cost = path->cost;
  plan.expanded_states = path->expanded;
  for (const DistState& s : path->states) plan.states.push_back(s.ToString());
  for (size_t i = 0; i < path->steps.size(); ++i) {
    const DistState& a = path->states[i];
    const int m = path->steps[i].mesh_dim;
    plan.steps.push_back({m, a.placement(m), path->states[i + 1].placement(m),
                          GraphLogicalShape(src, a, m, coord), path->steps[i].cost});
  }
  return plan;
}

// Spec §8: PyTorch prints a greedy plan's states by replaying its steps on
// the source's shard order (leaving S(a) pops a's last mesh dim, entering
// S(b) appends). With size-1 mesh dims that replay can name a mesh dim that
// no longer shards the tensor dim; PyTorch fails to print such a state, we
// print the token without its [k].
class GreedyTrace {
 public:
  explicit GreedyTrace(const DistState& src) : placements_(src.placements()) {
    for (int d = 0; d < kMaxTensorDims; ++d) {
      MeshDimList dims = src.OrderOf(d);
      order_[d].assign(dims.begin(), dims.end());
    }
  }
  void Apply(int m, Placement from, Placement to) {
    if (from.is_shard() && !order_[from.dim()].empty()) order_[from.dim()].pop_back();
    if (to.is_shard()) order_[to.dim()].push_back(m);
    placements_[m] = to;
  }
  std::string ToString() const {
    std::string out;
    for (int m = 0; m < static_cast<int>(placements_.size()); ++m) {
      Placement p = placements_[m];
      absl::StrAppend(&out, p.ToString());
      if (!p.is_shard() || order_[p.dim()].size() < 2) continue;
      const std::vector<int>& order = order_[p.dim()];
      auto it = std::find(order.begin(), order.end(), m);
      if (it != order.end()) absl::StrAppend(&out, "[", it - order.begin(), "]");
    }
    return out;
  }

 private:
  std::vector<Placement> placements_;
  std::vector<int> order_[kMaxTensorDims];
};

absl::StatusOr<Plan> GreedyPlan(const DistSpec& src, const DistSpec& dst, const CostModel& model,
                                const std::vector<int64_t>& coord) {
  const DeviceMesh& mesh = src.mesh();
  const std::vector<Placement> src_placements = src.state().placements();
  absl::StatusOr<std::vector<GreedyStep>> steps =
      GreedySteps(mesh, src_placements, dst.state().placements());
  if (!steps.ok()) return steps.status();

  // Spec §8: mesh dim k sees the global shape split by the source Shards of
  // mesh dims < k.
  std::vector<std::vector<int64_t>> logical(mesh.ndim());
  std::vector<int64_t> shape = src.global_shape();
  for (int m = 0; m < mesh.ndim(); ++m) {
    logical[m] = shape;
    Placement p = src_placements[m];
    if (p.is_shard()) shape[p.dim()] = ChunkSize(shape[p.dim()], mesh.size(m), coord[m]);
  }

  Plan plan;
  plan.algorithm = Algorithm::kGreedy;
  GreedyTrace trace(src.state());
  plan.states.push_back(trace.ToString());
  std::vector<Placement> current = src_placements;
  for (const GreedyStep& s : *steps) {
    double cost = model.StepCost(DistState::WithDefaultOrder(current), s.mesh_dim, s.src, s.dst);
    plan.cost += cost;
    plan.steps.push_back({s.mesh_dim, s.src, s.dst, logical[s.mesh_dim], cost});
    current[s.mesh_dim] = s.dst;
    trace.Apply(s.mesh_dim, s.src, s.dst);
    plan.states.push_back(trace.ToString());
  }
  return plan;
}

}  // namespace

absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& options) {
  if (absl::Status s = CheckCompatible(src, dst, options); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<CostModel>> model = MakeCostModel(
      options.cost_model,
      CostProblem{src.mesh(), src.global_shape(), ItemSize(src.dtype()), options.devices_per_host});
  if (!model.ok()) return model.status();
  std::vector<int64_t> coord = options.coordinate;
  if (coord.empty()) coord.assign(src.mesh().ndim(), 0);

  // Spec §9: the greedy planner cannot express shard orders.
  const bool needs_graph = src.strided_input() || dst.strided_input() ||
                           !src.state().HasDefaultOrder() || !dst.state().HasDefaultOrder();
  if (needs_graph || options.algorithm == Algorithm::kGraph) {
    absl::StatusOr<Plan> plan = GraphPlan(src, dst, **model, options, coord);
    if (plan.status().code() != absl::StatusCode::kResourceExhausted) return plan;
    // Suggest the greedy planner only where it could be used.
    return absl::ResourceExhaustedError(absl::StrCat(
        plan.status().message(),
        needs_graph ? "; the greedy planner cannot be used instead: these layouts have shard "
                      "orders (spec §9)"
                    : " or use the greedy planner (--algorithm greedy)"));
  }
  return GreedyPlan(src, dst, **model, coord);
}

}  // namespace reshard
