#include "planner/native_transitions.h"

#include <algorithm>
#include <utility>

#include "planner/transitions.h"

namespace reshard {
namespace {

using Entries = std::vector<std::pair<int, int>>;  // (mesh dim, tensor dim)

// 7, 8. The last k >= 2 mesh dims of a's order, gathered, or moved to the
// end of b's order in the same relative order.
void AppendShardGroups(const DistState& state, int tensor_ndim, std::vector<Step>* out) {
  for (int a = 0; a < tensor_ndim; ++a) {
    const MeshDimList order = state.OrderOf(a);
    for (size_t k = 2; k <= order.size(); ++k) {
      const std::vector<int> tail(order.end() - static_cast<long>(k), order.end());
      out->push_back(MakeGroupStep(tail, Placement::Shard(a), Placement::Replicate()));
      for (int b = 0; b < tensor_ndim; ++b) {
        if (b != a) out->push_back(MakeGroupStep(tail, Placement::Shard(a), Placement::Shard(b)));
      }
    }
  }
}

std::vector<int> DimsOf(unsigned mask) {
  std::vector<int> dims;
  for (int m = 0; m < kMaxMeshDims; ++m) {
    if (mask & (1u << m)) dims.push_back(m);
  }
  return dims;
}

// 9, 10. Every set of >= 2 Partial mesh dims of one op: all_reduce, then
// reduce_scatter onto each tensor dim in every order of the set.
void AppendPartialGroups(const DistState& state, int tensor_ndim, std::vector<Step>* out) {
  for (int op = 0; op < kNumReduceOps; ++op) {
    const Placement p = Placement::Partial(static_cast<ReduceOp>(op));
    unsigned all = 0;
    for (int m = 0; m < state.ndim(); ++m) {
      if (state.placement(m) == p) all |= 1u << m;
    }
    for (unsigned mask = 1; mask <= all; ++mask) {
      if ((mask & ~all) != 0 || __builtin_popcount(mask) < 2) continue;
      std::vector<int> dims = DimsOf(mask);
      out->push_back(MakeGroupStep(dims, p, Placement::Replicate()));
      for (int b = 0; b < tensor_ndim; ++b) {
        std::sort(dims.begin(), dims.end());
        do {
          out->push_back(MakeGroupStep(dims, p, Placement::Shard(b)));
        } while (std::next_permutation(dims.begin(), dims.end()));
      }
    }
  }
}

// The permute from `state` to `orders` (each tensor dim's new order), over
// the smallest group that makes it legal: every mesh dim from the first
// changed position of each order to its end.
void AppendPermuteTo(const DistState& state, const std::vector<MeshDimList>& orders,
                     std::vector<Step>* out) {
  Entries entries;
  for (size_t d = 0; d < orders.size(); ++d) {
    const MeshDimList old = state.OrderOf(static_cast<int>(d));
    size_t first = 0;
    while (first < old.size() && first < orders[d].size() && old[first] == orders[d][first]) {
      ++first;
    }
    for (size_t i = first; i < orders[d].size(); ++i) {
      entries.emplace_back(orders[d][i], static_cast<int>(d));
    }
  }
  if (entries.size() < 2) return;  // one mesh dim moving is an all_to_all
  const Step step = MakePermute(entries);
  // The group must also cover the tails it leaves (a mesh dim's old position).
  for (int d = 0; d < static_cast<int>(orders.size()); ++d) {
    bool in_tail = false;
    for (int m : state.OrderOf(d)) {
      if (step.group.Contains(m)) in_tail = true;
      else if (in_tail) return;
    }
  }
  out->push_back(step);
}

std::vector<MeshDimList> Orders(const DistState& state, int tensor_ndim) {
  std::vector<MeshDimList> orders;
  for (int d = 0; d < tensor_ndim; ++d) orders.push_back(state.OrderOf(d));
  return orders;
}

// 11. Swap two Shard mesh dims' places (tensor dim and position).
void AppendSwaps(const DistState& state, int tensor_ndim, std::vector<Step>* out) {
  for (int m1 = 0; m1 < state.ndim(); ++m1) {
    if (!state.placement(m1).is_shard()) continue;
    for (int m2 = m1 + 1; m2 < state.ndim(); ++m2) {
      if (!state.placement(m2).is_shard()) continue;
      std::vector<MeshDimList> orders = Orders(state, tensor_ndim);
      for (MeshDimList& order : orders) {
        for (int& m : order) m = m == m1 ? m2 : m == m2 ? m1 : m;
      }
      AppendPermuteTo(state, orders, out);
    }
  }
}

// 12. The goal permute: the mesh dims that shard in both `state` and `goal`
// and end their orders in `state`, placed as `goal` places them.
void AppendGoalPermute(const DistState& state, const DistState& goal, int tensor_ndim,
                       std::vector<Step>* out) {
  std::vector<MeshDimList> orders = Orders(state, tensor_ndim);
  MeshDimSet moving;
  for (int d = 0; d < tensor_ndim; ++d) {
    // The longest tail of d's order whose mesh dims also shard in goal.
    size_t keep = orders[d].size();
    while (keep > 0 && goal.placement(orders[d][keep - 1]).is_shard()) --keep;
    for (size_t i = keep; i < orders[d].size(); ++i) moving = moving.With(orders[d][i]);
    orders[d].resize(keep);
  }
  for (int d = 0; d < tensor_ndim; ++d) {
    for (int m : goal.OrderOf(d)) {
      if (moving.Contains(m)) orders[d].push_back(m);
    }
  }
  AppendPermuteTo(state, orders, out);
}

}  // namespace

void AppendNativeTransitions(const DistState& state, const DistState& goal, int tensor_ndim,
                             unsigned partial_ops, std::vector<Step>* out) {
  AppendTransitions(state, tensor_ndim, partial_ops, out);
  AppendShardGroups(state, tensor_ndim, out);
  AppendPartialGroups(state, tensor_ndim, out);
  AppendSwaps(state, tensor_ndim, out);
  AppendGoalPermute(state, goal, tensor_ndim, out);
}

}  // namespace reshard
