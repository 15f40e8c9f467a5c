#include "planner/step.h"

#include <cassert>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "planner/chunk.h"

namespace reshard {

absl::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kAllToAll: return "all_to_all";
    case StepKind::kAllGather: return "all_gather";
    case StepKind::kAllReduce: return "all_reduce";
    case StepKind::kReduceScatter: return "reduce_scatter";
    case StepKind::kChunk: return "chunk";
    case StepKind::kPartition: return "partition";
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

Step MakeStep(MeshDimSet group, Placement src, Placement dst) {
  std::optional<StepKind> kind = StepKindFor(src, dst);
  assert(kind.has_value() && !group.empty());
  return Step{group, kind.value_or(StepKind::kChunk), src, dst};
}

std::string Step::ToString() const {
  const std::string where = group.size() == 1 ? absl::StrCat("mesh dim ", group.First())
                                              : absl::StrCat("mesh dims ", group.ToString());
  return absl::StrCat(src.ToString(), "->", dst.ToString(), " ", StepKindName(kind), " on ",
                      where);
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

absl::Status CheckMeshDim(const DistState& state, const Step& step, const DeviceMesh& mesh) {
  if (step.group.size() != 1) {
    return absl::UnimplementedError(absl::StrFormat(
        "steps over several mesh dims (%s) are not supported yet; plan one mesh dim per step",
        step.group.ToString()));
  }
  const int m = step.mesh_dim();
  if (m >= mesh.ndim() || m >= state.ndim()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the mesh %s has %d dims", mesh.ToString(), mesh.ndim()));
  }
  if (state.placement(m) != step.src) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the plan expects mesh dim %d to be %s but the tensor is %s there (state %s)", m,
        step.src.ToString(), state.placement(m).ToString(), state.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckStep(const DistState& state, const Step& step, const DeviceMesh& mesh,
                       int tensor_ndim) {
  RESHARD_RETURN_IF_ERROR(CheckMeshDim(state, step, mesh));
  const int m = step.mesh_dim();
  if (StepKindFor(step.src, step.dst, mesh.GroupSize(step.group)) != step.kind ||
      (step.dst.is_shard() && step.dst.dim() >= tensor_ndim)) {
    return absl::InvalidArgumentError("not an executable transition");
  }
  // Only the last split can be undone by a collective on its group (spec §4).
  if (step.src.is_shard() && mesh.size(m) > 1 &&
      LastRealSplit(state, step.src.dim(), mesh) != m) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mesh dim %d is not the last split of tensor dim %d (state %s)", m,
                        step.src.dim(), state.ToString()));
  }
  return absl::OkStatus();
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

StepBytes BytesOfStep(const Step& step, absl::Span<const int64_t> logical,
                      const DeviceMesh& mesh, DType dtype) {
  const int64_t n = mesh.GroupSize(step.group);
  StepBytes b;
  if (n == 1 || !IsCommunicating(step.kind)) return b;
  // The padded chunk each rank exchanges: the logical shape with the split
  // tensor dims cut to ceil(L / n).
  std::vector<int64_t> chunk(logical.begin(), logical.end());
  if (step.src.is_shard()) chunk[step.src.dim()] = PaddedChunkSize(logical[step.src.dim()], n);
  if (step.dst.is_shard()) chunk[step.dst.dim()] = PaddedChunkSize(logical[step.dst.dim()], n);
  int64_t count = 1;
  for (int64_t e : chunk) count *= e;
  const int item = ItemSize(dtype);
  if (step.kind == StepKind::kAllReduce) {
    b.sent = b.received = 2 * (n - 1) * PaddedChunkSize(count, n) * item;
  } else {
    b.sent = b.received = (n - 1) * count * item;
  }
  return b;
}

}  // namespace reshard
