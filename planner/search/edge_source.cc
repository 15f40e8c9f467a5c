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
      backend_(backend),
      routing_limit_(RoutingLimitApplies(mesh)) {}

bool ExceedsRoutingLimit(const DistState& state, const Step& step, const DeviceMesh& mesh) {
  if (!MovesSlices(step.kind)) return false;
  int64_t members = 1, blocks = 1;  // blocks <= members <= 2^16 below: no overflow
  for (unsigned group = step.group.bits(); group != 0; group &= group - 1) {  // ascending
    const int m = __builtin_ctz(group);
    members *= mesh.size(m);
    if (!state.placement(m).is_replicate()) blocks *= mesh.size(m);
    if (members > kMaxRoutingMeetings) return true;
  }
  return members * blocks > kMaxRoutingMeetings;
}

bool RoutingLimitApplies(const DeviceMesh& mesh) {
  // members and blocks are at most the ranks (num_ranks <= 2^16 keeps the
  // square in range; above it a group of every rank passes).
  const int64_t ranks = mesh.num_ranks();
  return ranks > kMaxRoutingMeetings || ranks * ranks > kMaxRoutingMeetings;
}

void NativeEdges::Append(const DistState& state, std::vector<Step>* out) const {
  const size_t first = out->size();
  AppendNativeTransitions(state, goal_, static_cast<int>(global_shape_.size()), partial_ops_, out);
  const bool limit_memory = max_memory_ != std::numeric_limits<int64_t>::max();
  if (!routing_limit_ && !limit_memory) return;  // nothing to leave out
  auto too_big = [&](const Step& step) {
    return (routing_limit_ && MovesSlices(step.kind) && ExceedsRoutingLimit(state, step, mesh_)) ||
           (limit_memory &&
            StepPeakBytes(state, step, mesh_, global_shape_, dtype_, backend_) > max_memory_);
  };
  out->erase(std::remove_if(out->begin() + static_cast<long>(first), out->end(), too_big),
             out->end());
}

}  // namespace reshard
