#include "harness/verify_case.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/layout/notation.h"

namespace reshard {

std::string VerifyCase::Flags() const {
  return absl::StrFormat(
      "--mesh %s --shape %s --dtype %s --src '%s' --dst '%s' --algorithm %s --mode %s --seed %d",
      absl::StrJoin(mesh, ","), absl::StrJoin(shape, ","), DTypeName(dtype), src, dst,
      AlgorithmName(algorithm), PlanModeName(mode), data_seed);
}

std::string VerifyCase::CommandLine() const { return absl::StrCat("reshard verify ", Flags()); }

DistState RandomState(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim,
                      const std::vector<ReduceOp>& ops, int shards) {
  std::vector<Placement> placements;
  for (int m = 0; m < mesh_ndim; ++m) {
    const int kind = static_cast<int>(rng() % 8);
    if (kind < shards) {
      placements.push_back(Placement::Shard(static_cast<int>(rng() % tensor_ndim)));
    } else if (kind < shards + (8 - shards) / 2) {
      placements.push_back(Placement::Replicate());
    } else {
      placements.push_back(Placement::Partial(ops[rng() % ops.size()]));
    }
  }
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    ShardOrderEntry e{d, {}};
    for (int m = 0; m < mesh_ndim; ++m) {
      if (placements[m].is_shard() && placements[m].dim() == d) e.mesh_dims.push_back(m);
    }
    if (e.mesh_dims.empty()) continue;
    if (rng() % 2 == 0) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
    order.push_back(std::move(e));
  }
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  return s.ok() ? *s : DistState::WithDefaultOrder(placements);
}

namespace {

// `state` with its Shard mesh dims rearranged, as a permute does: each
// tensor dim's order reversed, or (for tensors of 2+ dims) tensor dims 0 and
// 1 swapped. Partial and Replicate mesh dims stay.
DistState Rearranged(std::mt19937_64& rng, const DistState& state, int tensor_ndim) {
  const bool swap = tensor_ndim > 1 && rng() % 2 == 0;
  std::vector<Placement> placements = state.placements();
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    const int from = swap && d < 2 ? 1 - d : d;
    MeshDimList dims = state.OrderOf(from);
    if (dims.empty()) continue;
    if (!swap) std::reverse(dims.begin(), dims.end());
    for (int m : dims) placements[m] = Placement::Shard(d);
    order.push_back(ShardOrderEntry{d, std::vector<int>(dims.begin(), dims.end())});
  }
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  return s.ok() ? *s : state;
}

// `state` with the mesh dims that shard its first sharded tensor dim, and
// every Partial one, all turned into one random placement (Replicate or a
// Shard): what one collective over several mesh dims does.
DistState Collapsed(std::mt19937_64& rng, const DistState& state, int tensor_ndim) {
  const Placement to = rng() % 3 == 0 ? Placement::Replicate()
                                      : Placement::Shard(static_cast<int>(rng() % tensor_ndim));
  int first = -1;
  std::vector<Placement> placements = state.placements();
  for (Placement& q : placements) {
    if (q.is_shard() && first == -1) first = q.dim();
    if (q.is_partial() || (q.is_shard() && q.dim() == first)) q = to;
  }
  return DistState::WithDefaultOrder(placements);
}

// `state` with every Partial mesh dim Replicate.
DistState WithoutPartials(const DistState& state) {
  DistState out = state;
  for (int m = 0; m < state.ndim(); ++m) {
    if (state.placement(m).is_partial()) out = out.WithPlacement(m, Placement::Replicate());
  }
  return out;
}

// Src and dst of a native case: mostly Shard layouts; dst a quarter of the
// time src rearranged (permutes), a quarter collapsed (group collectives), a
// quarter random, and a quarter both random Shard and Replicate layouts
// (exchanges, spec §4.2 case 13).
void NativeLayouts(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim,
                   const std::vector<ReduceOp>& ops, VerifyCase& c) {
  const int kind = static_cast<int>(rng() % 4);
  DistState src = RandomState(rng, mesh_ndim, tensor_ndim, ops, kind == 1 ? 4 : 6);
  DistState dst = kind == 0   ? Rearranged(rng, src, tensor_ndim)
                  : kind == 1 ? Collapsed(rng, src, tensor_ndim)
                              : RandomState(rng, mesh_ndim, tensor_ndim, ops, kind == 2 ? 6 : 4);
  if (kind == 3) {
    src = WithoutPartials(src);
    dst = WithoutPartials(dst);
  }
  c.src = src.ToString();
  c.dst = dst.ToString();
}

}  // namespace

VerifyCase RandomCase(uint64_t seed, int64_t max_ranks, PlanMode mode) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  VerifyCase c;
  max_ranks = std::max<int64_t>(1, max_ranks);
  const int mesh_ndim = 1 + static_cast<int>(rng() % 4);
  int64_t ranks = 1;
  for (int m = 0; m < mesh_ndim; ++m) {
    // Sizes 1..4, size 1 less often; shrink to stay within max_ranks.
    static constexpr int64_t kSizes[] = {1, 2, 2, 2, 3, 3, 4, 4};
    int64_t size = kSizes[rng() % 8];
    while (size > 1 && ranks * size > max_ranks) --size;
    ranks *= size;
    c.mesh.push_back(size);
  }
  const int tensor_ndim = 1 + static_cast<int>(rng() % 4);
  static constexpr int64_t kExtents[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16};
  for (int d = 0; d < tensor_ndim; ++d) {
    int64_t e = kExtents[rng() % 12];
    if (tensor_ndim == 4) e = std::min<int64_t>(e, 6);
    c.shape.push_back(e);
  }
  c.dtype = kRandomDTypes[rng() % 9];
  static const std::vector<std::vector<ReduceOp>> kOpSets = {
      {ReduceOp::kSum}, {ReduceOp::kAvg},  {ReduceOp::kMax},
      {ReduceOp::kMin}, {ReduceOp::kProd}, {ReduceOp::kSum, ReduceOp::kAvg}};
  const std::vector<ReduceOp>& ops = kOpSets[rng() % kOpSets.size()];
  static constexpr Algorithm kAlgorithms[] = {Algorithm::kGraph, Algorithm::kGraph,
                                              Algorithm::kGreedy, Algorithm::kGreedy,
                                              Algorithm::kAuto};
  c.mode = mode;
  if (mode == PlanMode::kNative) {
    NativeLayouts(rng, mesh_ndim, tensor_ndim, ops, c);
    c.algorithm = rng() % 2 == 0 ? Algorithm::kGraph : Algorithm::kAuto;  // never greedy
  } else {
    c.src = RandomState(rng, mesh_ndim, tensor_ndim, ops).ToString();
    c.dst = RandomState(rng, mesh_ndim, tensor_ndim, ops).ToString();
    c.algorithm = kAlgorithms[rng() % 5];
  }
  c.data_seed = rng() % 1000000;
  return c;
}

}  // namespace reshard
