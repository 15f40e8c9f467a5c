// The planner's entry point.
//
//   DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2});
//   DistSpec src = *DistSpec::Parse(mesh, "S(0)[1]S(0)[0]S(0)[2]", {8, 8, 8}, DType::kF32);
//   DistSpec dst = *DistSpec::Parse(mesh, "RS(0)[0]S(0)[1]", {8, 8, 8}, DType::kF32);
//   absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, PlanOptions());
//   // plan->Trace() == "S(0)[1]S(0)[0]S(0)[2]->RS(0)R->RS(0)[0]S(0)[1]"
//
// Errors: InvalidArgument for a request that breaks a rule (plan_request.h,
// naming the field); NotFound when no plan exists (the greedy planner cannot
// do S->P or P(x)->P(y)); the message starts with "no_path:".
// ResourceExhausted when the search reaches PlanOptions::max_expanded_states
// or max_search_edges, or no plan fits PlanOptions::max_memory; PlanLimitOf
// (plan_limit.h) says which.
#ifndef RESHARD_PLANNER_PLANNER_H_
#define RESHARD_PLANNER_PLANNER_H_

#include "absl/status/statusor.h"
#include "planner/layout/dist_spec.h"
#include "planner/plan_request.h"
#include "planner/steps/plan.h"
#include "planner/steps/plan_limit.h"

namespace reshard {

// Plans `request` (validated first: ValidatePlanRequest).
absl::StatusOr<Plan> PlanRedistribution(const PlanRequest& request);
// The same as PlanRedistribution(PlanRequest{src, dst, options}).
absl::StatusOr<Plan> PlanRedistribution(const DistSpec& src, const DistSpec& dst,
                                        const PlanOptions& options);

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLANNER_H_
