#include "collectives/executor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
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

// Product of the dims before `dim`: when it is 1, slabs of `dim` are
// contiguous and chunk j of a padded tensor is already where a collective
// wants it, so no copy is needed.
int64_t Outer(absl::Span<const int64_t> shape, int dim) {
  return NumElements(shape.subspan(0, dim));
}

std::vector<int64_t> With(std::vector<int64_t> shape, int dim, int64_t value) {
  shape[dim] = value;
  return shape;
}

std::vector<int64_t> Prepend(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{n};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

// The state as the executor tracks it: placements, and each tensor dim's
// shard order (mesh dims in application order).
struct State {
  std::vector<Placement> placements;
  std::vector<std::vector<int>> order;

  static State Of(const DistState& s, int tensor_ndim) {
    State st;
    st.placements = s.placements();
    st.order.resize(tensor_ndim);
    for (int d = 0; d < tensor_ndim; ++d) {
      for (int m : s.OrderOf(d)) st.order[d].push_back(m);
    }
    return st;
  }

  // The orders without size-1 mesh dims, which split nothing.
  std::vector<std::vector<int>> EffectiveOrder(const DeviceMesh& mesh) const {
    std::vector<std::vector<int>> out(order.size());
    for (size_t d = 0; d < order.size(); ++d) {
      for (int m : order[d]) {
        if (mesh.size(m) > 1) out[d].push_back(m);
      }
    }
    return out;
  }

  std::string ToString() const {
    std::string out;
    for (size_t m = 0; m < placements.size(); ++m) {
      absl::StrAppend(&out, placements[m].ToString());
      if (placements[m].is_shard() && order[placements[m].dim()].size() > 1) {
        const std::vector<int>& o = order[placements[m].dim()];
        absl::StrAppend(&out, "[", std::find(o.begin(), o.end(), static_cast<int>(m)) - o.begin(),
                        "]");
      }
    }
    return out;
  }
};

// Spec §10 for this rank: the global shape split by every mesh dim in the
// shard order except `mesh_dim`.
std::vector<int64_t> LogicalShape(const State& st, const DeviceMesh& mesh,
                                  const std::vector<int64_t>& global,
                                  const std::vector<int64_t>& coord, int mesh_dim) {
  std::vector<int64_t> shape = global;
  for (size_t d = 0; d < shape.size(); ++d) {
    for (int m : st.order[d]) {
      if (m != mesh_dim) shape[d] = ChunkSize(shape[d], mesh.size(m), coord[m]);
    }
  }
  return shape;
}

std::string StepName(int i, const TransformInfo& step) {
  // Numbered from 1, as `reshard plan` prints steps.
  return absl::StrFormat("step %d (%s->%s %s on mesh dim %d)", i + 1, step.src.ToString(),
                         step.dst.ToString(), CollectiveName(step.collective()), step.mesh_dim);
}

absl::Status StepError(int i, const TransformInfo& step, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(StepName(i, step), ": ", s.message()));
}

