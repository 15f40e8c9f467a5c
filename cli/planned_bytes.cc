#include "cli/planned_bytes.h"

#include <algorithm>

#include "planner/steps/step_bytes.h"

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

std::vector<int64_t> PlannedBytesSent(const DistSpec& src, const Plan& plan) {
  const DeviceMesh& mesh = src.mesh();
  std::vector<int64_t> sent(mesh.num_ranks(), 0);
  for (int64_t rank = 0; rank < mesh.num_ranks(); ++rank) {
    const std::vector<int64_t> coord = mesh.Coordinate(rank);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step& step = plan.steps[i].step;
      const std::vector<int64_t> logical =
          LogicalShape(plan.states[i], step, mesh, src.global_shape(), coord);
      sent[rank] += BytesOfStep(plan.states[i], step, logical, mesh, coord, src.dtype()).sent;
    }
  }
  return sent;
}

std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const CrossMeshPlan& plan) {
  return WithSteps(request, plan, plan.BytesSent());
}

std::vector<int64_t> PlannedBytesSentAcross(const CrossMeshRequest& request,
                                            const NaiveCrossMeshPlan& naive) {
  return WithSteps(request, naive.plain, naive.BytesSent());
}

}  // namespace reshard
