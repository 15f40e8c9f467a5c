// The planner's entry point.
//
//   absl::StatusOr<DistSpec> src = DistSpec::Parse(*mesh, "S(0)[1]S(0)[0]S(0)[2]", {8, 8, 8}, DType::kF32);
//   absl::StatusOr<DistSpec> dst = DistSpec::Parse(*mesh, "RS(0)[0]S(0)[1]", {8, 8, 8}, DType::kF32);
//   absl::StatusOr<Plan> plan = PlanRedistribution(*src, *dst, PlanOptions());
//   // plan->Trace() == "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RS(0)[0]S(0)[1]"
//
// Errors: InvalidArgument for inconsistent specs or options; NotFound when no
// plan exists (the greedy planner cannot do S->P or P(x)->P(y)); the message
// starts with "no_path:". ResourceExhausted when the graph search reaches
// PlanOptions::max_expanded_states or no plan fits PlanOptions::max_memory.
#ifndef RESHARD_PLANNER_PLANNER_H_
#define RESHARD_PLANNER_PLANNER_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"

namespace reshard {

struct PlanOptions {
  // kAuto: pytorch when `cost_model` prices compat steps only (the pytorch
  // models), native otherwise. Native mode needs a model that prices native
  // steps (CostModel::prices_native_steps).
  PlanMode mode = PlanMode::kAuto;
  // Pytorch mode: kAuto is greedy unless a shard order or StridedShard needs
  // the graph planner (spec §9); that rule also overrides an explicit
  // kGreedy. Native mode always searches its graph (kGreedy is an error).
  Algorithm algorithm = Algorithm::kAuto;
  // Any model, with its parameters (cost_model.h): MakeCostModel by name, or
  // your own. Null: the mode's default, "nccl" (native) or "pytorch".
  std::shared_ptr<const CostModel> cost_model;
  // The rank whose logical shapes the plan reports; empty means all zeros.
  std::vector<int64_t> coordinate;
  // Bound on the states the graph search may expand.
  int64_t max_expanded_states = 1000000;
  // Bytes any rank may hold at once (Plan::peak_bytes). Native mode plans
  // only steps under it; pytorch mode fails when its plan exceeds it.
  int64_t max_memory = std::numeric_limits<int64_t>::max();
};

// The mode and the model PlanRedistribution uses for `options` (kAuto and
// null decided). Cheap, no copies: PlanCache keys on them.
PlanMode ResolvedMode(const PlanOptions& options);
const std::shared_ptr<const CostModel>& ResolvedCostModel(const PlanOptions& options);

// Src and dst must share mesh, global shape and dtype.
absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& options);

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLANNER_H_
