#include "planner/costs/bounds/remaining_cost_bound.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace reshard {

namespace {

// Keeps the bound consistent under rounding: a communicating step then lowers
// it by less than its price by a margin far above any rounding error.
constexpr double kShrink = 1.0 - 1e-6;

}  // namespace

RemainingCostBound::RemainingCostBound(const DistState& dst, const BoundCostModel& model,
                                       Graph graph)
    : native_(graph == Graph::kNative) {
  for (int m = 0; m < dst.ndim(); ++m) {
    dst_cell_[m] = dst.cell(m);
    dst_partial_ |= dst.placement(m).is_partial() ? 1u << m : 0u;
  }
  dst_bits_ = dst.bits();
  FillLeaves(
      dst, [&model](StepKind kind, int m) { return model.LowerBound(kind, m); }, leaves_);
  if (native_ && model.group_blocks() != nullptr && dst.ndim() <= NativeLeaveSetGraph::kMaxDims) {
    native_graph_.emplace(dst, model);
    useful_ = true;
  } else if (model.has_potential() && !native_ && dst.ndim() <= LeaveSetGraph::kMaxDims) {
    leave_set_graph_.emplace(dst, model);
    useful_ = true;
  } else if (model.has_potential()) {
    FillBytesToGo(dst, model);
    FillLeaves(
        dst, [&model](StepKind kind, int m) { return model.PotentialLowerBound(kind, m); },
        potential_leaves_);
    useful_ = true;
  }
}

// Dijkstra over the 2^ndim shard sets towards dst's, on reversed edges: set
// t reaches s's successor u = s + {m} for free and u = s - {m} for
// GatherBytes(s, m). O(4^ndim) selection: 256 steps for a 4-D mesh.
void RemainingCostBound::FillBytesToGo(const DistState& dst, const BoundCostModel& model) {
  const int ndim = dst.ndim();
  const unsigned sets = 1u << ndim;
  unsigned dst_set = 0;
  for (int m = 0; m < ndim; ++m) dst_set |= dst.placement(m).is_shard() ? 1u << m : 0u;
  bytes_to_go_.assign(sets, std::numeric_limits<double>::infinity());
  std::vector<bool> done(sets, false);
  bytes_to_go_[dst_set] = 0;
  for (unsigned round = 0; round < sets; ++round) {
    unsigned u = sets;
    for (unsigned t = 0; t < sets; ++t) {
      if (!done[t] && (u == sets || bytes_to_go_[t] < bytes_to_go_[u])) u = t;
    }
    done[u] = true;
    // Predecessors s of u: s = u - {m} (m joins, free) or s = u + {m} (m leaves).
    for (int m = 0; m < ndim; ++m) {
      const unsigned bit = 1u << m;
      const unsigned s = u ^ bit;
      const double via = (u & bit) ? bytes_to_go_[u] : bytes_to_go_[u] + model.GatherBytes(s, m);
      bytes_to_go_[s] = std::min(bytes_to_go_[s], via);
    }
  }
}

