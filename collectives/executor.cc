#include "collectives/executor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/tensor/chunk_pack.h"
#include "planner/chunk.h"

namespace reshard {

int64_t ExecutionStats::bytes_sent() const {
  int64_t total = 0;
  for (const StepStats& s : steps) total += s.bytes_sent;
  return total;
}

int64_t ExecutionStats::bytes_received() const {
  int64_t total = 0;
  for (const StepStats& s : steps) total += s.bytes_received;
  return total;
}

namespace {

std::vector<int64_t> Prepend(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{n};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

std::string StepName(int i, const Step& step) {
  // Numbered from 1, as `reshard plan` prints steps.
  return absl::StrFormat("step %d (%s)", i + 1, step.ToString());
}

absl::Status StepError(int i, const Step& step, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(StepName(i, step), ": ", s.message()));
}

// Tensor dim d's order without size-1 mesh dims, which split nothing.
std::vector<int> EffectiveOrder(const DistState& state, int d, const DeviceMesh& mesh) {
  std::vector<int> out;
  for (int m : state.OrderOf(d)) {
    if (mesh.size(m) > 1) out.push_back(m);
  }
  return out;
}

// True when `a` and `b` hold the same data layout: same placements, same
// orders once size-1 mesh dims are dropped.
bool SameLayout(const DistState& a, const DistState& b, const DeviceMesh& mesh) {
  if (a.placements() != b.placements()) return false;
  for (int d = 0; d < kMaxTensorDims; ++d) {
    if (EffectiveOrder(a, d, mesh) != EffectiveOrder(b, d, mesh)) return false;
  }
  return true;
}

// Walks the plan without touching data: checks that each step is legal where
// the previous one ended (CheckStep) and executable, and computes this rank's
// logical shape per step. Identical on every rank, so a bad plan fails
// everywhere before any communication.
absl::StatusOr<std::vector<std::vector<int64_t>>> CheckPlan(const DistSpec& src,
                                                            const DistSpec& dst,
                                                            const Plan& plan,
                                                            const std::vector<int64_t>& coord) {
  const DeviceMesh& mesh = src.mesh();
  DistState state = src.state();
  std::vector<std::vector<int64_t>> logical;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i].step;
    if (absl::Status s = CheckStep(state, step, mesh, src.tensor_ndim()); !s.ok()) {
      return StepError(static_cast<int>(i), step, s);
    }
    if (step.kind == StepKind::kPartition && step.dst.op() == ReduceOp::kProd) {
      return StepError(static_cast<int>(i), step,
                       absl::UnimplementedError("R->P(prod) has no exact local split (spec §11); "
                                                "plan to another reduce op"));
    }
    logical.push_back(LogicalShape(state, step, mesh, src.global_shape(), coord));
    state = ApplyStep(state, step);
  }
  if (!SameLayout(state, dst.state(), mesh)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the plan ends in %s, not in the destination %s", state.ToString(),
        dst.state().ToString()));
  }
  return logical;
}

absl::Status CheckExtent(const LocalTensor& t, int dim, int64_t want) {
  if (t.shape()[dim] != want) {
    return absl::InternalError(absl::StrFormat(
        "local tensor %s has extent %d on dim %d, expected %d", t.DebugString(),
        t.shape()[dim], dim, want));
  }
  return absl::OkStatus();
}

// What every kind of step needs: the step, its logical shape L for this
// rank, the group's size n and this rank's index in it (spec §11).
struct StepContext {
  const Step& step;
  const std::vector<int64_t>& L;
  int64_t n;
  int64_t me;
  Communicator& comm;
  CopyEngine& engine;
  StepStats& stats;

  void CountBytes(int64_t count, const LocalTensor& t) {
    stats.bytes_sent = stats.bytes_received = count * ItemSize(t.dtype());
  }
};

// S(d) -> R.
absl::StatusOr<LocalTensor> RunAllGather(LocalTensor cur, StepContext& c) {
  const int d = c.step.src.dim();
  const int64_t n = c.n;
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, ChunkSize(c.L[d], n, c.me)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send,
                           WithLength(c.engine, std::move(cur), d, PaddedChunkSize(c.L[d], n)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv,
                           c.engine.Allocate(send.dtype(), Prepend(n, send.shape())));
  const int64_t count = send.numel();
  RESHARD_RETURN_IF_ERROR(
      c.comm.AllGather(c.step.group, send.data(), recv.data(), count, send.dtype()));
  c.CountBytes((n - 1) * count, send);
  return UnpackChunks(c.engine, std::move(recv), d, c.L[d]);
}

