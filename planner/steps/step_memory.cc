#include "planner/steps/step_memory.h"

#include <algorithm>
#include <vector>

#include "planner/layout/chunk.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

int64_t Numel(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

}  // namespace

int64_t LocalBytes(const DistState& state, const DeviceMesh& mesh,
                   absl::Span<const int64_t> global_shape, DType dtype) {
  const std::vector<int64_t> zeros(mesh.ndim(), 0);
  return Numel(LocalShape(mesh, state, global_shape, zeros)) * ItemSize(dtype);
}

int64_t StepPeakBytes(const DistState& state, const Step& step, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype) {
  const int64_t in = LocalBytes(state, mesh, global_shape, dtype);
  const int64_t n = mesh.GroupSize(step.group);
  if (n == 1) return in;
  const int64_t out = LocalBytes(ApplyStep(state, step), mesh, global_shape, dtype);
  const std::vector<int64_t> zeros(mesh.ndim(), 0);
  const std::vector<int64_t> logical = LogicalShape(state, step, mesh, global_shape, zeros);
  const int64_t c = Numel(PaddedChunkShape(state, step, logical, mesh)) * ItemSize(dtype);
  switch (step.kind) {
    case StepKind::kAllGather: return in + c + n * c + out;
    case StepKind::kAllToAll: return in + 2 * n * c + out;
    case StepKind::kReduceScatter: return in + n * c + c + out;
    case StepKind::kAllReduce:
    case StepKind::kPartition: return in;
    case StepKind::kChunk: return in + out;
    case StepKind::kPermute: return 2 * (in + out);
  }
  return in;
}

int64_t PlanPeakBytes(const Plan& plan, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype) {
  if (plan.states.empty()) return 0;
  int64_t peak = LocalBytes(plan.states.front(), mesh, global_shape, dtype);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    peak = std::max(peak, StepPeakBytes(plan.states[i], plan.steps[i].step, mesh, global_shape,
                                        dtype));
  }
  return peak;
}

}  // namespace reshard
