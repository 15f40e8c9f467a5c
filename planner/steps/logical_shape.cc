#include "planner/steps/logical_shape.h"

#include "planner/layout/chunk.h"

namespace reshard {

std::vector<int64_t> LogicalShape(const DistState& current, const Step& step,
                                  const DeviceMesh& mesh, absl::Span<const int64_t> global_shape,
                                  absl::Span<const int64_t> coordinate) {
  std::vector<int64_t> shape(global_shape.begin(), global_shape.end());
  for (size_t d = 0; d < shape.size(); ++d) {
    for (int m : current.OrderOf(static_cast<int>(d))) {
      if (!step.group.Contains(m)) shape[d] = ChunkSize(shape[d], mesh.size(m), coordinate[m]);
    }
  }
  return shape;
}

}  // namespace reshard
