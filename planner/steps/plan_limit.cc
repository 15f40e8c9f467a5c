#include "planner/steps/plan_limit.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

constexpr absl::string_view kPayloadUrl = "type.reshard/PlanLimit";

}  // namespace

absl::string_view PlanLimitField(PlanLimit limit) {
  switch (limit) {
    case PlanLimit::kMaxExpandedStates:
      return "max_expanded_states";
    case PlanLimit::kMaxMemory:
      return "max_memory";
    case PlanLimit::kMaxSearchEdges:
      return "max_search_edges";
  }
  return "?";
}

absl::Status PlanLimitError(PlanLimit limit, absl::string_view detail) {
  absl::Status status =
      absl::ResourceExhaustedError(absl::StrCat(PlanLimitField(limit), ": ", detail));
  status.SetPayload(kPayloadUrl, absl::Cord(PlanLimitField(limit)));
  return status;
}

std::optional<PlanLimit> PlanLimitOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);  // absl::optional in Debian's Abseil
  if (!payload.has_value()) return std::nullopt;
  for (PlanLimit limit :
       {PlanLimit::kMaxExpandedStates, PlanLimit::kMaxMemory, PlanLimit::kMaxSearchEdges}) {
    if (*payload == PlanLimitField(limit)) return limit;
  }
  return std::nullopt;
}

}  // namespace reshard
