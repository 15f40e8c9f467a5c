// Which communicators one participant of a cross-mesh move (spec §14) takes
// part in, and its rank in each: what RedistributeAcross
// (cross_mesh_executor.h) needs, for any backend. Every participant joins the
// union's (a 1-D mesh of plan.participants, its rank its index there); a
// source rank the source mesh's, a destination rank the destination mesh's
// (its rank: its index in plan.src_ranks / dst_ranks, the row-major order of
// the mesh's coordinates).
//
//   absl::StatusOr<std::vector<CrossMeshMembership>> m = CrossMeshMemberships(plan, 9);
//   for (const CrossMeshMembership& c : *m) {
//     ... Connect(c.mesh, c.rank, store, prefix + "/" + CrossMeshRoleName(c.role)) ...
//   }
//
// The order is the same for every participant (union, source, destination):
// where joining blocks until the whole group has joined (NCCL's init), every
// participant joining its groups in this order cannot wait on a peer that
// waits on it.
#ifndef RESHARD_COLLECTIVES_CROSS_MESH_COMMUNICATORS_H_
#define RESHARD_COLLECTIVES_CROSS_MESH_COMMUNICATORS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/device_mesh.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

enum class CrossMeshRole { kUnion, kSource, kDestination };

// "union", "src", "dst": distinct suffixes for the communicators' store keys.
absl::string_view CrossMeshRoleName(CrossMeshRole role);

struct CrossMeshMembership {
  CrossMeshRole role = CrossMeshRole::kUnion;
  DeviceMesh mesh;   // the union's 1-D mesh, the source mesh or the destination mesh
  int64_t rank = 0;  // this participant's rank in `mesh`
};

// The communicators `global_rank` joins, in joining order (above): two for a
// rank that only sends or only receives, three for one in both sets.
// InvalidArgument, naming the rank and the participants, when it takes no
// part in the move.
absl::StatusOr<std::vector<CrossMeshMembership>> CrossMeshMemberships(const CrossMeshPlan& plan,
                                                                      int64_t global_rank);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_CROSS_MESH_COMMUNICATORS_H_
