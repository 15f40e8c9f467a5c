#include "planner/search/native_transitions.h"

#include <algorithm>
#include <utility>

#include "absl/types/span.h"
#include "planner/search/transitions.h"

namespace reshard {
namespace {

using Orders = ShardOrders;
using Order = ShardOrders::Order;

// 7, 8. The last k >= 2 mesh dims of a's order, gathered, or moved to the
// end of b's order in the same relative order.
void AppendShardGroups(const Orders& orders, int tensor_ndim, std::vector<Step>* out) {
  for (int a = 0; a < tensor_ndim; ++a) {
    const absl::Span<const int> order = orders.of[a].span();
    for (size_t k = 2; k <= order.size(); ++k) {
      const absl::Span<const int> tail = order.subspan(order.size() - k);
      out->push_back(MakeGroupStep(tail, Placement::Shard(a), Placement::Replicate()));
      for (int b = 0; b < tensor_ndim; ++b) {
        if (b != a) out->push_back(MakeGroupStep(tail, Placement::Shard(a), Placement::Shard(b)));
      }
    }
  }
}

// Where a group reduce_scatter onto `b` should leave mesh dim m for the
// goal: mesh dims that shard b in the goal first, in the goal's order (they
// stay at the bottom of b's order), then those that shard another tensor dim
// c, by c and the goal's order of c (a group all_to_all moves them on in
// that order), then the rest, which must leave again (spec §4.2, 10).
// Packed so that ranks compare as the pairs (tier, position) do: both < 16.
int GoalRank(int m, int b, const DistState& goal) {
  const Placement p = goal.placement(m);
  if (!p.is_shard()) return (kMaxTensorDims + 1) * 16 + m;
  // Its position in goal's order of p.dim(), as goal's cell holds it.
  return (p.dim() == b ? 0 : 1 + p.dim()) * 16 + goal.OrderPosition(m);
}

// `dims` (n of them) stably sorted by GoalRank for tensor dim b, into
// `to_goal`: an insertion sort of keys computed once each (n <= 8).
void SortByGoalRank(const int* dims, int n, int b, const DistState& goal, int* to_goal) {
  int keys[kMaxMeshDims];
  for (int i = 0; i < n; ++i) {
    const int key = GoalRank(dims[i], b, goal);
    int j = i;
    for (; j > 0 && keys[j - 1] > key; --j) {
      keys[j] = keys[j - 1];
      to_goal[j] = to_goal[j - 1];
    }
    keys[j] = key;
    to_goal[j] = dims[i];
  }
}

// Bit 8m set where mesh dim m is Partial (cell kind 2, dist_state.h).
uint64_t PartialCells(const DistState& s) {
  constexpr uint64_t kEveryByte = 0x0101010101010101;
  return (s.bits() >> 1) & ~s.bits() & kEveryByte;
}

// Which of a Partial group's steps AppendPartialGroups emits: the goal's
// orders depend on the goal, the others do not.
enum class PartialSteps { kAll, kGoalFree, kGoalOrders };

// 9, 10. Every set of >= 2 Partial mesh dims of one op: all_reduce, then
// reduce_scatter onto each tensor dim in two orders of the set, ascending and
// the goal's (GoalRank), not in every order: a set of 8 has 40,320.
void AppendPartialGroups(const DistState& state, const DistState& goal, int tensor_ndim,
                         PartialSteps which, std::vector<Step>* out) {
  const uint64_t partial = PartialCells(state);
  if ((partial & (partial - 1)) == 0) return;  // fewer than 2 Partial mesh dims: no group
  const bool goal_free = which != PartialSteps::kGoalOrders;
  const bool goal_orders = which != PartialSteps::kGoalFree;
  unsigned all_of[kNumReduceOps] = {};  // each op's Partial mesh dims
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement p = state.placement(m);
    if (p.is_partial()) all_of[static_cast<int>(p.op())] |= 1u << m;
  }
  for (int op = 0; op < kNumReduceOps; ++op) {
    const Placement p = Placement::Partial(static_cast<ReduceOp>(op));
    const unsigned all = all_of[op];
    if ((all & (all - 1)) == 0) continue;  // fewer than 2
    // all's subsets in ascending order (the generation order), of >= 2 dims.
    for (unsigned mask = (0 - all) & all; mask != 0; mask = (mask - all) & all) {
      if ((mask & (mask - 1)) == 0) continue;
      int dims[kMaxMeshDims];
      int n = 0;
      for (int m = 0; m < kMaxMeshDims; ++m) {
        if (mask & (1u << m)) dims[n++] = m;
      }
      const absl::Span<const int> group(dims, n);
      if (goal_free) out->push_back(MakeGroupStep(group, p, Placement::Replicate()));
      for (int b = 0; b < tensor_ndim; ++b) {
        if (goal_free) out->push_back(MakeGroupStep(group, p, Placement::Shard(b)));
        if (!goal_orders) continue;
        int to_goal[kMaxMeshDims];
        SortByGoalRank(dims, n, b, goal, to_goal);
        if (!std::equal(dims, dims + n, to_goal)) {
          out->push_back(MakeGroupStep(absl::MakeConstSpan(to_goal, n), p, Placement::Shard(b)));
        }
      }
    }
  }
}

// The permute from `state` (whose orders are `old`) to `orders` (each tensor
// dim's new order), over the smallest group that makes it legal: every mesh
// dim from the first changed position of each order to its end. Those are
// the tails of the old orders too (the orders hold the same mesh dims), so
// the group ends every order it leaves, as CheckStep asks.
void AppendPermuteTo(const Orders& old, const Orders& orders, int tensor_ndim,
                     std::vector<Step>* out) {
  std::pair<int, int> entries[kMaxMeshDims];  // (mesh dim, tensor dim)
  int n = 0;
  for (int d = 0; d < tensor_ndim; ++d) {
    const Order& from = old.of[d];
    const Order& to = orders.of[d];
    int first = 0;
    while (first < from.size && first < to.size && from.dims[first] == to.dims[first]) ++first;
    for (int i = first; i < to.size; ++i) entries[n++] = {to.dims[i], d};
  }
  if (n < 2) return;  // one mesh dim moving is an all_to_all
  out->push_back(MakePermute(absl::MakeConstSpan(entries, n)));
}

// 11. Swap two Shard mesh dims' places (tensor dim and position): the
// permute to those orders, as AppendPermuteTo would emit it, without copying
// the orders per pair. Only the swapped mesh dims' tensor dims change, each
// from the first position holding one of them to its end.
void AppendSwaps(const DistState& state, const Orders& old, std::vector<Step>* out) {
  for (int m1 = 0; m1 < state.ndim(); ++m1) {
    if (!state.placement(m1).is_shard()) continue;
    for (int m2 = m1 + 1; m2 < state.ndim(); ++m2) {
      if (!state.placement(m2).is_shard()) continue;
      const int d1 = state.placement(m1).dim();
      const int d2 = state.placement(m2).dim();
      const int p1 = state.OrderPosition(m1);
      const int p2 = state.OrderPosition(m2);
      // Per changed tensor dim, ascending: (tensor dim, first changed position).
      std::pair<int, int> changed[2] = {{d1, p1}, {d2, p2}};
      int num_changed = 2;
      if (d1 == d2) {
        changed[0].second = std::min(p1, p2);
        num_changed = 1;
      } else if (d2 < d1) {
        std::swap(changed[0], changed[1]);
      }
      std::pair<int, int> entries[kMaxMeshDims];  // (mesh dim, tensor dim)
      int n = 0;
      for (int c = 0; c < num_changed; ++c) {
        const auto [d, first] = changed[c];
        const Order& order = old.of[d];
        for (int i = first; i < order.size; ++i) {
          const int m = order.dims[i];
          entries[n++] = {m == m1 ? m2 : m == m2 ? m1 : m, d};
        }
      }
      out->push_back(MakePermute(absl::MakeConstSpan(entries, n)));
    }
  }
}

// 12. The goal permute: the mesh dims that shard in both `state` and `goal`
// and end their orders in `state`, placed as `goal` places them.
void AppendGoalPermute(const Orders& old, const Orders& goal_orders, unsigned goal_shards,
                       int tensor_ndim, std::vector<Step>* out) {
  // The longest tail of each order whose mesh dims also shard in goal.
  int keep[kMaxTensorDims];
  MeshDimSet moving;
  int num_moving = 0;
  for (int d = 0; d < tensor_ndim; ++d) {
    const Order& order = old.of[d];
    keep[d] = order.size;
    while (keep[d] > 0 && (goal_shards >> order.dims[keep[d] - 1] & 1u) != 0) --keep[d];
    for (int i = keep[d]; i < order.size; ++i) moving = moving.With(order.dims[i]);
    num_moving += order.size - keep[d];
  }
  // One mesh dim moving changes one order's last entry at most: no permute
  // (AppendPermuteTo would find one entry), and most states are this.
  if (num_moving < 2) return;
  Orders orders;
  for (int d = 0; d < tensor_ndim; ++d) {
    std::copy(old.of[d].dims, old.of[d].dims + keep[d], orders.of[d].dims);
    orders.of[d].size = keep[d];
    for (int m : goal_orders.of[d].span()) {
      if (moving.Contains(m)) orders.of[d].push_back(m);
    }
  }
  AppendPermuteTo(old, orders, tensor_ndim, out);
}

// 13. The goal exchange: every mesh dim at or after the first position where
// a tensor dim's order differs from goal's (in either order) leaves, and the
// goal's tails join as goal orders them; the others end Replicate. Only when
// that reaches goal (every other mesh dim already as goal has it, no Partial
// moves) and a Replicate mesh dim takes part (else case 12 reaches goal).
void AppendGoalExchange(const DistState& state, const Orders& old, const Orders& goal_orders,
                        const DistState& goal, int tensor_ndim, std::vector<Step>* out) {
  // A mesh dim Partial in one of them only differs, and leaves or joins
  // Partial, which the exchange never does: no exchange (the loop below
  // would find it too).
  if (PartialCells(state) != PartialCells(goal)) return;
  MeshDimSet group;
  std::pair<int, int> entries[kMaxMeshDims];  // (mesh dim, tensor dim)
  int n = 0;
  for (int d = 0; d < tensor_ndim; ++d) {
    const Order& from = old.of[d];
    const Order& to = goal_orders.of[d];
    int first = 0;
    while (first < from.size && first < to.size && from.dims[first] == to.dims[first]) ++first;
    for (int i = first; i < from.size; ++i) group = group.With(from.dims[i]);
    for (int i = first; i < to.size; ++i) {
      group = group.With(to.dims[i]);
      entries[n++] = {to.dims[i], d};
    }
  }
  bool replicate = false;
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement a = state.placement(m);
    const Placement b = goal.placement(m);
    if (!group.Contains(m)) {
      if (a != b) return;
      continue;
    }
    if (a.is_partial() || b.is_partial()) return;
    replicate = replicate || a.is_replicate() || b.is_replicate();
  }
  if (!replicate) return;
  out->push_back(MakeExchange(group, absl::MakeConstSpan(entries, n)));
}

}  // namespace

