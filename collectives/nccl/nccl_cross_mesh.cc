#include "collectives/nccl/nccl_cross_mesh.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/cross_mesh_communicators.h"

namespace reshard {

absl::StatusOr<NcclAcross> ConnectNcclAcross(const CrossMeshPlan& plan, int64_t global_rank,
                                             Store& store, cudaStream_t stream,
                                             const NcclOptions& options) {
  RESHARD_ASSIGN_OR_RETURN(std::vector<CrossMeshMembership> members,
                           CrossMeshMemberships(plan, global_rank));
  NcclAcross out;
  for (const CrossMeshMembership& m : members) {
    NcclOptions o = options;
    o.prefix = absl::StrCat(options.prefix, "/", CrossMeshRoleName(m.role));
    absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
        NcclCommunicator::Connect(m.mesh, m.rank, store, stream, o);
    if (!comm.ok()) {
      return absl::Status(comm.status().code(),
                          absl::StrCat("rank ", global_rank, ": the ", CrossMeshRoleName(m.role),
                                       " communicator: ", comm.status().message()));
    }
    switch (m.role) {
      case CrossMeshRole::kUnion:
        out.union_comm = *std::move(comm);
        break;
      case CrossMeshRole::kSource:
        out.src = *std::move(comm);
        break;
      case CrossMeshRole::kDestination:
        out.dst = *std::move(comm);
        break;
    }
  }
  return out;
}

}  // namespace reshard
