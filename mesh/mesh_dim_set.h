// MeshDimSet: a set of mesh dims, the group a step or a collective acts on.
//
// A collective over a set of mesh dims runs on the *flattened* group: the
// ranks that share every coordinate outside the set, ordered row-major over
// the dims of the set (DeviceMesh::GroupOf). {k} alone is the group along
// mesh dim k.
//
//   MeshDimSet dims = MeshDimSet::Of({0, 2});
//   dims.Contains(2);   // true
//   dims.size();        // 2
//   for (int m : dims.ToVector()) ...   // 0, 2 (ascending)
//   dims.ToString();    // "{0,2}"
#ifndef RESHARD_MESH_MESH_DIM_SET_H_
#define RESHARD_MESH_MESH_DIM_SET_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace reshard {

// Bit k is mesh dim k; at most 8 mesh dims (kMaxMeshDims in device_mesh.h).
class MeshDimSet {
 public:
  constexpr MeshDimSet() = default;
  // Mesh dims must be in [0, 8).
  static constexpr MeshDimSet Single(int mesh_dim) {
    return MeshDimSet(static_cast<uint8_t>(1u << mesh_dim));
  }
  static MeshDimSet Of(std::initializer_list<int> mesh_dims) {
    MeshDimSet s;
    for (int m : mesh_dims) s = s.With(m);
    return s;
  }
  static constexpr MeshDimSet FromBits(uint8_t bits) { return MeshDimSet(bits); }

  constexpr bool empty() const { return bits_ == 0; }
  constexpr int size() const { return __builtin_popcount(bits_); }
  constexpr bool Contains(int mesh_dim) const { return (bits_ >> mesh_dim) & 1u; }
  // The lowest mesh dim; only for a non-empty set.
  constexpr int First() const { return __builtin_ctz(bits_); }
  constexpr MeshDimSet With(int mesh_dim) const {
    return MeshDimSet(static_cast<uint8_t>(bits_ | (1u << mesh_dim)));
  }
  constexpr uint8_t bits() const { return bits_; }

  // Ascending.
  std::vector<int> ToVector() const {
    std::vector<int> out;
    for (int m = 0; m < 8; ++m) {
      if (Contains(m)) out.push_back(m);
    }
    return out;
  }
  // "{0,2}".
  std::string ToString() const {
    std::string out = "{";
    for (int m : ToVector()) {
      if (out.size() > 1) out += ",";
      out += std::to_string(m);
    }
    return out + "}";
  }

  friend constexpr bool operator==(MeshDimSet a, MeshDimSet b) { return a.bits_ == b.bits_; }
  friend constexpr bool operator!=(MeshDimSet a, MeshDimSet b) { return a.bits_ != b.bits_; }
  friend constexpr bool operator<(MeshDimSet a, MeshDimSet b) { return a.bits_ < b.bits_; }
  template <typename H>
  friend H AbslHashValue(H h, MeshDimSet s) {
    return H::combine(std::move(h), s.bits_);
  }

 private:
  explicit constexpr MeshDimSet(uint8_t bits) : bits_(bits) {}
  uint8_t bits_ = 0;
};

}  // namespace reshard

#endif  // RESHARD_MESH_MESH_DIM_SET_H_