template <typename LowerBoundFn>
void RemainingCostBound::FillLeaves(const DistState& dst, LowerBoundFn lower_bound,
                                    double (*table)[kCases]) {
  for (int m = 0; m < dst.ndim(); ++m) {
    const double all_to_all = lower_bound(StepKind::kAllToAll, m);
    const double all_gather = lower_bound(StepKind::kAllGather, m);
    const double all_reduce = lower_bound(StepKind::kAllReduce, m);
    const double reduce_scatter = lower_bound(StepKind::kReduceScatter, m);
    double* leaves = table[m];
    if (dst.placement(m).is_shard()) {
      leaves[kShardLeaves] = std::min(all_to_all, all_gather);
      if (native_) {
        leaves[kShardLeaves] = std::min(leaves[kShardLeaves], lower_bound(StepKind::kPermute, m));
      }
      leaves[kPartialLeaves] = std::min(reduce_scatter, all_reduce);
      // Compat: it must come back to that tensor dim, by a second all_to_all
      // or, gathered, by a chunk (spec §5.1 item 1).
      leaves[kShardReturns] =
          native_ ? leaves[kShardLeaves] : std::min(all_to_all + all_to_all, all_gather);
    } else {
      leaves[kShardLeaves] = all_gather;
      leaves[kPartialLeaves] = std::min(all_reduce, reduce_scatter + all_gather);
      leaves[kShardReturns] = all_gather;  // never the case: dst holds no Shard
    }
    if (table == leaves_) {
      // The exchange bound (header): a Partial leaves by a reduce_scatter or
      // an all_reduce, whatever comes after (an exchange may finish it).
      reduced_[m] = std::min(reduce_scatter, all_reduce);
      exchanged_[m] = native_ ? lower_bound(StepKind::kExchange, m) : 0;
    }
    useful_ = useful_ || leaves[kShardLeaves] > 0 || leaves[kPartialLeaves] > 0;
  }
}

namespace {

constexpr uint64_t kEveryByte = 0x0101010101010101;

// Bit 0 of each byte of the result: whether that byte of x is nonzero.
uint64_t NonzeroBytes(uint64_t x) {
  x |= x >> 4;  // bit 0 of a byte ends up the OR of its own 8 bits only
  x |= x >> 2;
  x |= x >> 1;
  return x & kEveryByte;
}

// Bit 0 of byte m of x -> bit m of the result (as DistState::ShardSet).
unsigned ByteFlagsToMask(uint64_t x) {
  return static_cast<unsigned>((x * 0x0102040810204080) >> 56);
}

}  // namespace

// Reads the state's cells (dist_state.h) all at once, one byte each, as
// 64-bit words: the search bounds every state it reaches, and to a branch
// predictor their placements are as good as random. A Shard must leave when
// a Shard of its tensor dim at or below its position differs from dst's
// cell (the header's first differing position); unused cells are 0 (R) in
// both words.
RemainingCostBound::Masks RemainingCostBound::MasksOf(const DistState& state) const {
  static_assert(static_cast<unsigned>(Placement::Kind::kShard) == 1 &&
                    static_cast<unsigned>(Placement::Kind::kPartial) == 2,
                "the kind bits below");
  const uint64_t bits = state.bits();
  const uint64_t differs = NonzeroBytes(bits ^ dst_bits_);
  const uint64_t shard = bits & ~(bits >> 1) & kEveryByte;    // kind bits 01, as ShardSet
  const uint64_t partial = (bits >> 1) & ~bits & kEveryByte;  // kind bits 10
  const uint64_t position = (bits >> 5) & (7 * kEveryByte);
  uint64_t shard_leaves = 0;
  for (uint64_t moved = shard & differs; moved != 0; moved &= moved - 1) {
    const unsigned c = (bits >> __builtin_ctzll(moved)) & 0xffu;
    // The Shards of c's tensor dim (kind and dim bits equal) at or above c.
    const uint64_t same_dim =
        ~NonzeroBytes((bits & (0x1f * kEveryByte)) ^ ((c & 0x1f) * kEveryByte));
    const uint64_t at_or_above = (position + (8 - (c >> 5)) * kEveryByte) >> 3;  // no carries
    shard_leaves |= same_dim & at_or_above & kEveryByte;
  }
  // Compat: kind and tensor dim as dst's, only the position differs.
  const uint64_t returns =
      native_ ? 0 : shard_leaves & ~NonzeroBytes((bits ^ dst_bits_) & (0x1f * kEveryByte));
  return {state.ShardSet(), ByteFlagsToMask(shard_leaves), ByteFlagsToMask(partial & differs),
          ByteFlagsToMask(returns), ByteFlagsToMask(~differs & kEveryByte)};
}

