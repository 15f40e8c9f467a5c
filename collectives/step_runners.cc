#include "collectives/step_runners.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "collectives/tensor/chunk_pack.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

std::vector<int64_t> Prepend(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{n};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

absl::Status CheckExtent(const LocalTensor& t, int dim, int64_t want) {
  if (t.shape()[dim] != want) {
    return absl::InternalError(
        absl::StrFormat("local tensor %s has extent %d on dim %d, expected %d", t.DebugString(),
                        t.shape()[dim], dim, want));
  }
  return absl::OkStatus();
}

// Every member's slice of tensor dim d, split by the group's mesh dims in
// the state before (after = false) or after the step: torch.chunk's chunks
// for one mesh dim, nested chunks for several (spec §11).
std::vector<Slice> MemberSlices(const StepContext& c, int d, bool after) {
  const MeshDimList splits = GroupSplitsOf(c.state, c.step, d, after);
  return GroupSlices(c.comm.mesh(), c.step.group, splits, c.L[d]);
}

// The largest slice: what every member pads to for the collective.
int64_t Padded(const std::vector<Slice>& slices) {
  int64_t c = 0;
  for (const Slice& s : slices) c = std::max(c, s.size);
  return c;
}

// S(d) -> R.
absl::StatusOr<LocalTensor> RunAllGather(LocalTensor cur, StepContext& c) {
  const int d = c.step.src.dim();
  const std::vector<Slice> slices = MemberSlices(c, d, /*after=*/false);
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, slices[c.me].size));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send,
                           WithLength(c.engine, std::move(cur), d, Padded(slices)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv,
                           c.engine.Allocate(send.dtype(), Prepend(c.n, send.shape())));
  const int64_t count = send.numel();
  RESHARD_RETURN_IF_ERROR(
      c.comm.AllGather(c.step.group, send.data(), recv.data(), count, send.dtype()));
  c.CountBytes((c.n - 1) * count, send);
  return UnpackSlices(c.engine, std::move(recv), d, slices, c.L[d]);
}

// S(a) -> S(b).
absl::StatusOr<LocalTensor> RunAllToAll(LocalTensor cur, StepContext& c) {
  const int a = c.step.src.dim();
  const int b = c.step.dst.dim();
  const std::vector<Slice> from = MemberSlices(c, a, /*after=*/false);
  const std::vector<Slice> to = MemberSlices(c, b, /*after=*/true);
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, a, from[c.me].size));
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, b, c.L[b]));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor padded,
                           WithLength(c.engine, std::move(cur), a, Padded(from)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send,
                           PackSlices(c.engine, std::move(padded), b, to, Padded(to)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(send.dtype(), send.shape()));
  const int64_t count = send.numel() / c.n;
  RESHARD_RETURN_IF_ERROR(
      c.comm.AllToAll(c.step.group, send.data(), recv.data(), count, send.dtype()));
  c.CountBytes((c.n - 1) * count, send);
  RESHARD_ASSIGN_OR_RETURN(LocalTensor joined,
                           UnpackSlices(c.engine, std::move(recv), a, from, c.L[a]));
  return WithLength(c.engine, std::move(joined), b, to[c.me].size);
}

// P(op) -> R, in place.
absl::StatusOr<LocalTensor> RunAllReduce(LocalTensor cur, StepContext& c) {
  const int64_t count = cur.numel();
  RESHARD_RETURN_IF_ERROR(
      c.comm.AllReduce(c.step.group, cur.data(), count, cur.dtype(), c.step.src.op()));
  c.CountBytes(2 * (c.n - 1) * PaddedChunkSize(count, c.n), cur);
  return cur;
}

// P(op) -> S(d).
absl::StatusOr<LocalTensor> RunReduceScatter(LocalTensor cur, StepContext& c) {
  const int d = c.step.dst.dim();
  const std::vector<Slice> to = MemberSlices(c, d, /*after=*/true);
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, c.L[d]));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send,
                           PackSlices(c.engine, std::move(cur), d, to, Padded(to)));
  const std::vector<int64_t> chunk(send.shape().begin() + 1, send.shape().end());
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(send.dtype(), chunk));
  const int64_t count = recv.numel();
  RESHARD_RETURN_IF_ERROR(c.comm.ReduceScatter(c.step.group, send.data(), recv.data(), count,
                                               send.dtype(), c.step.src.op()));
  c.CountBytes((c.n - 1) * count, recv);
  return WithLength(c.engine, std::move(recv), d, to[c.me].size);
}

// R -> S(d): this rank's chunk, no communication (one mesh dim, CheckStep).
absl::StatusOr<LocalTensor> RunChunk(LocalTensor cur, StepContext& c) {
  const int d = c.step.dst.dim();
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, c.L[d]));
  return TakeSlab(c.engine, cur, d, ChunkOffset(c.L[d], c.n, c.me), ChunkSize(c.L[d], c.n, c.me));
}

// R -> P(op): the logical value is unchanged.
absl::StatusOr<LocalTensor> RunPartition(LocalTensor cur, StepContext& c) {
  if (c.step.dst.op() == ReduceOp::kSum && c.me != 0 && cur.numel() > 0) {
    // Spec §11: index 0 of the group keeps the data, the others hold zeros.
    RESHARD_RETURN_IF_ERROR(ZeroSlab(c.engine, cur, 0, 0, cur.shape()[0]));
  }
  return cur;
}

}  // namespace

absl::StatusOr<LocalTensor> RunStep(LocalTensor cur, StepContext& c) {
  if (c.n == 1) return cur;  // spec §11: size-1 groups never communicate
  switch (c.step.kind) {
    case StepKind::kAllGather:
      return RunAllGather(std::move(cur), c);
    case StepKind::kAllToAll:
      return RunAllToAll(std::move(cur), c);
    case StepKind::kAllReduce:
      return RunAllReduce(std::move(cur), c);
    case StepKind::kReduceScatter:
      return RunReduceScatter(std::move(cur), c);
    case StepKind::kChunk:
      return RunChunk(std::move(cur), c);
    case StepKind::kPartition:
      return RunPartition(std::move(cur), c);
    case StepKind::kPermute:
    case StepKind::kExchange:
      return RunSliceExchange(std::move(cur), c);
  }
  return absl::InternalError("unknown step kind");
}

}  // namespace reshard
