// Fuzzes the planners on random valid requests: meshes of 1 to 8 dims
// (size-1 dims included; 5-8 dims of sizes 1-2, under a search budget), tensors of 1 to 4 dims,
// random placements and shard orders, every reduce op, both modes (pytorch: both compat cost
// models, auto/graph/greedy; native: alpha-beta, sometimes a memory limit).
// Every plan returned must be legal step by step:
//   * graph plans: each step is one of the edges of spec §4 (pytorch) or §4.2
//     (native) out of the state the previous step reached and passes
//     CheckStep, the plan's states are those states, and the last one is the
//     destination;
//   * greedy plans (which ignore shard order, spec §8): each step passes
//     CheckStep (step.h: S -> P only on size-1 dims) in the replayed state,
//     and the placements end as the destination's;
//   * all: one more state than steps, the cost is the sum of the steps', and
//     peak_bytes is the plan's peak (step_memory.h), under max_memory.
// Errors are only "no plan" or a limit (typed: PlanLimitOf), never anything else.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_checks.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/search/native_transitions.h"
#include "planner/search/transitions.h"
#include "planner/steps/plan_limit.h"
#include "planner/steps/step.h"
#include "planner/steps/step_memory.h"

namespace {

using namespace reshard;

DistState RandomState(FuzzedDataProvider& in, int mesh_ndim, int tensor_ndim,
                      const std::vector<ReduceOp>& ops) {
  std::vector<Placement> placements;
  for (int m = 0; m < mesh_ndim; ++m) {
    const int kind = in.ConsumeIntegralInRange(0, 2);
    if (kind == 0)
      placements.push_back(Placement::Shard(in.ConsumeIntegralInRange(0, tensor_ndim - 1)));
    if (kind == 1) placements.push_back(Placement::Replicate());
    if (kind == 2)
      placements.push_back(
          Placement::Partial(ops[in.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)]));
  }
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    ShardOrderEntry e{d, {}};
    for (int m = 0; m < mesh_ndim; ++m) {
      if (placements[m].is_shard() && placements[m].dim() == d) e.mesh_dims.push_back(m);
    }
    if (e.mesh_dims.size() > 1 && in.ConsumeBool())
      std::swap(e.mesh_dims.front(), e.mesh_dims.back());
    if (!e.mesh_dims.empty()) order.push_back(std::move(e));
  }
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  return s.ok() ? *s : DistState::WithDefaultOrder(placements);
}

unsigned OpsMask(const DistState& a, const DistState& b) {
  unsigned mask = 0;
  for (const DistState* s : {&a, &b}) {
    for (const Placement& p : s->placements()) {
      if (p.is_partial()) mask |= 1u << static_cast<int>(p.op());
    }
  }
  return mask;
}

// Graph plans: every step is an edge of spec §4 (pytorch mode) or §4.2
// (native) out of the state reached, and a legal step (CheckStep).
void CheckGraphPlan(const DistSpec& src, const DistSpec& dst, const Plan& plan) {
  DistState cur = src.state();
  const unsigned ops = OpsMask(src.state(), dst.state());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i].step;
    std::vector<Step> edges;
    if (plan.mode == PlanMode::kNative) {
      AppendNativeTransitions(cur, dst.state(), src.tensor_ndim(), ops, &edges);
    } else {
      AppendTransitions(cur, src.tensor_ndim(), ops, &edges);
    }
    if (std::find(edges.begin(), edges.end(), step) == edges.end()) {
      fuzz::Fail("a graph step is no edge of its mode's graph", plan.Trace());
    }
    absl::Status legal = CheckStep(cur, step, src.mesh(), src.tensor_ndim());
    if (!legal.ok()) fuzz::Fail("an illegal graph step", plan.Trace() + ": " + legal.ToString());
    cur = ApplyStep(cur, step);
    if (plan.states[i + 1] != cur) fuzz::Fail("a state of the plan differs", plan.Trace());
  }
  if (cur != dst.state()) fuzz::Fail("the graph plan ends elsewhere", plan.Trace());
}

