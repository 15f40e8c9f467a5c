#include "planner/step.h"

#include <cassert>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/chunk.h"
#include "planner/permute_exchange.h"

namespace reshard {

absl::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kAllToAll: return "all_to_all";
    case StepKind::kAllGather: return "all_gather";
    case StepKind::kAllReduce: return "all_reduce";
    case StepKind::kReduceScatter: return "reduce_scatter";
    case StepKind::kChunk: return "chunk";
    case StepKind::kPartition: return "partition";
    case StepKind::kPermute: return "permute";
  }
  return "?";
}

std::optional<StepKind> StepKindFor(Placement src, Placement dst) {
  if (src == dst) return std::nullopt;
  if (src.is_shard()) {
    if (dst.is_partial()) return std::nullopt;
    return dst.is_shard() ? StepKind::kAllToAll : StepKind::kAllGather;
  }
  if (src.is_partial()) {
    if (dst.is_partial()) return std::nullopt;
    return dst.is_shard() ? StepKind::kReduceScatter : StepKind::kAllReduce;
  }
  return dst.is_shard() ? StepKind::kChunk : StepKind::kPartition;
}

std::optional<StepKind> StepKindFor(Placement src, Placement dst, int64_t group_size) {
  if (group_size == 1 && src.is_shard() && dst.is_partial()) return StepKind::kPartition;
  return StepKindFor(src, dst);
}

Step MakeGroupStep(absl::Span<const int> order, Placement src, Placement dst) {
  std::optional<StepKind> kind = StepKindFor(src, dst);
  assert(kind.has_value() && !order.empty());
  Step step{MeshDimSet(), kind.value_or(StepKind::kChunk), src, dst, ShardEntries()};
  for (int m : order) step.group = step.group.With(m);
  if (order.size() > 1 && dst.is_shard()) {
    for (int m : order) step.entries.Append(m, dst.dim());
  }
  return step;
}

Step MakeStep(MeshDimSet group, Placement src, Placement dst) {
  return MakeGroupStep(group.ToVector(), src, dst);
}

Step MakePermute(absl::Span<const std::pair<int, int>> entries) {
  Step step{MeshDimSet(), StepKind::kPermute, Placement::Replicate(), Placement::Replicate(),
            ShardEntries()};
  for (auto [m, d] : entries) {
    step.group = step.group.With(m);
    step.entries.Append(m, d);
  }
  return step;
}

std::string Step::ToString() const {
  const std::string where = group.size() == 1 ? absl::StrCat("mesh dim ", group.First())
                                              : absl::StrCat("mesh dims ", group.ToString());
  if (kind == StepKind::kPermute) {
    std::string moves;
    for (int i = 0; i < entries.size(); ++i) {
      absl::StrAppend(&moves, " ", entries.mesh_dim(i), "->S(", entries.tensor_dim(i), ")");
    }
    return absl::StrCat("permute on ", where, ":", moves);
  }
  std::string order;
  if (!entries.empty()) {
    std::vector<int> dims;
    for (int i = 0; i < entries.size(); ++i) dims.push_back(entries.mesh_dim(i));
    order = absl::StrCat(" as [", absl::StrJoin(dims, ","), "]");
  }
  return absl::StrCat(src.ToString(), "->", dst.ToString(), " ", StepKindName(kind), " on ",
                      where, order);
}

DistState ApplyGroupStep(const DistState& state, const Step& step) {
  // The group is the tail of every order it leaves (CheckStep), so the
  // removals commute; entering Shard, the mesh dims join in entries' order.
  const bool joins = step.kind == StepKind::kPermute || !step.entries.empty();
  DistState next = state;
  for (unsigned bits = step.group.bits(); bits != 0; bits &= bits - 1) {
    next = next.WithPlacement(__builtin_ctz(bits), joins ? Placement::Replicate() : step.dst);
  }
  if (!joins) return next;
  for (int i = 0; i < step.entries.size(); ++i) {
    next = next.WithPlacement(step.entries.mesh_dim(i),
                              Placement::Shard(step.entries.tensor_dim(i)));
  }
  return next;
}

MeshDimList GroupSplitsOf(const DistState& state, const Step& step, int tensor_dim,
                          bool after) {
  const DistState in = after ? ApplyStep(state, step) : state;
  MeshDimList out;
  for (int m : in.OrderOf(tensor_dim)) {
    if (step.group.Contains(m)) out.push_back(m);
  }
  return out;
}

namespace {

// The last split of `tensor_dim` in `state` that really splits (size > 1),
// or -1 when there is none.
int LastRealSplit(const DistState& state, int tensor_dim, const DeviceMesh& mesh) {
  MeshDimList order = state.OrderOf(tensor_dim);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (mesh.size(*it) > 1) return *it;
  }
  return -1;
}

// Every mesh dim of the group exists and, but for permutes, holds step.src.
absl::Status CheckGroupHolds(const DistState& state, const Step& step, const DeviceMesh& mesh) {
  if (step.group.empty()) return absl::InvalidArgumentError("a step needs a mesh dim");
  for (int m : step.group.ToVector()) {
    if (m >= mesh.ndim() || m >= state.ndim()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("the mesh %s has %d dims", mesh.ToString(), mesh.ndim()));
    }
    if (step.kind != StepKind::kPermute && state.placement(m) != step.src) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the plan expects mesh dim %d to be %s but the tensor is %s there (state %s)", m,
          step.src.ToString(), state.placement(m).ToString(), state.ToString()));
    }
  }
  return absl::OkStatus();
}

