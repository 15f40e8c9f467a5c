#include "planner/steps/step_memory.h"

#include <algorithm>
#include <vector>

#include "planner/layout/chunk.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/rail_staging.h"
#include "planner/steps/route_rounds.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

int64_t Numel(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// True when n equal pieces of `shape` along tensor dim `d`, laid out in
// member order, are the tensor itself: every dim before d has extent 1, so
// pieces of d are contiguous, and the group's mesh dims split d in
// ascending order (member order is row-major over ascending mesh dims,
// spec §11), so member j holds piece j.
bool PiecesAreTheTensor(absl::Span<const int64_t> shape, int d, const MeshDimList& splits) {
  for (int i = 0; i < d && i < static_cast<int>(shape.size()); ++i) {
    if (shape[i] != 1) return false;
  }
  return std::is_sorted(splits.begin(), splits.end());
}

// Spec §12, NCCL: all_gather and reduce_scatter in place.
int64_t NcclInPlaceBytes(const DistState& state, const Step& step, const DeviceMesh& mesh,
                         absl::Span<const int64_t> global_shape, int64_t in, int64_t out, int64_t c,
                         int64_t n) {
  const int64_t zeros_storage[kMaxMeshDims] = {};  // rank 0's coordinate
  const absl::Span<const int64_t> zeros(zeros_storage, mesh.ndim());
  if (step.kind == StepKind::kAllGather) {
    const int a = step.src.dim();
    const bool as_is =
        out == n * c &&
        PiecesAreTheTensor(LocalShape(mesh, ApplyStep(state, step), global_shape, zeros), a,
                           GroupSplitsOf(state, step, a, /*after=*/false));
    return n * c + (as_is ? 0 : out);
  }
  const int b = step.dst.dim();
  const bool input_as_is =
      in == n * c && PiecesAreTheTensor(LocalShape(mesh, state, global_shape, zeros), b,
                                        GroupSplitsOf(state, step, b, /*after=*/true));
  return n * c + (input_as_is ? 0 : in) + (out == c ? 0 : out);
}

}  // namespace

int64_t LocalBytes(const DistState& state, const DeviceMesh& mesh,
                   absl::Span<const int64_t> global_shape, DType dtype) {
  // LocalShape at coordinate 0 multiplied out, without building it (a plan's
  // peak asks for two per step).
  int64_t numel = 1;
  for (int d = 0; d < static_cast<int>(global_shape.size()); ++d) {
    numel *= LocalExtent(mesh, state, d, global_shape[d], {});
  }
  return numel * ItemSize(dtype);
}

int64_t StepPeakBytes(const DistState& state, const Step& step, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype, MemoryBackend backend) {
  const int64_t in = LocalBytes(state, mesh, global_shape, dtype);
  const int64_t n = mesh.GroupSize(step.group);
  if (n == 1) return in;
  const int64_t out = LocalBytes(ApplyStep(state, step), mesh, global_shape, dtype);
  const int64_t zeros_storage[kMaxMeshDims] = {};  // rank 0's coordinate
  const std::vector<int64_t> logical = LogicalShape(
      state, step, mesh, global_shape, absl::MakeConstSpan(zeros_storage, mesh.ndim()));
  if (step.staging.staged()) {  // spec §11.2: its rounds, as a crossing's (§14 "Memory")
    const StagedExchange x = StagedExchangeOf(state, step, mesh, logical,
                                              absl::MakeConstSpan(zeros_storage, mesh.ndim()));
    const std::vector<int64_t> peaks = RoundsPeakBytes(
        x.held, x.wanted, x.rounds.routes, x.rounds.round_of, x.rounds.rounds, ItemSize(dtype));
    return *std::max_element(peaks.begin(), peaks.end());
  }
  const int64_t c = Numel(PaddedChunkShape(state, step, logical, mesh)) * ItemSize(dtype);
  if (backend == MemoryBackend::kNccl &&
      (step.kind == StepKind::kAllGather || step.kind == StepKind::kReduceScatter)) {
    return NcclInPlaceBytes(state, step, mesh, global_shape, in, out, c, n);
  }
  switch (step.kind) {
    case StepKind::kAllGather:
      return in + c + n * c + out;
    case StepKind::kAllToAll:
      return in + 2 * n * c + out;
    case StepKind::kReduceScatter:
      return in + n * c + c + out;
    case StepKind::kAllReduce:
    case StepKind::kPartition:
      return in;
    case StepKind::kChunk:
      return in + out;
    case StepKind::kPermute:
      return 2 * (in + out);
    case StepKind::kExchange: {
      // The source and target blocks, and buffers for what crosses: the
      // busiest member of this (the largest) group's sends plus receives.
      const RouteLoad load = ExchangeLoadOf(state, step, mesh, logical);
      return ExchangePeakBytes(in, out, load.max_sent_plus_received * ItemSize(dtype));
    }
  }
  return in;
}

int64_t ExchangePeakBytes(int64_t in, int64_t out, int64_t moved) { return in + out + moved; }

int64_t PlanPeakBytes(const Plan& plan, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype, MemoryBackend backend) {
  if (plan.states.empty()) return 0;
  int64_t peak = LocalBytes(plan.states.front(), mesh, global_shape, dtype);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    peak = std::max(peak, StepPeakBytes(plan.states[i], plan.steps[i].step, mesh, global_shape,
                                        dtype, backend));
  }
  return peak;
}

}  // namespace reshard
