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
  // Called on every collective: the message is built only for an error.
  auto error = [&](absl::StatusCode code, absl::string_view why) {
    return absl::Status(code, absl::StrCat(collective, " on ", DescribeGroup(group), ": ", why));
  };
  if (group.empty()) {
    return error(absl::StatusCode::kInvalidArgument, "a collective needs at least one mesh dim");
  }
  if ((group.bits() >> mesh.ndim()) != 0) {
    return error(absl::StatusCode::kInvalidArgument,
                 absl::StrFormat("the mesh %s has %d dims", mesh.ToString(), mesh.ndim()));
  }
  if (count < 0) {
    return error(absl::StatusCode::kInvalidArgument, absl::StrCat("negative count ", count));
  }
  if (reduces && dtype == DType::kBool) {
    return error(absl::StatusCode::kUnimplemented, "reductions on bool are not supported");
  }
  return absl::OkStatus();
}

}  // namespace reshard
