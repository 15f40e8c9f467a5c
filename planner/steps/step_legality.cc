// CheckStep: the one legality rule for a step (spec §4, §4.2).
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "planner/steps/step.h"

namespace reshard {

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

// Every mesh dim of the group exists and, but for permutes and exchanges,
// holds step.src.
absl::Status CheckGroupHolds(const DistState& state, const Step& step, const DeviceMesh& mesh) {
  if (step.group.empty()) return absl::InvalidArgumentError("a step needs a mesh dim");
  for (int m : step.group.ToVector()) {
    if (m >= mesh.ndim() || m >= state.ndim()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("the mesh %s has %d dims", mesh.ToString(), mesh.ndim()));
    }
    if (!MovesSlices(step.kind) && state.placement(m) != step.src) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the plan expects mesh dim %d to be %s but the tensor is %s there (state %s)", m,
          step.src.ToString(), state.placement(m).ToString(), state.ToString()));
    }
  }
  return absl::OkStatus();
}

// Entries list mesh dims of the group at most once, each onto a tensor dim,
// and (`all`) every one of them.
absl::Status CheckEntries(const Step& step, int tensor_ndim, bool all = true) {
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
  if (all && listed != step.group) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: its entries leave out mesh dims of %s",
                                                      step.ToString(), step.group.ToString()));
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

// Spec §4.2: a permute rearranges Shard mesh dims that end their orders; an
// exchange re-lays out Shard and Replicate ones, some of which end Replicate.
absl::Status CheckSliceMove(const DistState& state, const Step& step, int tensor_ndim) {
  const bool permute = step.kind == StepKind::kPermute;
  RESHARD_RETURN_IF_ERROR(CheckEntries(step, tensor_ndim, /*all=*/permute));
  for (int m : step.group.ToVector()) {
    const Placement p = state.placement(m);
    if (permute ? !p.is_shard() : p.is_partial()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s; mesh dim %d is %s (state %s)",
                          permute ? "a permute moves Shard mesh dims only"
                                  : "an exchange moves Shard and Replicate mesh dims only",
                          m, p.ToString(), state.ToString()));
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
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s acts on one mesh dim at a time",
                                                      step.ToString(), StepKindName(step.kind)));
  }
  if (step.dst.is_shard()) {
    RESHARD_RETURN_IF_ERROR(CheckEntries(step, tensor_ndim));
    for (int i = 0; i < step.entries.size(); ++i) {
      if (step.entries.tensor_dim(i) != step.dst.dim()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: its entries must all enter %s",
                                                          step.ToString(), step.dst.ToString()));
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
  if (step.src.is_shard() && mesh.size(m) > 1 && LastRealSplit(state, step.src.dim(), mesh) != m) {
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
  if (MovesSlices(step.kind)) return CheckSliceMove(state, step, tensor_ndim);
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

bool RunsOnData(const Step& step, int64_t group_size) {
  return !(step.kind == StepKind::kPartition && step.dst.op() == ReduceOp::kProd && group_size > 1);
}

}  // namespace reshard
