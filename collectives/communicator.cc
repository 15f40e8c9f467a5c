#include "collectives/communicator.h"

#include "absl/strings/str_format.h"

namespace reshard {

absl::Status ValidateCollective(const DeviceMesh& mesh, absl::string_view collective,
                                int mesh_dim, int64_t count, DType dtype, bool reduces) {
  if (mesh_dim < 0 || mesh_dim >= mesh.ndim()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s on mesh dim %d: the mesh %s has %d dims",
                                                      collective, mesh_dim, mesh.ToString(),
                                                      mesh.ndim()));
  }
  if (count < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s on mesh dim %d: negative count %d", collective, mesh_dim, count));
  }
  if (reduces && dtype == DType::kBool) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s on mesh dim %d: reductions on bool are not supported", collective, mesh_dim));
  }
  return absl::OkStatus();
}

}  // namespace reshard
