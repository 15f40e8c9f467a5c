#include "collectives/naive_cross_mesh_executor.h"

#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "collectives/cross_mesh_executor.h"

namespace reshard {

absl::Status RedistributeAcrossNaive(LocalTensor& t, const CrossMeshRequest& request,
                                     const NaiveCrossMeshPlan& plan, int64_t global_rank,
                                     Communicator* src_comm, Communicator* dst_comm,
                                     Communicator& union_comm, CrossingStats* stats) {
  const DType dtype = plan.plain.crossing_src.dtype();
  auto hops = [&](const LocalTensor& in, int64_t me,
                  CrossingStats* counted) -> absl::StatusOr<LocalTensor> {
    LocalTensor current;  // the last hop's result; the first hop reads `in`
    for (int hop = 0; hop < kNaiveHops; ++hop) {
      std::vector<Box> held, wanted;
      NaiveHopBoxes(plan, hop, &held, &wanted);
      RESHARD_ASSIGN_OR_RETURN(LocalTensor next,
                               ExchangeSlices(hop == 0 ? in : current, held[me], wanted[me],
                                              plan.hops[hop], me, dtype, union_comm, counted));
      current = std::move(next);
    }
    return current;
  };
  return RunAroundCrossing(t, request, plan.plain, global_rank, src_comm, dst_comm, union_comm,
                           hops, stats);
}

}  // namespace reshard
