#include "collectives/naive_cross_mesh_executor.h"

#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "collectives/cross_mesh_executor.h"
#include "collectives/executor.h"

namespace reshard {

absl::Status RedistributeAcrossNaive(LocalTensor& t, const CrossMeshRequest& request,
                                     const NaiveCrossMeshPlan& plan, int64_t global_rank,
                                     Communicator* src_comm, Communicator* dst_comm,
                                     Communicator& union_comm, CrossingStats* stats) {
  const CrossMeshPlan& p = plan.plain;
  RESHARD_ASSIGN_OR_RETURN(const int64_t me,
                           CheckAcrossComms(p, global_rank, src_comm, dst_comm, union_comm));
  CrossingStats counted;
  ExecutionStats steps;
  if (src_comm != nullptr) {
    RESHARD_RETURN_IF_ERROR(
        Redistribute(t, request.src, p.crossing_src, p.before, *src_comm, &steps));
  }
  for (int hop = 0; hop < kNaiveHops; ++hop) {
    std::vector<Box> held, wanted;
    NaiveHopBoxes(plan, hop, &held, &wanted);
    RESHARD_ASSIGN_OR_RETURN(LocalTensor next,
                             ExchangeSlices(t, held[me], wanted[me], plan.hops[hop], me,
                                            p.crossing_src.dtype(), union_comm, &counted));
    t = std::move(next);
  }
  if (dst_comm != nullptr) {
    ExecutionStats after;
    RESHARD_RETURN_IF_ERROR(
        Redistribute(t, p.crossing_dst, request.dst, p.after, *dst_comm, &after));
    for (StepStats& s : after.steps) steps.steps.push_back(std::move(s));
  }
  counted.steps_bytes_sent = steps.bytes_sent();
  if (stats != nullptr) *stats = counted;
  return absl::OkStatus();
}

}  // namespace reshard
