#include "planner/steps/planned_bytes.h"

#include "planner/steps/step_bytes.h"

namespace reshard {

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

}  // namespace reshard