RemainingCostBound::Leaving RemainingCostBound::LeavingOf(const DistState& state) const {
  const Masks masks = MasksOf(state);
  Leaving leaving;
  leaving.ndim = state.ndim();
  leaving.shard_set = masks.shard_set;
  leaving.leave_set = masks.shard_leaves | masks.partial_leaves;
  // Without branches (the cases are as good as random): shard_leaves and
  // partial_leaves are disjoint, shard_returns within shard_leaves.
  static_assert(kShardLeaves == 1 && kPartialLeaves == 2 && kShardReturns == 3, "sums below");
  for (int m = 0; m < leaving.ndim; ++m) {
    leaving.of[m] = static_cast<Case>(((masks.shard_leaves >> m) & 1u) +
                                      2 * ((masks.partial_leaves >> m) & 1u) +
                                      2 * ((masks.shard_returns >> m) & 1u));
  }
  return leaving;
}

double RemainingCostBound::MustLeaveSum(const Leaving& leaving,
                                        const double (*table)[kCases]) const {
  constexpr auto kShard = static_cast<unsigned>(Placement::Kind::kShard);
  // Summed in mesh dim order, so that adding a mesh dim never lowers the sum.
  // Native: one permute may move every Shard bound for a Shard (header).
  double sum = 0;
  double largest_permuted = 0;
  for (int m = 0; m < leaving.ndim; ++m) {
    if (native_ && leaving.of[m] == kShardLeaves && (dst_cell_[m] & 3u) == kShard) {
      largest_permuted = std::max(largest_permuted, table[m][kShardLeaves]);
      continue;
    }
    sum += table[m][leaving.of[m]];
  }
  return sum + largest_permuted;
}

// Native: one exchange may move every Shard once no Partial must leave (header).
double RemainingCostBound::ExchangeBound(const Leaving& leaving) const {
  double partials = 0;
  double largest_exchanged = 0;
  for (int m = 0; m < leaving.ndim; ++m) {
    if (leaving.of[m] == kShardLeaves)
      largest_exchanged = std::max(largest_exchanged, exchanged_[m]);
    if (leaving.of[m] == kPartialLeaves) partials += reduced_[m];
  }
  return partials + largest_exchanged;
}

double RemainingCostBound::operator()(const DistState& state) const {
  if (leave_set_graph_.has_value()) {
    const Masks masks = MasksOf(state);
    const double to_go =
        leave_set_graph_->ToGo(masks.shard_set, masks.shard_leaves | masks.partial_leaves);
    // The graph does not see a Shard's way back to its tensor dim (its
    // kShardReturns); the sum does, at LowerBound's prices, and the larger of
    // two consistent bounds is one. Without such a Shard the sum is at most
    // the graph's distance (spec §5.1), so it is summed only with one.
    if (masks.shard_returns == 0) return to_go * kShrink;
    return std::max(to_go, MustLeaveSum(LeavingOf(state), leaves_)) * kShrink;
  }
  if (native_graph_.has_value()) {
    const Masks masks = MasksOf(state);
    // Where dst holds a Partial, an R must still be partitioned (its masks
    // in native_leave_set_graph.cc).
    const unsigned unpartitioned = dst_partial_ & ~masks.shard_set & ~masks.same;
    return native_graph_->ToGo(masks.shard_set,
                               masks.shard_leaves | masks.partial_leaves | unpartitioned) *
           kShrink;
  }
  // Which mesh dims must leave is the same for every table: found once.
  const Leaving leaving = LeavingOf(state);
  double bound = MustLeaveSum(leaving, leaves_);
  if (!bytes_to_go_.empty()) {
    bound =
        std::max(bound, MustLeaveSum(leaving, potential_leaves_) + bytes_to_go_[leaving.shard_set]);
  }
  // Native: an exchange may do in one step what the bounds above sum (header).
  if (native_) bound = std::min(bound, ExchangeBound(leaving));
  return bound * kShrink;
}

}  // namespace reshard