// S(a) -> S(b).
absl::StatusOr<LocalTensor> RunAllToAll(LocalTensor cur, StepContext& c) {
  const int a = c.step.src.dim();
  const int b = c.step.dst.dim();
  const int64_t n = c.n;
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, a, ChunkSize(c.L[a], n, c.me)));
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, b, c.L[b]));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor padded,
                           WithLength(c.engine, std::move(cur), a, PaddedChunkSize(c.L[a], n)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, PackChunks(c.engine, std::move(padded), b, n));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(send.dtype(), send.shape()));
  const int64_t count = send.numel() / n;
  RESHARD_RETURN_IF_ERROR(
      c.comm.AllToAll(c.step.group, send.data(), recv.data(), count, send.dtype()));
  c.CountBytes((n - 1) * count, send);
  RESHARD_ASSIGN_OR_RETURN(LocalTensor joined, UnpackChunks(c.engine, std::move(recv), a, c.L[a]));
  return WithLength(c.engine, std::move(joined), b, ChunkSize(c.L[b], n, c.me));
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
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, c.L[d]));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, PackChunks(c.engine, std::move(cur), d, c.n));
  const std::vector<int64_t> chunk(send.shape().begin() + 1, send.shape().end());
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(send.dtype(), chunk));
  const int64_t count = recv.numel();
  RESHARD_RETURN_IF_ERROR(c.comm.ReduceScatter(c.step.group, send.data(), recv.data(), count,
                                               send.dtype(), c.step.src.op()));
  c.CountBytes((c.n - 1) * count, recv);
  return WithLength(c.engine, std::move(recv), d, ChunkSize(c.L[d], c.n, c.me));
}

// R -> S(d): this rank's chunk, no communication.
absl::StatusOr<LocalTensor> RunChunk(LocalTensor cur, StepContext& c) {
  const int d = c.step.dst.dim();
  RESHARD_RETURN_IF_ERROR(CheckExtent(cur, d, c.L[d]));
  return TakeSlab(c.engine, cur, d, ChunkOffset(c.L[d], c.n, c.me),
                  ChunkSize(c.L[d], c.n, c.me));
}

// R -> P(op): the logical value is unchanged.
absl::StatusOr<LocalTensor> RunPartition(LocalTensor cur, StepContext& c) {
  if (c.step.dst.op() == ReduceOp::kSum && c.me != 0 && cur.numel() > 0) {
    // Spec §11: index 0 of the group keeps the data, the others hold zeros.
    RESHARD_RETURN_IF_ERROR(ZeroSlab(c.engine, cur, 0, 0, cur.shape()[0]));
  }
  return cur;
}

// One step on the current local tensor (spec §11), by kind.
absl::StatusOr<LocalTensor> RunStep(LocalTensor cur, StepContext& c) {
  if (c.n == 1) return cur;  // spec §11: size-1 groups never communicate
  switch (c.step.kind) {
    case StepKind::kAllGather: return RunAllGather(std::move(cur), c);
    case StepKind::kAllToAll: return RunAllToAll(std::move(cur), c);
    case StepKind::kAllReduce: return RunAllReduce(std::move(cur), c);
    case StepKind::kReduceScatter: return RunReduceScatter(std::move(cur), c);
    case StepKind::kChunk: return RunChunk(std::move(cur), c);
    case StepKind::kPartition: return RunPartition(std::move(cur), c);
    case StepKind::kPermute: break;
  }
  if (c.step.kind == StepKind::kPermute || c.step.group.size() > 1) {
    return absl::UnimplementedError("native steps are not executable yet");
  }
  return absl::InternalError("unknown step kind");
}

}  // namespace

absl::Status Redistribute(LocalTensor& t, const DistSpec& src, const DistSpec& dst,
                          const Plan& plan, Communicator& comm, ExecutionStats* stats) {
  if (src.mesh() != comm.mesh() || dst.mesh() != comm.mesh()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "redistribute: the specs' meshes (%s, %s) differ from the communicator's (%s)",
        src.mesh().ToString(), dst.mesh().ToString(), comm.mesh().ToString()));
  }
  if (src.global_shape() != dst.global_shape() || src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(
        "redistribute: source and destination differ in global shape or dtype");
  }
  const std::vector<int64_t> coord = comm.coordinate();
  const std::vector<int64_t> want = src.LocalShape(coord);
  if (t.shape() != want || t.dtype() != src.dtype() || t.space() != comm.memory_space()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "redistribute: rank %d holds %s, its source shard is %s[%s]@%s", comm.rank(),
        t.DebugString(), DTypeName(src.dtype()), absl::StrJoin(want, ","),
        MemorySpaceName(comm.memory_space())));
  }
  RESHARD_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> logical,
                           CheckPlan(src, dst, plan, coord));

  if (stats != nullptr) stats->steps.clear();
  LocalTensor cur = std::move(t);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i].step;
    StepStats step_stats;
    step_stats.step = step;
    step_stats.logical_shape = logical[i];
    StepContext context{step,
                        logical[i],
                        comm.mesh().GroupSize(step.group),
                        comm.mesh().IndexInGroup(step.group, comm.rank()),
                        comm,
                        comm.copy_engine(),
                        step_stats};
    absl::StatusOr<LocalTensor> next = RunStep(std::move(cur), context);
    if (!next.ok()) return StepError(static_cast<int>(i), step, next.status());
    cur = *std::move(next);
    if (stats != nullptr) stats->steps.push_back(std::move(step_stats));
  }
  const std::vector<int64_t> final_shape = dst.LocalShape(coord);
  if (cur.shape() != final_shape) {
    return absl::InternalError(absl::StrFormat(
        "redistribute: ended with %s, the destination shard is [%s]", cur.DebugString(),
        absl::StrJoin(final_shape, ",")));
  }
  t = std::move(cur);
  return absl::OkStatus();
}

}  // namespace reshard