// Greedy plans (which ignore shard order, spec §8): every step passes the one
// legality rule (step.h, CheckStep) in the state replayed so far, and the
// placements end as the destination's.
void CheckGreedyPlan(const DistSpec& src, const DistSpec& dst, const Plan& plan) {
  DistState cur = src.state();
  for (const TransformInfo& info : plan.steps) {
    absl::Status legal = CheckStep(cur, info.step, src.mesh(), src.tensor_ndim());
    if (!legal.ok()) fuzz::Fail("an illegal greedy step", plan.Trace() + ": " + legal.ToString());
    cur = ApplyStep(cur, info.step);
  }
  if (cur.placements() != dst.state().placements()) {
    fuzz::Fail("the greedy plan ends elsewhere", plan.Trace());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  // Up to 8 mesh dims, docs/cli.md's limit (5-8 dims of size 1-2: up to 256
  // ranks); the search budget below keeps each input well under a second.
  const int mesh_ndim = in.ConsumeIntegralInRange(1, 8);
  std::vector<int64_t> sizes;
  for (int m = 0; m < mesh_ndim; ++m) {
    sizes.push_back(in.ConsumeIntegralInRange(1, mesh_ndim > 4 ? 2 : 4));
  }
  const int tensor_ndim = in.ConsumeIntegralInRange(1, 4);
  std::vector<int64_t> shape;
  for (int d = 0; d < tensor_ndim; ++d) shape.push_back(in.ConsumeIntegralInRange(1, 16));
  static const std::vector<std::vector<ReduceOp>> kOpSets = {
      {ReduceOp::kSum}, {ReduceOp::kAvg},  {ReduceOp::kMax},
      {ReduceOp::kMin}, {ReduceOp::kProd}, {ReduceOp::kSum, ReduceOp::kAvg}};
  const std::vector<ReduceOp>& ops = kOpSets[in.ConsumeIntegralInRange<size_t>(0, 5)];
  const DistState a = RandomState(in, mesh_ndim, tensor_ndim, ops);
  const DistState b = RandomState(in, mesh_ndim, tensor_ndim, ops);
  // Either mode, each with its models (native: auto or graph only).
  const bool native = in.ConsumeBool();
  PlanOptions options{native ? PlanMode::kNative : PlanMode::kPyTorch};
  options.algorithm = static_cast<Algorithm>(in.ConsumeIntegralInRange(0, native ? 1 : 2));
  const char* model = native ? "alpha-beta" : in.ConsumeBool() ? "pytorch" : "pytorch-const";
  options.cost_model = *MakeCostModel(model, /*devices_per_host=*/in.ConsumeIntegralInRange(1, 16));
  if (native && in.ConsumeBool()) options.max_memory = in.ConsumeIntegralInRange(1, 4096);
  options.max_expanded_states = 20000;
  options.max_search_edges = 50000;  // the 8-D case budget (issue 19)
  const DeviceMesh mesh = *DeviceMesh::Create(sizes);
  absl::StatusOr<DistSpec> src = DistSpec::Create(mesh, a, shape, DType::kF32);
  absl::StatusOr<DistSpec> dst = DistSpec::Create(mesh, b, shape, DType::kF32);
  if (!src.ok() || !dst.ok())
    fuzz::Fail("a valid state was refused", a.ToString() + " " + b.ToString());
  absl::StatusOr<Plan> plan = PlanRedistribution(*src, *dst, options);
  if (!plan.ok()) {
    const absl::StatusCode code = plan.status().code();
    if (code != absl::StatusCode::kNotFound && code != absl::StatusCode::kResourceExhausted) {
      fuzz::Fail("planning failed unexpectedly", plan.status().message());
    }
    // A limit hit says which limit, as a payload (planner/steps/plan_limit.h).
    if (code == absl::StatusCode::kResourceExhausted && !PlanLimitOf(plan.status())) {
      fuzz::Fail("a limit error without its limit", plan.status().message());
    }
    fuzz::CheckText(plan.status().message(), 2000);
    return 0;
  }
  if (plan->states.size() != plan->steps.size() + 1) fuzz::Fail("states vs steps", plan->Trace());
  double cost = 0;
  for (const TransformInfo& info : plan->steps) cost += info.cost;
  if (std::abs(cost - plan->cost) > 1e-9 * std::max(1.0, std::abs(cost))) {
    fuzz::Fail("the cost is not the sum of the steps'", plan->Trace());
  }
  if (plan->peak_bytes > options.max_memory) fuzz::Fail("a plan over max_memory", plan->Trace());
  if (plan->peak_bytes != PlanPeakBytes(*plan, mesh, shape, DType::kF32)) {
    fuzz::Fail("peak_bytes is not the plan's peak", plan->Trace());
  }
  if (plan->algorithm == Algorithm::kGraph)
    CheckGraphPlan(*src, *dst, *plan);
  else
    CheckGreedyPlan(*src, *dst, *plan);
  return 0;
}