// Walks the plan without touching data: checks that each step starts where
// the previous one ended and is executable, and computes this rank's logical
// shape per step. Identical on every rank, so a bad plan fails everywhere
// before any communication.
absl::StatusOr<std::vector<std::vector<int64_t>>> CheckPlan(const DistSpec& src,
                                                            const DistSpec& dst,
                                                            const Plan& plan,
                                                            const std::vector<int64_t>& coord) {
  const DeviceMesh& mesh = src.mesh();
  State st = State::Of(src.state(), src.tensor_ndim());
  std::vector<std::vector<int64_t>> logical;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const TransformInfo& step = plan.steps[i];
    const int k = step.mesh_dim;
    auto fail = [&](absl::Status s) { return StepError(static_cast<int>(i), step, s); };
    if (k < 0 || k >= mesh.ndim()) {
      return fail(absl::InvalidArgumentError(
          absl::StrFormat("the mesh %s has %d dims", mesh.ToString(), mesh.ndim())));
    }
    if (st.placements[k] != step.src) {
      return fail(absl::InvalidArgumentError(absl::StrFormat(
          "the plan expects mesh dim %d to be %s but the tensor is %s there (state %s)", k,
          step.src.ToString(), st.placements[k].ToString(), st.ToString())));
    }
    if (!IsLegalStep(step.src, step.dst, mesh.size(k)) ||
        (step.dst.is_shard() && step.dst.dim() >= src.tensor_ndim())) {
      return fail(absl::InvalidArgumentError("not an executable transition"));
    }
    if (step.src.is_replicate() && step.dst.is_partial() && step.dst.op() == ReduceOp::kProd) {
      return fail(absl::UnimplementedError(
          "R->P(prod) has no exact local split (spec §11); plan to another reduce op"));
    }
    logical.push_back(LogicalShape(st, mesh, src.global_shape(), coord, k));
    if (step.src.is_shard()) {
      std::vector<int>& o = st.order[step.src.dim()];
      auto it = std::find(o.begin(), o.end(), k);
      if (it == o.end()) {
        return fail(absl::InternalError(absl::StrFormat(
            "mesh dim %d is missing from tensor dim %d's shard order (state %s)", k,
            step.src.dim(), st.ToString())));
      }
      // Only the last split can be undone by a collective on its group
      // (spec §4); splits after it over size-1 mesh dims change nothing.
      if (mesh.size(k) > 1) {
        for (auto later = it + 1; later != o.end(); ++later) {
          if (mesh.size(*later) > 1) {
            return fail(absl::InvalidArgumentError(absl::StrFormat(
                "mesh dim %d is not the last split of tensor dim %d (state %s)", k,
                step.src.dim(), st.ToString())));
          }
        }
      }
      o.erase(it);
    }
    if (step.dst.is_shard()) st.order[step.dst.dim()].push_back(k);
    st.placements[k] = step.dst;
  }
  const State want = State::Of(dst.state(), dst.tensor_ndim());
  if (st.placements != want.placements || st.EffectiveOrder(mesh) != want.EffectiveOrder(mesh)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the plan ends in %s, not in the destination %s", st.ToString(), want.ToString()));
  }
  return logical;
}

// The copies of spec §11, on top of the slab helpers. Each takes its input
// by value so that it can pass it through untouched when nothing needs to
// change.
class StepRunner {
 public:
  explicit StepRunner(CopyEngine& engine) : engine_(engine) {}

  // t with `dim` padded or trimmed to `length`.
  absl::StatusOr<LocalTensor> Resized(LocalTensor t, int dim, int64_t length) {
    if (t.shape()[dim] == length) return t;
    return Resize(engine_, t, dim, length);
  }

  // Splits t (extent L along dim) into n chunks of c = ceil(L/n) rows,
  // zero-padded, laid out one after another: shape {n, chunk shape}.
  absl::StatusOr<LocalTensor> PackChunks(LocalTensor t, int dim, int64_t n) {
    const int64_t L = t.shape()[dim];
    const int64_t c = PaddedChunkSize(L, n);
    const std::vector<int64_t> chunk = With(t.shape(), dim, c);
    if (Outer(t.shape(), dim) == 1) {
      // Chunks of torch.chunk fill [0, L) in order, so padding the tail
      // gives exactly the packed layout.
      absl::StatusOr<LocalTensor> padded = Resized(std::move(t), dim, n * c);
      if (!padded.ok()) return padded.status();
      if (absl::Status s = padded->Reshape(Prepend(n, chunk)); !s.ok()) return s;
      return padded;
    }
    absl::StatusOr<LocalTensor> out = engine_.Allocate(t.dtype(), Prepend(n, chunk));
    if (!out.ok()) return out.status();
    const int item = ItemSize(t.dtype());
    const int64_t chunk_bytes = NumElements(chunk) * item;
    for (int64_t j = 0; j < n; ++j) {
      char* dst = static_cast<char*>(out->data()) + j * chunk_bytes;
      const int64_t size = ChunkSize(L, n, j);
      absl::StatusOr<Copy2D> copy =
          SlabCopy(t.shape(), chunk, dim, ChunkOffset(L, n, j), 0, size, item);
      if (!copy.ok()) return copy.status();
      if (absl::Status s = engine_.Copy(*copy, dst, t.data()); !s.ok()) return s;
      if (size < c) {
        absl::StatusOr<Fill2D> fill = SlabFill(chunk, dim, size, c - size, item);
        if (!fill.ok()) return fill.status();
        if (absl::Status s = engine_.Fill(*fill, dst); !s.ok()) return s;
      }
    }
    return out;
  }

