#include "collectives/cross_mesh_executor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

// The participant's block of `spec` (mesh rank `index`), or an empty box.
Box BlockAt(const DistSpec& spec, int64_t index) {
  if (index < 0) return Box(spec.global_shape().size());
  return BlockOf(spec, spec.mesh().Coordinate(index));
}

// This participant's index in plan.participants when the communicators fit
// it (cross_mesh_executor.h), else InvalidArgument naming the rank.
absl::StatusOr<int64_t> CheckAcrossComms(const CrossMeshPlan& plan, int64_t global_rank,
                                         Communicator* src_comm, Communicator* dst_comm,
                                         Communicator& union_comm) {
  const bool rounds_fit = plan.rounds >= 1 && plan.route_rounds.size() == plan.routes.size() &&
                          std::all_of(plan.route_rounds.begin(), plan.route_rounds.end(),
                                      [&](int64_t r) { return r >= 0 && r < plan.rounds; });
  if (!rounds_fit) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", global_rank,
                     ": the plan's route_rounds do not fit its routes and rounds (plan it "
                     "with PlanCrossMesh)"));
  }
  const int64_t me = plan.ParticipantIndex(global_rank);
  const bool is_src = plan.SrcIndex(global_rank) >= 0;
  const bool is_dst = plan.DstIndex(global_rank) >= 0;
  if (me < 0 || union_comm.rank() != me ||
      union_comm.mesh().num_ranks() != static_cast<int64_t>(plan.participants.size()) ||
      is_src != (src_comm != nullptr) || is_dst != (dst_comm != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", global_rank,
        ": the communicators do not fit the plan (a source mesh one for "
        "source ranks only, a destination one for destination ranks only, a union one)"));
  }
  return me;
}

}  // namespace

absl::Status RunAroundCrossing(LocalTensor& t, const CrossMeshRequest& request,
                               const CrossMeshPlan& plan, int64_t global_rank,
                               Communicator* src_comm, Communicator* dst_comm,
                               Communicator& union_comm, const Crossing& cross,
                               CrossingStats* stats) {
  RESHARD_ASSIGN_OR_RETURN(const int64_t me,
                           CheckAcrossComms(plan, global_rank, src_comm, dst_comm, union_comm));
  CrossingStats counted;
  ExecutionStats steps;
  if (src_comm != nullptr) {
    RESHARD_RETURN_IF_ERROR(
        Redistribute(t, request.src, plan.crossing_src, plan.before, *src_comm, &steps));
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor crossed, cross(t, me, &counted));
  t = std::move(crossed);
  if (dst_comm != nullptr) {
    ExecutionStats after;
    RESHARD_RETURN_IF_ERROR(
        Redistribute(t, plan.crossing_dst, request.dst, plan.after, *dst_comm, &after));
    for (StepStats& s : after.steps) steps.steps.push_back(std::move(s));
  }
  counted.steps_bytes_sent = steps.bytes_sent();
  if (stats != nullptr) *stats = counted;
  return absl::OkStatus();
}

absl::Status RedistributeAcross(LocalTensor& t, const CrossMeshRequest& request,
                                const CrossMeshPlan& plan, int64_t global_rank,
                                Communicator* src_comm, Communicator* dst_comm,
                                Communicator& union_comm, CrossingStats* stats) {
  const Box held = BlockAt(plan.crossing_src, plan.SrcIndex(global_rank));
  const Box wanted = BlockAt(plan.crossing_dst, plan.DstIndex(global_rank));
  auto cross = [&](const LocalTensor& in, int64_t me, CrossingStats* counted) {
    return ExchangeSlices(in, held, wanted, plan.routes, plan.route_rounds, plan.rounds, me,
                          plan.crossing_src.dtype(), union_comm, MeshDimSet::Single(0), counted);
  };
  return RunAroundCrossing(t, request, plan, global_rank, src_comm, dst_comm, union_comm, cross,
                           stats);
}

}  // namespace reshard
