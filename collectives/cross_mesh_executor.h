// Running a cross-mesh move (planner/cross_mesh/cross_mesh_plan.h, spec
// §14) on one participant: the steps before on the source mesh, the crossing
// (one AllToAllV over the union of both rank sets per round of the plan,
// exact slices), the steps after on the destination mesh. A participant may
// be a source rank, a destination rank or both; one that is only a source
// sends and ends with an empty tensor, one that is only a destination
// starts from nothing. Under a memory limit the rounds (spec §14 "Memory")
// bound what each participant holds at once.
//
//   // Every participant, with the same request and plan:
//   LocalTensor t = ...;  // a source rank: its shard of request.src; else anything
//   absl::Status s = RedistributeAcross(t, request, plan, global_rank,
//                                       src_comm, dst_comm, union_comm, &stats);
//   // a destination rank: t holds its shard of request.dst
//
// src_comm is a communicator on the source mesh (null unless this rank is a
// source rank), dst_comm on the destination mesh (null unless a
// destination rank), union_comm on a 1-D mesh of plan.participants.size()
// ranks, this participant's index in plan.participants. Collective over
// the participants. Errors as Redistribute's (executor.h), plus
// InvalidArgument when the communicators do not fit the plan.
#ifndef RESHARD_COLLECTIVES_CROSS_MESH_EXECUTOR_H_
#define RESHARD_COLLECTIVES_CROSS_MESH_EXECUTOR_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/executor.h"
#include "collectives/slice_exchange.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

// stats (may be null): the crossing's bytes and the steps' (slice_exchange.h).
absl::Status RedistributeAcross(LocalTensor& t, const CrossMeshRequest& request,
                                const CrossMeshPlan& plan, int64_t global_rank,
                                Communicator* src_comm, Communicator* dst_comm,
                                Communicator& union_comm, CrossingStats* stats = nullptr);

// One participant's crossing over the union communicator: `in` holds its
// crossing_src block (empty when it has none), the result its crossing_dst
// block; `me` is its index in plan.participants; adds the bytes it moves to
// *stats.
using Crossing = std::function<absl::StatusOr<LocalTensor>(const LocalTensor& in, int64_t me,
                                                           CrossingStats* stats)>;

// RedistributeAcross's frame around any crossing of plan.participants: the
// communicators checked against the plan (InvalidArgument naming the rank),
// plan.before on the source mesh, `cross`, plan.after on the destination
// mesh, the counters. For other crossings of the same participants
// (naive_cross_mesh_executor.h).
absl::Status RunAroundCrossing(LocalTensor& t, const CrossMeshRequest& request,
                               const CrossMeshPlan& plan, int64_t global_rank,
                               Communicator* src_comm, Communicator* dst_comm,
                               Communicator& union_comm, const Crossing& cross,
                               CrossingStats* stats);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_CROSS_MESH_EXECUTOR_H_