  // The inverse: n padded chunks (shape {n, chunk shape}) concatenated along
  // dim, each trimmed to its torch.chunk size of L.
  absl::StatusOr<LocalTensor> UnpackChunks(LocalTensor buf, int dim, int64_t L) {
    const int64_t n = buf.shape()[0];
    const std::vector<int64_t> chunk(buf.shape().begin() + 1, buf.shape().end());
    const int64_t c = chunk[dim];
    if (Outer(chunk, dim) == 1) {
      if (absl::Status s = buf.Reshape(With(chunk, dim, n * c)); !s.ok()) return s;
      return Resized(std::move(buf), dim, L);
    }
    absl::StatusOr<LocalTensor> out = engine_.Allocate(buf.dtype(), With(chunk, dim, L));
    if (!out.ok()) return out.status();
    const int item = ItemSize(buf.dtype());
    const int64_t chunk_bytes = NumElements(chunk) * item;
    for (int64_t j = 0; j < n; ++j) {
      const char* src = static_cast<const char*>(buf.data()) + j * chunk_bytes;
      absl::StatusOr<Copy2D> copy =
          SlabCopy(chunk, out->shape(), dim, 0, ChunkOffset(L, n, j), ChunkSize(L, n, j), item);
      if (!copy.ok()) return copy.status();
      if (absl::Status s = engine_.Copy(*copy, out->data(), src); !s.ok()) return s;
    }
    return out;
  }

  absl::StatusOr<LocalTensor> Allocate(DType dtype, std::vector<int64_t> shape) {
    return engine_.Allocate(dtype, std::move(shape));
  }
  CopyEngine& engine() { return engine_; }

 private:
  CopyEngine& engine_;
};

absl::Status CheckExtent(const LocalTensor& t, int dim, int64_t want) {
  if (t.shape()[dim] != want) {
    return absl::InternalError(absl::StrFormat(
        "local tensor %s has extent %d on dim %d, expected %d", t.DebugString(),
        t.shape()[dim], dim, want));
  }
  return absl::OkStatus();
}

