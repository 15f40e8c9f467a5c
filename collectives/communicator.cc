#include "collectives/communicator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reshard {

std::string DescribeGroup(MeshDimSet group) {
  if (group.size() == 1) return absl::StrCat("mesh dim ", group.First());
  return absl::StrCat("mesh dims ", group.ToString());
}

absl::Status ValidateCollective(const DeviceMesh& mesh, absl::string_view collective,
                                MeshDimSet group, int64_t count, DType dtype, bool reduces) {
  const std::string on = absl::StrCat(collective, " on ", DescribeGroup(group));
  if (group.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(on, ": a collective needs at least one mesh dim"));
  }
  if ((group.bits() >> mesh.ndim()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the mesh %s has %d dims", on, mesh.ToString(), mesh.ndim()));
  }
  if (count < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: negative count %d", on, count));
  }
  if (reduces && dtype == DType::kBool) {
    return absl::UnimplementedError(
        absl::StrCat(on, ": reductions on bool are not supported"));
  }
  return absl::OkStatus();
}

}  // namespace reshard
