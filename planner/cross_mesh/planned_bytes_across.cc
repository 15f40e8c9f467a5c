#include "planner/cross_mesh/planned_bytes_across.h"

#include "planner/steps/planned_bytes.h"

namespace reshard {
namespace {

// The steps' bytes added to `crossing` (per participant): before at the
// source ranks, after at the destination ranks.
std::vector<int64_t> WithSteps(const CrossMeshRequest& request, const CrossMeshPlan& plan,
                               std::vector<int64_t> crossing) {
  const std::vector<int64_t> before = PlannedBytesSent(request.src, plan.before);
  const std::vector<int64_t> after = PlannedBytesSent(plan.crossing_dst, plan.after);
  for (size_t r = 0; r < plan.src_ranks.size(); ++r) {
    crossing[plan.ParticipantIndex(plan.src_ranks[r])] += before[r];
  }
  for (size_t r = 0; r < plan.dst_ranks.size(); ++r) {
    crossing[plan.ParticipantIndex(plan.dst_ranks[r])] += after[r];
  }
  return crossing;
}

}  // namespace

std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const CrossMeshPlan& plan) {
  return WithSteps(request, plan, plan.BytesSent());
}

std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const NaiveCrossMeshPlan& naive) {
  return WithSteps(request, naive.plain, naive.BytesSent());
}

}  // namespace reshard