// One step on the current local tensor (spec §11). `L` is the logical shape.
absl::StatusOr<LocalTensor> RunStep(LocalTensor cur, const TransformInfo& step,
                                    const std::vector<int64_t>& L, Communicator& comm,
                                    StepRunner& run, StepStats& stats) {
  const int k = step.mesh_dim;
  const MeshDimSet group = MeshDimSet::Single(k);
  const int64_t n = comm.mesh().size(k);
  const int64_t me = comm.coordinate()[k];
  const DType dtype = cur.dtype();
  const int item = ItemSize(dtype);
  if (n == 1) return cur;  // spec §11: size-1 mesh dims never communicate
  switch (step.collective()) {
    case Collective::kAllGather: {  // S(d) -> R
      const int d = step.src.dim();
      if (absl::Status s = CheckExtent(cur, d, ChunkSize(L[d], n, me)); !s.ok()) return s;
      absl::StatusOr<LocalTensor> send = run.Resized(std::move(cur), d, PaddedChunkSize(L[d], n));
      if (!send.ok()) return send.status();
      absl::StatusOr<LocalTensor> recv = run.Allocate(dtype, Prepend(n, send->shape()));
      if (!recv.ok()) return recv.status();
      const int64_t count = send->numel();
      RESHARD_RETURN_IF_ERROR(comm.AllGather(group, send->data(), recv->data(), count, dtype));
      stats.bytes_sent = stats.bytes_received = (n - 1) * count * item;
      return run.UnpackChunks(*std::move(recv), d, L[d]);
    }
    case Collective::kAllToAll: {  // S(a) -> S(b)
      const int a = step.src.dim();
      const int b = step.dst.dim();
      if (absl::Status s = CheckExtent(cur, a, ChunkSize(L[a], n, me)); !s.ok()) return s;
      if (absl::Status s = CheckExtent(cur, b, L[b]); !s.ok()) return s;
      absl::StatusOr<LocalTensor> padded = run.Resized(std::move(cur), a, PaddedChunkSize(L[a], n));
      if (!padded.ok()) return padded.status();
      absl::StatusOr<LocalTensor> send = run.PackChunks(*std::move(padded), b, n);
      if (!send.ok()) return send.status();
      absl::StatusOr<LocalTensor> recv = run.Allocate(dtype, send->shape());
      if (!recv.ok()) return recv.status();
      const int64_t count = send->numel() / n;
      RESHARD_RETURN_IF_ERROR(comm.AllToAll(group, send->data(), recv->data(), count, dtype));
      stats.bytes_sent = stats.bytes_received = (n - 1) * count * item;
      absl::StatusOr<LocalTensor> joined = run.UnpackChunks(*std::move(recv), a, L[a]);
      if (!joined.ok()) return joined.status();
      return run.Resized(*std::move(joined), b, ChunkSize(L[b], n, me));
    }
    case Collective::kAllReduce: {  // P(op) -> R, in place
      const int64_t count = cur.numel();
      RESHARD_RETURN_IF_ERROR(comm.AllReduce(group, cur.data(), count, dtype, step.src.op()));
      stats.bytes_sent = stats.bytes_received = 2 * (n - 1) * PaddedChunkSize(count, n) * item;
      return cur;
    }
    case Collective::kReduceScatter: {  // P(op) -> S(d)
      const int d = step.dst.dim();
      if (absl::Status s = CheckExtent(cur, d, L[d]); !s.ok()) return s;
      absl::StatusOr<LocalTensor> send = run.PackChunks(std::move(cur), d, n);
      if (!send.ok()) return send.status();
      const std::vector<int64_t> chunk(send->shape().begin() + 1, send->shape().end());
      absl::StatusOr<LocalTensor> recv = run.Allocate(dtype, chunk);
      if (!recv.ok()) return recv.status();
      const int64_t count = recv->numel();
      RESHARD_RETURN_IF_ERROR(
          comm.ReduceScatter(group, send->data(), recv->data(), count, dtype, step.src.op()));
      stats.bytes_sent = stats.bytes_received = (n - 1) * count * item;
      return run.Resized(*std::move(recv), d, ChunkSize(L[d], n, me));
    }
    case Collective::kChunk: {  // R -> S(d): this rank's chunk, no communication
      const int d = step.dst.dim();
      if (absl::Status s = CheckExtent(cur, d, L[d]); !s.ok()) return s;
      return TakeSlab(run.engine(), cur, d, ChunkOffset(L[d], n, me), ChunkSize(L[d], n, me));
    }
    case Collective::kPartition: {  // R -> P(op): the logical value is unchanged
      if (step.dst.op() == ReduceOp::kSum && me != 0 && cur.numel() > 0) {
        // Spec §11: coordinate 0 keeps the data, the others hold zeros.
        if (absl::Status s = ZeroSlab(run.engine(), cur, 0, 0, cur.shape()[0]); !s.ok()) return s;
      }
      return cur;
    }
  }
  return absl::InternalError("unknown collective");
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
  absl::StatusOr<std::vector<std::vector<int64_t>>> logical = CheckPlan(src, dst, plan, coord);
  if (!logical.ok()) return logical.status();

  if (stats != nullptr) stats->steps.clear();
  StepRunner run(comm.copy_engine());
  LocalTensor cur = std::move(t);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const TransformInfo& step = plan.steps[i];
    StepStats step_stats;
    step_stats.mesh_dim = step.mesh_dim;
    step_stats.collective = step.collective();
    step_stats.logical_shape = (*logical)[i];
    absl::StatusOr<LocalTensor> next =
        RunStep(std::move(cur), step, (*logical)[i], comm, run, step_stats);
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

StepBytes BytesImpliedByStep(const TransformInfo& step, const DeviceMesh& mesh, DType dtype) {
  const int64_t n = mesh.size(step.mesh_dim);
  const int item = ItemSize(dtype);
  StepBytes b;
  if (n == 1) return b;
  const std::vector<int64_t>& L = step.logical_shape;
  int64_t count = 0;
  switch (step.collective()) {
    case Collective::kAllGather:
      count = NumElements(With(L, step.src.dim(), PaddedChunkSize(L[step.src.dim()], n)));
      break;
    case Collective::kReduceScatter:
      count = NumElements(With(L, step.dst.dim(), PaddedChunkSize(L[step.dst.dim()], n)));
      break;
    case Collective::kAllToAll: {
      std::vector<int64_t> chunk = With(L, step.src.dim(), PaddedChunkSize(L[step.src.dim()], n));
      count = NumElements(With(chunk, step.dst.dim(), PaddedChunkSize(L[step.dst.dim()], n)));
      break;
    }
    case Collective::kAllReduce:
      b.sent = b.received = 2 * (n - 1) * PaddedChunkSize(NumElements(L), n) * item;
      return b;
    case Collective::kChunk:
    case Collective::kPartition:
      return b;
  }
  b.sent = b.received = (n - 1) * count * item;
  return b;
}

}  // namespace reshard
