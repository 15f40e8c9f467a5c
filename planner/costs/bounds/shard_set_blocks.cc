#include "planner/costs/bounds/shard_set_blocks.h"

#include <algorithm>
#include <limits>

#include "planner/costs/bounds/abstract_distances.h"
#include "planner/layout/chunk.h"

namespace reshard {

// A dynamic program over the tensor dims: dim d takes a subset of the set's
// mesh dims, its chunk the padded ceil(L / ways) whatever their order
// (block_bytes.cc). Rounding is monotone, so the least product of the
// least prefix is the least product.
ShardSetBlocks::ShardSetBlocks(const CostProblem& p)
    : mesh_ndim_(p.mesh.ndim()), shape_(p.global_shape) {
  const unsigned sets = 1u << mesh_ndim_;
  for (int m = 0; m < mesh_ndim_; ++m) size_[m] = p.mesh.size(m);
  ways_[0] = 1;
  for (unsigned set = 1; set < sets; ++set) {
    ways_[set] = ways_[set & (set - 1)] * size_[__builtin_ctz(set)];
  }
  for (unsigned set = 0; set < sets; ++set) {
    min_bytes_[set] =
        set == 0 ? static_cast<double>(p.itemsize) : std::numeric_limits<double>::infinity();
  }
  chunks_.resize(shape_.size());
  for (size_t d = 0; d < shape_.size(); ++d) {
    for (unsigned set = 0; set < sets; ++set)
      chunks_[d][set] = PaddedChunkSize(shape_[d], ways_[set]);
  }
  double next[kSets];
  for (const std::array<int64_t, kSets>& chunk : chunks_) {
    for (unsigned set = 0; set < sets; ++set) {
      next[set] = std::numeric_limits<double>::infinity();
      ForEachSubset(set, [&](unsigned sub) {
        next[set] = std::min(next[set], min_bytes_[set ^ sub] * static_cast<double>(chunk[sub]));
      });
    }
    std::copy(next, next + sets, min_bytes_);
  }
}

int64_t ShardSetBlocks::Elements(const int64_t* block) const {
  int64_t elements = 1;
  for (size_t d = 0; d < shape_.size(); ++d) elements *= block[d];
  return elements;
}

void ShardSetBlocks::BlockOf(const DistState& state, unsigned skipped, int64_t* block) const {
  const int ndim = static_cast<int>(shape_.size());
  int64_t ways[kMaxTensorDims];
  std::fill(ways, ways + ndim, 1);
  for (int m = 0; m < mesh_ndim_; ++m) {
    const Placement p = state.placement(m);
    if (p.is_shard() && p.dim() < ndim && !((skipped >> m) & 1u)) ways[p.dim()] *= size_[m];
  }
  for (int d = 0; d < ndim; ++d) block[d] = PaddedChunkSize(shape_[d], ways[d]);
}

void ShardSetBlocks::MostHeldOf(const int64_t* want, int64_t* most) const {
  const unsigned sets = 1u << mesh_ndim_;
  int64_t next[kSets];
  for (unsigned set = 0; set < sets; ++set) most[set] = set == 0 ? 1 : -1;
  for (size_t d = 0; d < shape_.size(); ++d) {
    for (unsigned set = 0; set < sets; ++set) {
      next[set] = -1;
      ForEachSubset(set, [&](unsigned sub) {
        if (most[set ^ sub] < 0) return;
        next[set] = std::max(next[set], most[set ^ sub] * std::min(chunks_[d][sub], want[d]));
      });
    }
    std::copy(next, next + sets, most);
  }
}

void ShardSetBlocks::GoalReceipts(const DistState& goal, int64_t (*by_set)[kSets]) const {
  const unsigned sets = 1u << mesh_ndim_;
  int64_t want[kMaxTensorDims];
  BlockOf(goal, 0, want);
  const int64_t wanted = Elements(want);
  int64_t most[kSets];
  MostHeldOf(want, most);
  const unsigned goal_set = goal.ShardSet();
  for (unsigned g = 1; g < sets; ++g) {
    int64_t logical[kMaxTensorDims];
    BlockOf(goal, g, logical);
    const int64_t block = Elements(logical);
    const int64_t wants = ways_[g & ~goal_set];
    for (unsigned set = 0; set < sets; ++set) {
      const int64_t held = ways_[g & ~(set | goal_set)];
      by_set[set][g] = std::max(wanted - most[set], AverageShare(block, wants, held, ways_[g]));
    }
  }
}

int64_t ShardSetBlocks::AverageReceipt(const DistState& state, unsigned shard_set,
                                       unsigned goal_shard_set, unsigned group) const {
  const int64_t held = ways_[group & ~(shard_set | goal_shard_set)];
  const int64_t wants = ways_[group & ~goal_shard_set];
  if (wants <= held) return 0;
  int64_t logical[kMaxTensorDims];
  BlockOf(state, group, logical);
  return AverageShare(Elements(logical), wants, held, ways_[group]);
}

int64_t ShardSetBlocks::AverageShare(int64_t block, int64_t wants, int64_t held, int64_t ways) {
  if (wants <= held) return 0;
  // At most `block`, since wants <= ways; the product may not fit 64 bits.
  const __int128 copies = static_cast<__int128>(block) * (wants - held);
  return static_cast<int64_t>(copies / ways);
}

void ShardSetBlocks::MovedShardReceipts(const DistState& goal, int m, int64_t* by_group) const {
  std::fill(by_group, by_group + (1 << mesh_ndim_), 0);
  if (!goal.placement(m).is_shard()) return;
  const int d = goal.placement(m).dim();
  int64_t want[kMaxTensorDims];
  BlockOf(goal, 0, want);
  int64_t rest = 1;
  for (size_t e = 0; e < shape_.size(); ++e) {
    if (static_cast<int>(e) != d) rest *= want[e];
  }
  const int64_t k = size_[m];
  for (unsigned g = 1; g < (1u << mesh_ndim_); ++g) {
    if (!((g >> m) & 1u)) continue;
    bool hidden = false;
    int64_t fewest = 0;  // the fewest ranks of the group's other mesh dims; 0: none
    for (int other = 0; other < mesh_ndim_; ++other) {
      if (!((g >> other) & 1u) || other == m) continue;
      const Placement p = goal.placement(other);
      hidden = hidden || (p.is_shard() && p.dim() == d) || size_[other] < 2;
      fewest = fewest == 0 ? size_[other] : std::min(fewest, size_[other]);
    }
    if (hidden) continue;
    int64_t logical[kMaxTensorDims];
    BlockOf(goal, g, logical);
    const int64_t length = logical[d];
    const int64_t kept =
        fewest == 0 ? PaddedChunkSize(length, k)
                    : std::max(PaddedChunkSize(length, k), PaddedChunkSize(length, fewest));
    // At most length x rest, within rank 0's logical block: no overflow.
    by_group[g] = static_cast<int64_t>(static_cast<__int128>(length - kept) * rest / k);
  }
}

}  // namespace reshard
