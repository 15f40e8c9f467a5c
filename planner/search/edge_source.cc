#include "planner/search/edge_source.h"

#include <algorithm>
#include <utility>

#include "planner/search/native_transitions.h"
#include "planner/search/transitions.h"
#include "planner/steps/step_memory.h"

namespace reshard {

void CompatEdges::Append(const DistState& state, std::vector<Step>* out) const {
  AppendTransitions(state, tensor_ndim_, partial_ops_, out);
}

NativeEdges::NativeEdges(const DeviceMesh& mesh, std::vector<int64_t> global_shape, DType dtype,
                         const DistState& goal, unsigned partial_ops, int64_t max_memory,
                         MemoryBackend backend)
    : mesh_(mesh),
      global_shape_(std::move(global_shape)),
      dtype_(dtype),
      goal_(goal),
      partial_ops_(partial_ops),
      max_memory_(max_memory),
      backend_(backend) {}

void NativeEdges::Append(const DistState& state, std::vector<Step>* out) const {
  const size_t first = out->size();
  AppendNativeTransitions(state, goal_, static_cast<int>(global_shape_.size()), partial_ops_, out);
  if (max_memory_ == std::numeric_limits<int64_t>::max()) return;
  auto too_big = [&](const Step& step) {
    return StepPeakBytes(state, step, mesh_, global_shape_, dtype_, backend_) > max_memory_;
  };
  out->erase(std::remove_if(out->begin() + static_cast<long>(first), out->end(), too_big),
             out->end());
}

}  // namespace reshard
