// Running the naive baseline of a cross-mesh move
// (planner/cross_mesh/naive_plan.h, spec §14 "Naive baseline") on one
// participant: the plain plan's steps before on the source mesh, its three
// hops (gather on the source root, send to the destination root, scatter),
// each one ExchangeSlices over the union communicator, the steps after on
// the destination mesh. Communicators and errors as RedistributeAcross's
// (cross_mesh_executor.h); stats sums the three hops.
//
//   absl::Status s = RedistributeAcrossNaive(t, request, naive, global_rank,
//                                            src_comm, dst_comm, union_comm, &stats);
#ifndef RESHARD_COLLECTIVES_NAIVE_CROSS_MESH_EXECUTOR_H_
#define RESHARD_COLLECTIVES_NAIVE_CROSS_MESH_EXECUTOR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "collectives/communicator.h"
#include "collectives/slice_exchange.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/cross_mesh/naive_plan.h"

namespace reshard {

absl::Status RedistributeAcrossNaive(LocalTensor& t, const CrossMeshRequest& request,
                                     const NaiveCrossMeshPlan& plan, int64_t global_rank,
                                     Communicator* src_comm, Communicator* dst_comm,
                                     Communicator& union_comm, CrossingStats* stats = nullptr);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NAIVE_CROSS_MESH_EXECUTOR_H_
