// The NCCL communicators RedistributeAcross (collectives/cross_mesh_executor.h,
// spec §14) needs on one participant of a cross-mesh move: one on the union
// of both rank sets (the crossing's grouped ncclSend/ncclRecv,
// NcclCommunicator::AllToAllV), one on the source mesh for a source rank and
// one on the destination mesh for a destination rank.
//
// STATUS: the one-GPU case (one participant, source and destination rank at
// once) passes tests/gpu/nccl_cross_mesh_test on an H200 (scripts/gpu-test);
// a move among several GPUs has never run. The GPU-free part (who joins
// what, in which order: cross_mesh_communicators.h) is tested in the default
// build (collectives/cross_mesh_executor_test).
//
// Each communicator is an NcclCommunicator::Connect of its own (its own
// unique id, exchanged in `store` under options.prefix + "/union", "/src",
// "/dst"), joined in CrossMeshMemberships' order, the same on every
// participant, because NCCL's init blocks until the whole group has joined.
// (Splitting them from one world communicator with ncclCommSplit would save
// the unique-id exchanges but needs an NcclCommunicator built on an existing
// NCCL communicator, which this backend does not have.)
//
//   // every participant, one GPU and one process (or thread) each:
//   absl::StatusOr<NcclAcross> comms =
//       ConnectNcclAcross(plan, global_rank, *store, stream, NcclOptions());
//   RedistributeAcross(t, request, plan, global_rank, comms->src.get(), comms->dst.get(),
//                      *comms->union_comm, &stats);  // t in device memory
#ifndef RESHARD_COLLECTIVES_NCCL_NCCL_CROSS_MESH_H_
#define RESHARD_COLLECTIVES_NCCL_NCCL_CROSS_MESH_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/store.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

struct NcclAcross {
  std::unique_ptr<NcclCommunicator> union_comm;  // every participant
  std::unique_ptr<NcclCommunicator> src;         // null unless a source rank
  std::unique_ptr<NcclCommunicator> dst;         // null unless a destination rank
};

// Collective over plan.participants, which must all pass the same plan,
// store and options. `stream` is every communicator's. InvalidArgument when
// global_rank takes no part in the move; NcclCommunicator::Connect's errors,
// naming the communicator ("union", "src", "dst").
absl::StatusOr<NcclAcross> ConnectNcclAcross(const CrossMeshPlan& plan, int64_t global_rank,
                                             Store& store, cudaStream_t stream,
                                             const NcclOptions& options);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_NCCL_CROSS_MESH_H_
