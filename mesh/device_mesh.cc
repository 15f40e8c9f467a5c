#include "mesh/device_mesh.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace reshard {

absl::StatusOr<DeviceMesh> DeviceMesh::Create(std::vector<int64_t> sizes) {
  if (sizes.empty()) {
    return absl::InvalidArgumentError("mesh: needs at least one dim (e.g. [2, 4])");
  }
  if (static_cast<int>(sizes.size()) > kMaxMeshDims) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mesh: %d dims, the supported maximum is %d", sizes.size(), kMaxMeshDims));
  }
  int64_t ranks = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("mesh: dim %d has size %d; sizes must be >= 1", i, sizes[i]));
    }
    if (sizes[i] > kMaxMeshRanks || ranks * sizes[i] > kMaxMeshRanks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "mesh: more than %d ranks in all (the supported maximum)", kMaxMeshRanks));
    }
    ranks *= sizes[i];
  }
  return DeviceMesh(std::move(sizes));
}

int64_t DeviceMesh::num_ranks() const {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

std::vector<int64_t> DeviceMesh::Coordinate(int64_t rank) const {
  std::vector<int64_t> coord(sizes_.size());
  for (int d = ndim() - 1; d >= 0; --d) {
    coord[d] = rank % sizes_[d];
    rank /= sizes_[d];
  }
  return coord;
}

int64_t DeviceMesh::Rank(absl::Span<const int64_t> coordinate) const {
  int64_t rank = 0;
  for (int d = 0; d < ndim(); ++d) rank = rank * sizes_[d] + coordinate[d];
  return rank;
}

absl::Status DeviceMesh::ValidateCoordinate(absl::Span<const int64_t> coordinate) const {
  if (static_cast<int>(coordinate.size()) != ndim()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("coordinate: %d entries for a %d-D mesh", coordinate.size(), ndim()));
  }
  for (int d = 0; d < ndim(); ++d) {
    if (coordinate[d] < 0 || coordinate[d] >= sizes_[d]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("coordinate: entry %d is %d, outside mesh dim %d of size %d", d,
                          coordinate[d], d, sizes_[d]));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> DeviceMesh::GroupAlong(int dim, int64_t rank) const {
  std::vector<int64_t> coord = Coordinate(rank);
  std::vector<int64_t> group(sizes_[dim]);
  for (int64_t i = 0; i < sizes_[dim]; ++i) {
    coord[dim] = i;
    group[i] = Rank(coord);
  }
  return group;
}

// By the set's bits, ascending as ToVector's, without building its vector:
// exchange pricing asks this for every block (spec §6.4).
int64_t DeviceMesh::GroupSize(MeshDimSet dims) const {
  int64_t n = 1;
  for (unsigned bits = dims.bits(); bits != 0; bits &= bits - 1) n *= sizes_[__builtin_ctz(bits)];
  return n;
}

int64_t DeviceMesh::IndexInGroup(MeshDimSet dims, int64_t rank) const {
  const std::vector<int64_t> coord = Coordinate(rank);
  int64_t index = 0;
  for (int d : dims.ToVector()) index = index * sizes_[d] + coord[d];
  return index;
}

std::vector<int64_t> DeviceMesh::GroupOf(MeshDimSet dims, int64_t rank) const {
  // Member i's coordinates in `dims` are i's digits, row-major (last dim
  // fastest): an odometer over the dims' strides in the mesh, from `rank`
  // with its coordinates in `dims` zeroed (pricing asks this per exchange).
  const std::vector<int> members = dims.ToVector();
  const std::vector<int64_t> coord = Coordinate(rank);
  int64_t stride[kMaxMeshDims], digit[kMaxMeshDims] = {};
  int64_t base = rank;
  for (size_t k = 0; k < members.size(); ++k) {
    stride[k] = 1;
    for (int d = members[k] + 1; d < ndim(); ++d) stride[k] *= sizes_[d];
    base -= coord[members[k]] * stride[k];
  }
  std::vector<int64_t> group(GroupSize(dims));
  int64_t at = base;
  for (int64_t& member : group) {
    member = at;
    size_t k = members.size();
    while (k > 0 && ++digit[k - 1] == sizes_[members[k - 1]]) {
      at -= (sizes_[members[k - 1]] - 1) * stride[k - 1];
      digit[--k] = 0;
    }
    if (k > 0) at += stride[k - 1];
  }
  return group;
}

std::string DeviceMesh::ToString() const { return absl::StrJoin(sizes_, "x"); }

}  // namespace reshard
