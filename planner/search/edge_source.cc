#include "planner/search/edge_source.h"

#include <algorithm>
#include <utility>

#include "planner/search/native_transitions.h"
#include "planner/search/transitions.h"
#include "planner/steps/rail_staging.h"
#include "planner/steps/step_memory.h"

namespace reshard {
namespace {

bool MayStageOverRails(const DeviceMesh& mesh, MeshDimSet group, int64_t rails_per_host) {
  if (rails_per_host < 2 || mesh.GroupSize(group) > kMaxStagingMembers) return false;
  const std::vector<int64_t> ranks = mesh.GroupOf(group, 0);  // ascending
  bool shares_a_host = false;
  for (size_t i = 1; i < ranks.size(); ++i) {
    shares_a_host |= ranks[i] / rails_per_host == ranks[i - 1] / rails_per_host;
  }
  return shares_a_host && ranks.front() / rails_per_host != ranks.back() / rails_per_host;
}

}  // namespace

void CompatEdges::Append(const DistState& state, std::vector<Step>* out) const {
  AppendTransitions(state, tensor_ndim_, partial_ops_, out);
}

NativeEdges::NativeEdges(const DeviceMesh& mesh, std::vector<int64_t> global_shape, DType dtype,
                         const DistState& goal, unsigned partial_ops, int64_t max_memory,
                         MemoryBackend backend, int64_t rails_per_host)
    : mesh_(mesh),
      global_shape_(std::move(global_shape)),
      dtype_(dtype),
      goal_(goal),
      partial_ops_(partial_ops),
      max_memory_(max_memory),
      backend_(backend),
      routing_limit_(RoutingLimitApplies(mesh)),
      rails_per_host_(rails_per_host),
      stages_(StagingGroups(mesh, rails_per_host)) {}

std::vector<bool> StagingGroups(const DeviceMesh& mesh, int64_t rails_per_host) {
  if (rails_per_host < 2) return {};
  std::vector<bool> stages(size_t{1} << mesh.ndim());
  for (unsigned bits = 1; bits < stages.size(); ++bits) {
    stages[bits] =
        MayStageOverRails(mesh, MeshDimSet::FromBits(static_cast<uint8_t>(bits)), rails_per_host);
  }
  return stages;
}

void AppendStagedForms(const std::vector<bool>& stages, int64_t rails_per_host, size_t first,
                       std::vector<Step>* out) {
  if (stages.empty()) return;
  std::vector<Step> with;
  for (size_t i = first; i < out->size(); ++i) {
    const Step& step = (*out)[i];
    with.push_back(step);
    if (!MovesSlices(step.kind) || !stages[step.group.bits()]) continue;
    for (int32_t chunks : kStagingChunks) {
      with.push_back(step);
      with.back().staging = {static_cast<int32_t>(rails_per_host), chunks};
    }
  }
  out->resize(first);
  out->insert(out->end(), with.begin(), with.end());
}

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
  AppendStagedForms(stages_, rails_per_host_, first, out);
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
