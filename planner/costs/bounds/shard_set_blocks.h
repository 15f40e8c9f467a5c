// ShardSetBlocks: rank 0's block (spec §6.2's padded block, block_bytes.h)
// seen through a state's shard set alone, for the group bounds of the native
// bound's abstract graph (cost_model.h, native_leave_set_graph.h, spec §5.2
// item 2): the fewest bytes any state with that shard set holds, and the
// least an exchange from such a state to a goal must move. The geometry is
// the models' common ground; each prices it its own way.
//
//   ShardSetBlocks blocks(problem);         // mesh of up to kMaxDims dims
//   blocks.MinBytes(shard_set)              // <= BlockBytes of any such state
//   blocks.GoalReceipts(goal, receipts)     // per shard set and group, elements
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_SHARD_SET_BLOCKS_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_SHARD_SET_BLOCKS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"

namespace reshard {

class ShardSetBlocks {
 public:
  static constexpr int kMaxDims = 4;
  static constexpr int kSets = 1 << kMaxDims;

  // Requires problem.mesh.ndim() <= kMaxDims.
  explicit ShardSetBlocks(const CostProblem& problem);

  // The fewest bytes of rank 0's block over every way the mesh dims of
  // `shard_set` (bits) may shard the tensor dims: the doubles BlockBytes
  // multiplies, in its order, so at most its bytes, bit for bit.
  double MinBytes(unsigned shard_set) const { return min_bytes_[shard_set]; }

  // For every shard set s and group g in [1, 2^ndim) (bits), in
  // by_set[s][g], a lower bound on the elements the busiest member of rank
  // 0's group receives in an exchange on g from any state with shard set s
  // to `goal` (spec §4.2 edge 13): the larger of
  //   rank 0's lack, the elements of its block in `goal` it cannot hold
  //     (both blocks start at the origin of every tensor dim, so they share
  //     min(want, held) along each; the most over every way to shard), and
  //   the members' average: outside g the state is the goal's, so the
  //     members share one logical block (spec §10), whose every element
  //     ways(g - goal's shard set) members want (each Shard mesh dim of the
  //     goal fixes their index on it, each Replicate leaves it free) and at
  //     most ways(g - both shard sets) members both hold and want (a Shard
  //     in either state fixes the index); the rest they receive.
  void GoalReceipts(const DistState& goal, int64_t (*by_set)[kSets]) const;
  // The members' average alone, for an exchange on `group` from a state with
  // `shard_set` to one with `goal_shard_set`; `state` holds the goal's
  // placements outside the group (the exchange's source or goal).
  int64_t AverageReceipt(const DistState& state, unsigned shard_set, unsigned goal_shard_set,
                         unsigned group) const;

  // The same from any state where mesh dim `m` holds a Shard that must
  // leave and `goal` puts m, alone of the group, on tensor dim d; 0 for
  // other groups. The members at index j on m (0 elsewhere) want the j-th
  // of k chunks of the group's logical length L along d, and rank 0's goal
  // block along the other dims (`rest` elements). Where the source puts m
  // on another tensor dim, member j holds along that dim the j-th of
  // disjoint chunks and along d at most its j-th chunk: together they keep
  // at most ceil(L / k) x rest. Where it puts m on d, it cannot sit where
  // the goal does (it must leave), so another mesh dim of the group lies
  // below it, and they all hold within that one's first chunk: at most
  // ceil(L / n) x rest, n the fewest ranks of the group's other mesh dims
  // (none: m alone cannot sit higher; n = 1: 0, a mesh dim of one rank could
  // hide the move). Of the L x rest they want, the busiest of the k
  // receives at least its share.
  void MovedShardReceipts(const DistState& goal, int m, int64_t* by_group) const;

 private:
  // Rank 0's block in `state`, per tensor dim, split by every Shard mesh dim
  // outside `skipped` (bits).
  void BlockOf(const DistState& state, unsigned skipped, int64_t* block) const;
  // The product of `block`'s dims.
  int64_t Elements(const int64_t* block) const;
  // most[s]: the most elements of `want` rank 0 may hold at each shard set
  // s (a dynamic program over the tensor dims, as the constructor's).
  void MostHeldOf(const int64_t* want, int64_t* most) const;
  // AverageReceipt's share: of a logical block of `block` elements, which
  // `wants` of the group's `ways` members want and at most `held` of them
  // both hold and want, the average member receives.
  static int64_t AverageShare(int64_t block, int64_t wants, int64_t held, int64_t ways);

  int mesh_ndim_;
  std::vector<int64_t> shape_;
  int64_t size_[kMaxDims] = {};
  int64_t ways_[kSets] = {};  // ranks of a set's mesh dims
  // chunks_[d][s]: tensor dim d's padded chunk over the mesh dims of set s.
  std::vector<std::array<int64_t, kSets>> chunks_;
  double min_bytes_[kSets] = {};
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_SHARD_SET_BLOCKS_H_
