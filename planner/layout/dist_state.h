// DistState: placements plus shard order, the vertex of the planner's search
// (spec §2). Two states are equal iff both parts are equal.
//
// The shard order says, for each tensor dim sharded on several mesh dims, in
// which order the splits apply: {0: [1, 0]} splits tensor dim 0 over mesh dim
// 1 first, then each chunk over mesh dim 0. A DistState packs into one 64-bit
// word (a byte per mesh dim: kind, tensor dim or op, and the mesh dim's
// position in its tensor dim's order), so it is cheap to copy, hash and compare.
#ifndef RESHARD_PLANNER_LAYOUT_DIST_STATE_H_
#define RESHARD_PLANNER_LAYOUT_DIST_STATE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/placement.h"

namespace reshard {

inline constexpr int kMaxTensorDims = 8;

// One entry of a shard order: a tensor dim and the mesh dims sharding it, in
// application order.
struct ShardOrderEntry {
  int tensor_dim;
  std::vector<int> mesh_dims;
  friend bool operator==(const ShardOrderEntry& a, const ShardOrderEntry& b) {
    return a.tensor_dim == b.tensor_dim && a.mesh_dims == b.mesh_dims;
  }
};
// Sorted by tensor dim, no empty entries (spec §2).
using ShardOrder = std::vector<ShardOrderEntry>;

// Mesh dims in application order; at most kMaxMeshDims.
using MeshDimList = absl::InlinedVector<int, kMaxMeshDims>;

class DistState {
 public:
  // All Replicate on `mesh_ndim` mesh dims.
  explicit DistState(int mesh_ndim = 1) : ndim_(static_cast<uint8_t>(mesh_ndim)) {}

  // Placements with the default (ascending) shard order. Every Shard dim must
  // be < kMaxTensorDims and placements.size() <= kMaxMeshDims.
  static DistState WithDefaultOrder(absl::Span<const Placement> placements);

  // Placements with an explicit order. InvalidArgument unless the order lists
  // exactly the Shard mesh dims of each tensor dim, once each.
  static absl::StatusOr<DistState> Create(absl::Span<const Placement> placements,
                                          const ShardOrder& order);

  int ndim() const { return ndim_; }
  Placement placement(int mesh_dim) const {
    const unsigned c = cell(mesh_dim);
    const auto kind = static_cast<Placement::Kind>(c & 3u);
    const unsigned arg = (c >> 2) & 7u;
    // Inline: the graph search decodes cells on every edge.
    if (kind == Placement::Kind::kShard) return Placement::Shard(static_cast<int>(arg));
    if (kind == Placement::Kind::kPartial) return Placement::Partial(static_cast<ReduceOp>(arg));
    return Placement::Replicate();
  }
  std::vector<Placement> placements() const;

  // Mesh dims sharding `tensor_dim`, in application order (empty if none).
  MeshDimList OrderOf(int tensor_dim) const;
  // Position of a Shard mesh dim in its tensor dim's order (0 = applied first).
  int OrderPosition(int mesh_dim) const { return cell(mesh_dim) >> 5; }
  ShardOrder shard_order() const;
  // True when every tensor dim's order is ascending in mesh dims.
  bool HasDefaultOrder() const;

  // Product of the sizes of the mesh dims holding a Shard.
  int64_t NumShards(const DeviceMesh& mesh) const;
  // The mask of the Shard mesh dims (bit m: mesh dim m), from every cell at
  // once: cost models and bounds key prices by it on every edge.
  unsigned ShardSet() const {
    constexpr uint64_t kEveryByte = 0x0101010101010101;
    const uint64_t shard = bits_ & ~(bits_ >> 1) & kEveryByte;         // kind bits 01 (kShard)
    return static_cast<unsigned>((shard * 0x0102040810204080) >> 56);  // bit 8m -> bit m
  }
  // The set of reduce ops held by Partial mesh dims, as a bit mask (1 << op).
  unsigned PartialOps() const;