ShardOrders ShardOrders::Of(const DistState& state, int tensor_ndim) {
  ShardOrders orders;
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement p = state.placement(m);
    if (!p.is_shard() || p.dim() >= tensor_ndim) continue;
    Order& order = orders.of[p.dim()];
    order.dims[state.OrderPosition(m)] = m;
    ++order.size;
  }
  return orders;
}

void AppendNativeTransitions(const DistState& state, const DistState& goal, int tensor_ndim,
                             unsigned partial_ops, std::vector<Step>* out) {
  AppendTransitions(state, tensor_ndim, partial_ops, out);
  const Orders orders = Orders::Of(state, tensor_ndim);
  const Orders goal_orders = Orders::Of(goal, tensor_ndim);
  AppendShardGroups(orders, tensor_ndim, out);
  AppendPartialGroups(state, goal, tensor_ndim, PartialSteps::kAll, out);
  AppendSwaps(state, orders, out);
  AppendGoalPermute(orders, goal_orders, goal.ShardSet(), tensor_ndim, out);
  AppendGoalExchange(state, orders, goal_orders, goal, tensor_ndim, out);
}

void AppendGoalFreeTransitions(const DistState& state, int tensor_ndim, unsigned partial_ops,
                               std::vector<Step>* out) {
  AppendTransitions(state, tensor_ndim, partial_ops, out);
  const Orders orders = Orders::Of(state, tensor_ndim);
  AppendShardGroups(orders, tensor_ndim, out);
  AppendPartialGroups(state, state, tensor_ndim, PartialSteps::kGoalFree, out);
  AppendSwaps(state, orders, out);
}

GoalTransitions::GoalTransitions(const DistState& goal, int tensor_ndim)
    : goal_(goal),
      tensor_ndim_(tensor_ndim),
      goal_orders_(ShardOrders::Of(goal, tensor_ndim)),
      goal_shards_(goal.ShardSet()) {}

void GoalTransitions::Append(const DistState& state, const ShardOrders& orders,
                             std::vector<Step>* out) const {
  AppendPartialGroups(state, goal_, tensor_ndim_, PartialSteps::kGoalOrders, out);
  // A goal permute moves at least two mesh dims that shard in both states
  // (AppendGoalPermute); many of a matrix's (state, goal) pairs share fewer.
  if (__builtin_popcount(state.ShardSet() & goal_shards_) >= 2) {
    AppendGoalPermute(orders, goal_orders_, goal_shards_, tensor_ndim_, out);
  }
  AppendGoalExchange(state, orders, goal_orders_, goal_, tensor_ndim_, out);
}

void AppendGoalTransitions(const DistState& state, const DistState& goal, int tensor_ndim,
                           std::vector<Step>* out) {
  GoalTransitions(goal, tensor_ndim).Append(state, ShardOrders::Of(state, tensor_ndim), out);
}

}  // namespace reshard
