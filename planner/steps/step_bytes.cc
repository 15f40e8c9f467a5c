#include "planner/steps/step_bytes.h"

#include "planner/layout/chunk.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/rail_staging.h"

namespace reshard {

namespace {

// The largest slice of `length` over the group's mesh dims in `order`: the
// member with all-zero coordinates (chunk.h, NestedChunk).
int64_t LargestSlice(int64_t length, const MeshDimList& order, const DeviceMesh& mesh) {
  for (int m : order) length = PaddedChunkSize(length, mesh.size(m));
  return length;
}

}  // namespace

std::vector<int64_t> PaddedChunkShape(const DistState& state, const Step& step,
                                      absl::Span<const int64_t> logical, const DeviceMesh& mesh) {
  std::vector<int64_t> chunk(logical.begin(), logical.end());
  for (size_t d = 0; d < chunk.size(); ++d) {
    const int dim = static_cast<int>(d);
    chunk[d] = LargestSlice(chunk[d], GroupSplitsOf(state, step, dim, /*after=*/false), mesh);
    // A permute's or exchange's block is cut one way or the other, never both.
    if (!MovesSlices(step.kind)) {
      chunk[d] = LargestSlice(chunk[d], GroupSplitsOf(state, step, dim, /*after=*/true), mesh);
    }
  }
  return chunk;
}

StepBytes BytesOfStep(const DistState& state, const Step& step, absl::Span<const int64_t> logical,
                      const DeviceMesh& mesh, absl::Span<const int64_t> coordinate, DType dtype) {
  const int64_t n = mesh.GroupSize(step.group);
  StepBytes b;
  if (n == 1 || !IsCommunicating(step.kind)) return b;
  const int item = ItemSize(dtype);
  if (step.staging.staged()) {  // spec §11.2: what it sends and receives in every round
    const StagedExchange x = StagedExchangeOf(state, step, mesh, logical, coordinate);
    b.sent = RouteBytes(x.rounds.routes, x.ranks.size(), item, /*sent=*/true)[x.me];
    b.received = RouteBytes(x.rounds.routes, x.ranks.size(), item, /*sent=*/false)[x.me];
    return b;
  }
  if (MovesSlices(step.kind)) {
    const PermuteExchange x = PermuteExchangeOf(state, step, mesh, logical, coordinate);
    for (int64_t j = 0; j < n; ++j) {
      if (j == x.me) continue;  // a local copy
      b.sent += BoxElements(x.send[j]) * item;
      b.received += BoxElements(x.recv[j]) * item;
    }
    return b;
  }
  int64_t count = 1;
  for (int64_t e : PaddedChunkShape(state, step, logical, mesh)) count *= e;
  if (step.kind == StepKind::kAllReduce) {
    b.sent = b.received = 2 * (n - 1) * PaddedChunkSize(count, n) * item;
  } else {
    b.sent = b.received = (n - 1) * count * item;
  }
  return b;
}

}  // namespace reshard