  // `mesh_dim` set to `p`: leaving a Shard removes it from its tensor dim's
  // order (the mesh dims after it move up), entering S(b) appends it last.
  // Legal steps leave only the last mesh dim (stack discipline, spec §4);
  // step.h (ApplyStep) is the one place plans replay orders with this.
  // Inline (below): the graph search applies every edge it generates.
  DistState WithPlacement(int mesh_dim, Placement p) const;
  // A group step's replay in one pass (step.h, ApplyGroupStep): every mesh
  // dim of `group` set to `rest`, then each (mesh dim, tensor dim) of
  // `entries` appended to that tensor dim's order, in sequence. The same as
  // WithPlacement per mesh dim when the group ends every order it leaves,
  // as CheckStep requires of group steps (spec §4.2 replay).
  DistState WithGroupReplaced(MeshDimSet group, Placement rest,
                              absl::Span<const std::pair<int, int>> entries) const;

  // Spec §3 notation: "S(0)[1]S(0)[0]R".
  std::string ToString() const;

  uint64_t bits() const { return bits_; }
  friend bool operator==(const DistState& a, const DistState& b) {
    return a.bits_ == b.bits_ && a.ndim_ == b.ndim_;
  }
  friend bool operator!=(const DistState& a, const DistState& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const DistState& s) {
    return H::combine(std::move(h), s.bits_, s.ndim_);
  }

 private:
  // The bound reads cells directly: it runs on every state the search reaches.
  friend class RemainingCostBound;

  // Cell layout: bits 0-1 kind, bits 2-4 tensor dim or op, bits 5-7 order position.
  unsigned cell(int m) const { return (bits_ >> (8 * m)) & 0xffu; }
  void set_cell(int m, unsigned c) {
    bits_ = (bits_ & ~(uint64_t{0xff} << (8 * m))) | (uint64_t{c} << (8 * m));
  }
  static unsigned Encode(Placement p, int position) {
    unsigned arg = p.is_shard() ? p.dim() : p.is_partial() ? static_cast<unsigned>(p.op()) : 0;
    return static_cast<unsigned>(p.kind()) | (arg << 2) | (static_cast<unsigned>(position) << 5);
  }
  // How many cells of `bits` hold `what` in their low 5 bits (kind and
  // tensor dim: "S(d)"), all eight at once. Unused cells are 0 (R), which no
  // Shard matches.
  static int CountMatching(uint64_t bits, unsigned what) {
    constexpr uint64_t kEveryByte = 0x0101010101010101ull;
    const uint64_t diff = (bits & (0x1f * kEveryByte)) ^ (what * kEveryByte);  // bytes <= 0x1f
    const uint64_t zero = ~(diff + 0x7f * kEveryByte) & (0x80 * kEveryByte);   // bit 7: byte == 0
    return static_cast<int>((((zero >> 7) * kEveryByte) >> 56) & 0xff);
  }
  // WithPlacement's rare case: the Shard on `mesh_dim` is not last in its
  // order (greedy plans on size-1 mesh dims), so the mesh dims after it
  // move up one place.
  DistState WithShardLeftMidOrder(int mesh_dim) const;

  uint64_t bits_ = 0;
  uint8_t ndim_;
};

inline DistState DistState::WithPlacement(int mesh_dim, Placement p) const {
  const unsigned old = cell(mesh_dim);
  const bool mid_order = (old & 3u) == static_cast<unsigned>(Placement::Kind::kShard) &&
                         static_cast<int>(old >> 5) + 1 < CountMatching(bits_, old & 0x1f);
  DistState s = mid_order ? WithShardLeftMidOrder(mesh_dim) : *this;
  // Entering S(b): after the mesh dims already in b's order.
  const int position = p.is_shard() ? CountMatching(bits_, Encode(p, 0)) : 0;
  s.set_cell(mesh_dim, Encode(p, position));
  return s;
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_DIST_STATE_H_
