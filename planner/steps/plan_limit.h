// Which planning limit a search hit, carried on the status it returns, so a
// caller can tell "over max_expanded_states" from "over max_memory" without
// reading the message:
//
//   absl::StatusOr<Plan> plan = PlanRedistribution(request);
//   if (std::optional<PlanLimit> hit = PlanLimitOf(plan.status())) {
//     // *hit == PlanLimit::kMaxExpandedStates: raise it, or plan in pytorch mode
//   }
#ifndef RESHARD_PLANNER_STEPS_PLAN_LIMIT_H_
#define RESHARD_PLANNER_STEPS_PLAN_LIMIT_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class PlanLimit {
  kMaxExpandedStates,  // PlanOptions::max_expanded_states
  kMaxMemory,          // PlanOptions::max_memory
};

// The PlanOptions field a limit is set by: "max_expanded_states", "max_memory".
absl::string_view PlanLimitField(PlanLimit limit);

// ResourceExhausted "<field>: <detail>", carrying `limit`.
absl::Status PlanLimitError(PlanLimit limit, absl::string_view detail);

// The limit `status` carries, if it came from PlanLimitError (it survives
// re-wrapping with WithMessage-style copies that keep payloads).
std::optional<PlanLimit> PlanLimitOf(const absl::Status& status);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_PLAN_LIMIT_H_
