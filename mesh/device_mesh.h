// DeviceMesh: an N-dimensional grid of ranks (spec §1).
//
// Ranks are numbered row-major: on a mesh of sizes (2, 3), rank 4 has
// coordinate (1, 1). The group of a rank "along mesh dim k" is the ranks that
// share every coordinate but k, listed by their coordinate k.
//
//   absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 2, 2});
//   mesh->Coordinate(5);      // {1, 0, 1}
//   mesh->GroupAlong(1, 5);   // {5, 7}
//   mesh->GroupOf(MeshDimSet::Of({0, 2}), 5);   // {0, 1, 4, 5}: rank 5 is member 3
#ifndef RESHARD_MESH_DEVICE_MESH_H_
#define RESHARD_MESH_DEVICE_MESH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mesh/mesh_dim_set.h"

namespace reshard {

// Limits. Eight mesh dims is far beyond any real cluster (PyTorch meshes are
// 1-D to 4-D) and lets a DistState pack into one 64-bit word.
inline constexpr int kMaxMeshDims = 8;
inline constexpr int64_t kMaxMeshRanks = int64_t{1} << 24;

class DeviceMesh {
 public:
  // Fails (InvalidArgument) on an empty mesh, more than kMaxMeshDims dims,
  // a size < 1, or more than kMaxMeshRanks ranks in all.
  static absl::StatusOr<DeviceMesh> Create(std::vector<int64_t> sizes);

  // A 1-D mesh of one rank; useful only as a placeholder.
  DeviceMesh() : sizes_{1} {}

  int ndim() const { return static_cast<int>(sizes_.size()); }
  int64_t size(int dim) const { return sizes_[dim]; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t num_ranks() const;

  // Row-major rank <-> coordinate. Arguments must be in range.
  std::vector<int64_t> Coordinate(int64_t rank) const;
  int64_t Rank(absl::Span<const int64_t> coordinate) const;

  // Checks a coordinate against the mesh (InvalidArgument naming the bad entry).
  absl::Status ValidateCoordinate(absl::Span<const int64_t> coordinate) const;

  // The ranks that share every coordinate with `rank` but `dim`, ordered by
  // their coordinate along `dim` (so rank's own index in it is its coordinate).
  std::vector<int64_t> GroupAlong(int dim, int64_t rank) const;

  // The flattened group of `dims` (MeshDimSet, every dim < ndim()) containing
  // `rank`: the ranks that share every coordinate outside `dims`, ordered
  // row-major over the coordinates in `dims`. GroupOf(Single(k)) ==
  // GroupAlong(k). IndexInGroup is rank's position in it.
  std::vector<int64_t> GroupOf(MeshDimSet dims, int64_t rank) const;
  int64_t IndexInGroup(MeshDimSet dims, int64_t rank) const;
  // Product of the sizes of `dims` (1 for the empty set).
  int64_t GroupSize(MeshDimSet dims) const;

  // "2x2x2".
  std::string ToString() const;

  friend bool operator==(const DeviceMesh& a, const DeviceMesh& b) { return a.sizes_ == b.sizes_; }
  friend bool operator!=(const DeviceMesh& a, const DeviceMesh& b) { return !(a == b); }

 private:
  explicit DeviceMesh(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {}
  std::vector<int64_t> sizes_;
};

}  // namespace reshard

#endif  // RESHARD_MESH_DEVICE_MESH_H_
