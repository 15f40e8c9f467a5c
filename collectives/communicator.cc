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

namespace {

// Byte offsets of consecutive parts of `counts` elements; InvalidArgument for
// a negative count.
absl::StatusOr<std::vector<int64_t>> Offsets(absl::Span<const int64_t> counts, int item,
                                             absl::string_view which) {
  std::vector<int64_t> offsets{0};
  for (size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s[%d] is negative (%d)", which, j, counts[j]));
    }
    offsets.push_back(offsets.back() + counts[j] * item);
  }
  return offsets;
}

}  // namespace

absl::StatusOr<AllToAllVOffsets> ValidateAllToAllV(const DeviceMesh& mesh, int64_t rank,
                                                   MeshDimSet group,
                                                   absl::Span<const int64_t> send_counts,
                                                   absl::Span<const int64_t> recv_counts,
                                                   DType dtype) {
  constexpr absl::string_view kName = "all_to_all_v";
  if (absl::Status s = ValidateCollective(mesh, kName, group, 0, dtype, false); !s.ok()) {
    return s;
  }
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(kName, " on ", DescribeGroup(group), ": ", why));
  };
  const int64_t n = mesh.GroupSize(group);
  if (static_cast<int64_t>(send_counts.size()) != n ||
      static_cast<int64_t>(recv_counts.size()) != n) {
    return error(absl::StrFormat("%d send and %d recv counts for a group of %d", send_counts.size(),
                                 recv_counts.size(), n));
  }
  const int64_t me = mesh.IndexInGroup(group, rank);
  if (send_counts[me] != recv_counts[me]) {
    return error(absl::StrFormat("member %d sends itself %d elements but receives %d", me,
                                 send_counts[me], recv_counts[me]));
  }
  absl::StatusOr<std::vector<int64_t>> send = Offsets(send_counts, ItemSize(dtype), "send_counts");
  if (!send.ok()) return error(send.status().message());
  absl::StatusOr<std::vector<int64_t>> recv = Offsets(recv_counts, ItemSize(dtype), "recv_counts");
  if (!recv.ok()) return error(recv.status().message());
  return AllToAllVOffsets{*std::move(send), *std::move(recv)};
}

}  // namespace reshard
