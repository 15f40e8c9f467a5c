#include "planner/layout/dist_state.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reshard {

DistState DistState::WithDefaultOrder(absl::Span<const Placement> placements) {
  DistState s(static_cast<int>(placements.size()));
  int count[kMaxTensorDims] = {};
  for (int m = 0; m < s.ndim(); ++m) {
    Placement p = placements[m];
    s.set_cell(m, Encode(p, p.is_shard() ? count[p.dim()]++ : 0));
  }
  return s;
}

absl::StatusOr<DistState> DistState::Create(absl::Span<const Placement> placements,
                                            const ShardOrder& order) {
  DistState s(static_cast<int>(placements.size()));
  std::vector<int> position(placements.size(), -1);
  for (const ShardOrderEntry& e : order) {
    for (size_t i = 0; i < e.mesh_dims.size(); ++i) {
      int m = e.mesh_dims[i];
      if (m < 0 || m >= s.ndim() || !placements[m].is_shard() ||
          placements[m].dim() != e.tensor_dim || position[m] != -1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "shard order entry for tensor dim %d lists mesh dim %d, which does not hold S(%d) "
            "exactly once",
            e.tensor_dim, m, e.tensor_dim));
      }
      position[m] = static_cast<int>(i);
    }
  }
  for (int m = 0; m < s.ndim(); ++m) {
    if (placements[m].is_shard() && position[m] < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shard order misses mesh dim %d (%s)", m, placements[m].ToString()));
    }
    s.set_cell(m, Encode(placements[m], std::max(position[m], 0)));
  }
  return s;
}

std::vector<Placement> DistState::placements() const {
  std::vector<Placement> out(ndim_);
  for (int m = 0; m < ndim_; ++m) out[m] = placement(m);
  return out;
}

// From the cells (kind and tensor dim in the low 5 bits, the position above):
// plan reports call this for every step.
MeshDimList DistState::OrderOf(int tensor_dim) const {
  const unsigned shard = Encode(Placement::Shard(tensor_dim), 0);
  int slots[kMaxMeshDims];
  int n = 0;
  for (int m = 0; m < ndim_; ++m) {
    const unsigned c = cell(m);
    if ((c & 0x1fu) == shard) slots[c >> 5] = m, ++n;
  }
  return MeshDimList(slots, slots + n);
}

ShardOrder DistState::shard_order() const {
  ShardOrder order;
  for (int d = 0; d < kMaxTensorDims; ++d) {
    MeshDimList dims = OrderOf(d);
    if (!dims.empty()) order.push_back({d, std::vector<int>(dims.begin(), dims.end())});
  }
  return order;
}

// Ascending orders: the i-th Shard of a tensor dim, by mesh dim, is at
// position i (positions are 0..n-1, one each).
bool DistState::HasDefaultOrder() const {
  int seen[kMaxTensorDims] = {};
  for (int m = 0; m < ndim_; ++m) {
    const unsigned c = cell(m);
    if ((c & 3u) != static_cast<unsigned>(Placement::Kind::kShard)) continue;
    if (static_cast<int>(c >> 5) != seen[(c >> 2) & 7u]++) return false;
  }
  return true;
}

int64_t DistState::NumShards(const DeviceMesh& mesh) const {
  int64_t n = 1;
  for (int m = 0; m < ndim_; ++m) {
    if (placement(m).is_shard()) n *= mesh.size(m);
  }
  return n;
}

unsigned DistState::PartialOps() const {
  unsigned mask = 0;
  for (int m = 0; m < ndim_; ++m) {
    Placement p = placement(m);
    if (p.is_partial()) mask |= 1u << static_cast<int>(p.op());
  }
  return mask;
}

namespace {

constexpr uint64_t kEveryByte = 0x0101010101010101ull;

// 0xff in byte m for each bit m of `mesh_dims`: byte m first holds bit m
// alone, which the shifts then copy down to the byte's bit 0 (never into
// another byte's bit 0).
uint64_t CellMask(unsigned mesh_dims) {
  uint64_t x = (uint64_t{mesh_dims} * kEveryByte) & 0x8040201008040201ull;
  x |= x >> 4;
  x |= x >> 2;
  x |= x >> 1;
  return (x & kEveryByte) * 0xff;
}

}  // namespace

DistState DistState::WithShardLeftMidOrder(int mesh_dim) const {
  DistState s = *this;
  const unsigned old = cell(mesh_dim);
  for (int m = 0; m < ndim_; ++m) {
    const unsigned c = cell(m);
    if (m != mesh_dim && (c & 0x1f) == (old & 0x1f) && (c >> 5) > (old >> 5)) {
      s.set_cell(m, c - (1u << 5));
    }
  }
  return s;
}

DistState DistState::WithGroupReplaced(MeshDimSet group, Placement rest,
                                       absl::Span<const std::pair<int, int>> entries) const {
  // Every cell of the group set to `rest` at once: the search applies every
  // group step it generates.
  DistState s = *this;
  const uint64_t mask = CellMask(group.bits());
  s.bits_ = (bits_ & ~mask) | ((Encode(rest, 0) * kEveryByte) & mask);
  for (const auto& [m, d] : entries) {
    const Placement p = Placement::Shard(d);
    s.set_cell(m, Encode(p, CountMatching(s.bits_, Encode(p, 0))));
  }
  return s;
}

// Appended in place (positions are single digits, placements short
// strings): every plan's trace prints each of its states.
std::string DistState::ToString() const {
  std::string out;
  out.reserve(8 * ndim_);
  int count[kMaxTensorDims] = {};
  for (int m = 0; m < ndim_; ++m) {
    Placement p = placement(m);
    if (p.is_shard()) ++count[p.dim()];
  }
  for (int m = 0; m < ndim_; ++m) {
    Placement p = placement(m);
    out += p.ToString();
    if (p.is_shard() && count[p.dim()] > 1) {
      static_assert(kMaxMeshDims <= 10, "an order position is one digit");
      out += '[';
      out += static_cast<char>('0' + OrderPosition(m));
      out += ']';
    }
  }
  return out;
}

}  // namespace reshard
