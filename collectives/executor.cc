#include "collectives/executor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/step_runners.h"
#include "planner/steps/step_bytes.h"

namespace reshard {

namespace {

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

// A step of a checked plan: the state it leaves and this rank's logical
// shape in it.
struct CheckedStep {
  DistState state;
  std::vector<int64_t> logical;
};

// Walks the plan without touching data: checks that each step is legal where
// the previous one ended (CheckStep) and executable, and computes this rank's
// logical shape per step. Identical on every rank, so a bad plan fails
// everywhere before any communication.
absl::StatusOr<std::vector<CheckedStep>> CheckPlan(const DistSpec& src, const DistSpec& dst,
                                                   const Plan& plan,
                                                   const std::vector<int64_t>& coord) {
  const DeviceMesh& mesh = src.mesh();
  DistState state = src.state();
  std::vector<CheckedStep> checked;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i].step;
    if (absl::Status s = CheckStep(state, step, mesh, src.tensor_ndim()); !s.ok()) {
      return StepError(static_cast<int>(i), step, s);
    }
    if (!RunsOnData(step, mesh.GroupSize(step.group))) {
      return StepError(static_cast<int>(i), step,
                       absl::UnimplementedError("R->P(prod) has no exact local split (spec §11); "
                                                "plan to another reduce op"));
    }
    checked.push_back({state, LogicalShape(state, step, mesh, src.global_shape(), coord)});
    state = ApplyStep(state, step);
  }
  if (!SameLayout(state, dst.state(), mesh)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the plan ends in %s, not in the destination %s", state.ToString(),
                        dst.state().ToString()));
  }
  return checked;
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
    return absl::InvalidArgumentError(
        absl::StrFormat("redistribute: rank %d holds %s, its source shard is %s[%s]@%s",
                        comm.rank(), t.DebugString(), DTypeName(src.dtype()),
                        absl::StrJoin(want, ","), MemorySpaceName(comm.memory_space())));
  }
  RESHARD_ASSIGN_OR_RETURN(const std::vector<CheckedStep> checked,
                           CheckPlan(src, dst, plan, coord));

  if (stats != nullptr) stats->steps.clear();
  LocalTensor cur = std::move(t);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i].step;
    StepStats step_stats;
    step_stats.step = step;
    step_stats.logical_shape = checked[i].logical;
    StepContext context{checked[i].state,
                        step,
                        checked[i].logical,
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
    return absl::InternalError(
        absl::StrFormat("redistribute: ended with %s, the destination shard is [%s]",
                        cur.DebugString(), absl::StrJoin(final_shape, ",")));
  }
  t = std::move(cur);
  return absl::OkStatus();
}

}  // namespace reshard
