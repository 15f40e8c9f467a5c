#include "harness/cross_mesh_case.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "harness/verify_case.h"
#include "mesh/device_mesh.h"

namespace reshard {

std::string CrossMeshCase::Flags() const {
  std::string ranks;
  if (!src_ranks.empty()) absl::StrAppend(&ranks, " --src-ranks ", absl::StrJoin(src_ranks, ","));
  if (!dst_ranks.empty()) absl::StrAppend(&ranks, " --dst-ranks ", absl::StrJoin(dst_ranks, ","));
  return absl::StrFormat(
             "--mesh %s --dst-mesh %s%s --shape %s --dtype %s --src '%s' --dst '%s' --mode %s "
             "--seed %d",
             absl::StrJoin(mesh, ","), absl::StrJoin(dst_mesh, ","), ranks,
             absl::StrJoin(shape, ","), DTypeName(dtype), src, dst, PlanModeName(mode), data_seed) +
         (max_memory > 0 ? absl::StrCat(" --plan-max-memory ", max_memory) : "") +
         (cost_model_name.empty() ? "" : absl::StrCat(" --cost-model ", cost_model_name)) +
         (profile.empty() ? "" : absl::StrCat(" --profile '", profile, "'")) +
         (devices_per_host.empty() ? "" : absl::StrCat(" --devices-per-host ", devices_per_host));
}

std::string CrossMeshCase::CommandLine() const { return absl::StrCat("reshard verify ", Flags()); }

RankSets RankSetsOf(const CrossMeshPlan& plan) {
  const size_t n = plan.participants.size();
  if (n == plan.src_ranks.size() + plan.dst_ranks.size()) return RankSets::kDisjoint;
  if (n == plan.src_ranks.size() && n == plan.dst_ranks.size()) return RankSets::kEqual;
  return RankSets::kOverlapping;
}

absl::StatusOr<CrossMeshRequest> RequestOf(const CrossMeshCase& c) {
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create(c.mesh));
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh dst_mesh, DeviceMesh::Create(c.dst_mesh));
  RESHARD_ASSIGN_OR_RETURN(DistSpec src, DistSpec::Parse(mesh, c.src, c.shape, c.dtype));
  RESHARD_ASSIGN_OR_RETURN(DistSpec dst, DistSpec::Parse(dst_mesh, c.dst, c.shape, c.dtype));
  return CrossMeshRequest{std::move(src), std::move(dst), c.src_ranks, c.dst_ranks};
}

namespace {

// 1 to 3 dims of sizes 1 to 4 (size 1 less often), at most max_ranks ranks.
std::vector<int64_t> RandomMesh(std::mt19937_64& rng, int64_t max_ranks) {
  static constexpr int64_t kSizes[] = {1, 2, 2, 2, 3, 3, 4, 4};
  std::vector<int64_t> mesh;
  int64_t ranks = 1;
  const int ndim = 1 + static_cast<int>(rng() % 3);
  for (int m = 0; m < ndim; ++m) {
    int64_t size = kSizes[rng() % 8];
    while (size > 1 && ranks * size > max_ranks) --size;
    ranks *= size;
    mesh.push_back(size);
  }
  return mesh;
}

std::vector<int64_t> Iota(int64_t n, int64_t from = 0) {
  std::vector<int64_t> out(n);
  std::iota(out.begin(), out.end(), from);
  return out;
}

// Global ranks for meshes of n and m ranks (above: disjoint, overlapping or
// equal sets, in random orders), within max_union.
void RandomRanks(std::mt19937_64& rng, int64_t n, int64_t m, int64_t max_union, CrossMeshCase& c) {
  int kind = static_cast<int>(rng() % 3);
  if (kind == 2 && n != m) kind = 1;
  if (kind == 0 && n + m > max_union) kind = 1;
  if (kind == 0) {
    // The source's ranks first or last.
    const bool first = rng() % 2 == 0;
    c.src_ranks = Iota(n, first ? 0 : m);
    c.dst_ranks = Iota(m, first ? n : 0);
  } else if (kind == 2) {
    c.src_ranks = Iota(n);
    c.dst_ranks = Iota(m);
  } else {
    // Any n and m ranks of fewer than n + m share at least one.
    const int64_t low = std::max(n, m), high = std::min(n + m - 1, max_union);
    std::vector<int64_t> pool = Iota(low + static_cast<int64_t>(rng() % (high - low + 1)));
    std::shuffle(pool.begin(), pool.end(), rng);
    c.src_ranks.assign(pool.begin(), pool.begin() + n);
    std::shuffle(pool.begin(), pool.end(), rng);
    c.dst_ranks.assign(pool.begin(), pool.begin() + m);
  }
  if (rng() % 2 == 0) std::shuffle(c.dst_ranks.begin(), c.dst_ranks.end(), rng);
}

}  // namespace

CrossMeshCase RandomCrossMeshCase(uint64_t seed, int64_t max_ranks, int64_t max_union) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 16);
  max_ranks = std::max<int64_t>(1, max_ranks);
  max_union = std::max(max_union, max_ranks);
  CrossMeshCase c;
  c.mesh = RandomMesh(rng, max_ranks);
  c.dst_mesh = RandomMesh(rng, max_ranks);
  const int tensor_ndim = 1 + static_cast<int>(rng() % 3);
  static constexpr int64_t kExtents[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16};
  for (int d = 0; d < tensor_ndim; ++d) c.shape.push_back(kExtents[rng() % 12]);
  c.dtype = kRandomDTypes[rng() % 9];
  static const std::vector<std::vector<ReduceOp>> kOpSets = {{ReduceOp::kSum},
                                                             {ReduceOp::kAvg},
                                                             {ReduceOp::kMax},
                                                             {ReduceOp::kMin},
                                                             {ReduceOp::kSum, ReduceOp::kAvg}};
  const std::vector<ReduceOp>& ops = kOpSets[rng() % kOpSets.size()];
  const int src_ndim = static_cast<int>(c.mesh.size());
  const int dst_ndim = static_cast<int>(c.dst_mesh.size());
  c.src = RandomState(rng, src_ndim, tensor_ndim, ops, 5).ToString();
  c.dst = RandomState(rng, dst_ndim, tensor_ndim, ops, 5).ToString();
  int64_t n = 1, m = 1;
  for (int64_t s : c.mesh) n *= s;
  for (int64_t s : c.dst_mesh) m *= s;
  RandomRanks(rng, n, m, max_union, c);
  c.data_seed = rng() % 1000000;
  return c;
}

}  // namespace reshard