// Entries list every mesh dim of the group once, each onto a tensor dim.
absl::Status CheckEntries(const Step& step, int tensor_ndim) {
  MeshDimSet listed;
  for (int i = 0; i < step.entries.size(); ++i) {
    const int m = step.entries.mesh_dim(i);
    if (!step.group.Contains(m) || listed.Contains(m) ||
        step.entries.tensor_dim(i) >= tensor_ndim) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: its entries must list each mesh dim of %s once, onto a tensor dim < %d",
          step.ToString(), step.group.ToString(), tensor_ndim));
    }
    listed = listed.With(m);
  }
  if (listed != step.group) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: its entries leave out mesh dims of %s", step.ToString(),
                        step.group.ToString()));
  }
  return absl::OkStatus();
}

// True when the group's mesh dims in `order` are all at its end.
bool GroupIsTail(const MeshDimList& order, MeshDimSet group) {
  bool in_tail = false;
  for (int m : order) {
    if (group.Contains(m)) {
      in_tail = true;
    } else if (in_tail) {
      return false;
    }
  }
  return true;
}

absl::Status NotTail(const DistState& state, const Step& step, int d) {
  return absl::InvalidArgumentError(
      absl::StrFormat("mesh dims %s are not the last splits of tensor dim %d (state %s)",
                      step.group.ToString(), d, state.ToString()));
}

// Spec §4.2: a permute rearranges Shard mesh dims that end their orders.
absl::Status CheckPermute(const DistState& state, const Step& step, int tensor_ndim) {
  RESHARD_RETURN_IF_ERROR(CheckEntries(step, tensor_ndim));
  for (int m : step.group.ToVector()) {
    if (!state.placement(m).is_shard()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a permute moves Shard mesh dims only; mesh dim %d is %s (state %s)", m,
          state.placement(m).ToString(), state.ToString()));
    }
  }
  for (int d = 0; d < tensor_ndim; ++d) {
    if (!GroupIsTail(state.OrderOf(d), step.group)) return NotTail(state, step, d);
  }
  if (ApplyGroupStep(state, step) == state) {
    return absl::InvalidArgumentError(step.ToString() + " changes nothing");
  }
  return absl::OkStatus();
}

// Spec §4.2: one collective over several mesh dims.
absl::Status CheckGroupCollective(const DistState& state, const Step& step, int tensor_ndim) {
  if (!IsCommunicating(step.kind)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s acts on one mesh dim at a time", step.ToString(), StepKindName(step.kind)));
  }
  if (step.dst.is_shard()) {
    RESHARD_RETURN_IF_ERROR(CheckEntries(step, tensor_ndim));
    for (int i = 0; i < step.entries.size(); ++i) {
      if (step.entries.tensor_dim(i) != step.dst.dim()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: its entries must all enter %s", step.ToString(), step.dst.ToString()));
      }
    }
  }
  if (!step.dst.is_shard() && !step.entries.empty()) {
    return absl::InvalidArgumentError(step.ToString() + ": only a Shard target takes entries");
  }
  if (step.src.is_shard()) {
    const MeshDimList order = state.OrderOf(step.src.dim());
    const size_t first_of_tail = order.size() - static_cast<size_t>(step.group.size());
    for (size_t i = 0; i < order.size(); ++i) {
      if ((i >= first_of_tail) != step.group.Contains(order[i])) {
        return NotTail(state, step, step.src.dim());
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSingle(const DistState& state, const Step& step, const DeviceMesh& mesh) {
  // Only the last split can be undone by a collective on its group (spec §4).
  const int m = step.mesh_dim();
  if (step.src.is_shard() && mesh.size(m) > 1 &&
      LastRealSplit(state, step.src.dim(), mesh) != m) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mesh dim %d is not the last split of tensor dim %d (state %s)", m,
                        step.src.dim(), state.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckStep(const DistState& state, const Step& step, const DeviceMesh& mesh,
                       int tensor_ndim) {
  RESHARD_RETURN_IF_ERROR(CheckGroupHolds(state, step, mesh));
  if (step.kind == StepKind::kPermute) return CheckPermute(state, step, tensor_ndim);
  if (StepKindFor(step.src, step.dst, mesh.GroupSize(step.group)) != step.kind ||
      (step.dst.is_shard() && step.dst.dim() >= tensor_ndim)) {
    return absl::InvalidArgumentError("not an executable transition");
  }
  if (step.group.size() == 1) {
    if (!step.entries.empty()) {
      return absl::InvalidArgumentError(step.ToString() + ": a single mesh dim takes no entries");
    }
    return CheckSingle(state, step, mesh);
  }
  return CheckGroupCollective(state, step, tensor_ndim);
}

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
    // A permute's block is cut one way or the other, never both.
    if (step.kind != StepKind::kPermute) {
      chunk[d] = LargestSlice(chunk[d], GroupSplitsOf(state, step, dim, /*after=*/true), mesh);
    }
  }
  return chunk;
}

StepBytes BytesOfStep(const DistState& state, const Step& step,
                      absl::Span<const int64_t> logical, const DeviceMesh& mesh,
                      absl::Span<const int64_t> coordinate, DType dtype) {
  const int64_t n = mesh.GroupSize(step.group);
  StepBytes b;
  if (n == 1 || !IsCommunicating(step.kind)) return b;
  const int item = ItemSize(dtype);
  if (step.kind == StepKind::kPermute) {
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
