#include "collectives/cross_mesh_communicators.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {

absl::string_view CrossMeshRoleName(CrossMeshRole role) {
  switch (role) {
    case CrossMeshRole::kUnion:
      return "union";
    case CrossMeshRole::kSource:
      return "src";
    case CrossMeshRole::kDestination:
      return "dst";
  }
  return "?";
}

absl::StatusOr<std::vector<CrossMeshMembership>> CrossMeshMemberships(const CrossMeshPlan& plan,
                                                                      int64_t global_rank) {
  const int64_t index = plan.ParticipantIndex(global_rank);
  if (index < 0) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", global_rank,
                                                   " takes no part in the move (its ranks are ",
                                                   absl::StrJoin(plan.participants, ","), ")"));
  }
  absl::StatusOr<DeviceMesh> line =
      DeviceMesh::Create({static_cast<int64_t>(plan.participants.size())});
  if (!line.ok()) return line.status();
  std::vector<CrossMeshMembership> out = {{CrossMeshRole::kUnion, *std::move(line), index}};
  if (const int64_t s = plan.SrcIndex(global_rank); s >= 0) {
    out.push_back({CrossMeshRole::kSource, plan.crossing_src.mesh(), s});
  }
  if (const int64_t d = plan.DstIndex(global_rank); d >= 0) {
    out.push_back({CrossMeshRole::kDestination, plan.crossing_dst.mesh(), d});
  }
  return out;
}

}  // namespace reshard
