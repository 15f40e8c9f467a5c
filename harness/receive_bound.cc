#include "harness/receive_bound.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "harness/ground_truth.h"

namespace reshard {
namespace {

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// Elements of the intersection of two blocks.
int64_t Overlap(const ShardRegion& a, const ShardRegion& b) {
  int64_t n = 1;
  for (size_t d = 0; d < a.offset.size(); ++d) {
    const int64_t lo = std::max(a.offset[d], b.offset[d]);
    const int64_t hi = std::min(a.offset[d] + a.shape[d], b.offset[d] + b.shape[d]);
    n *= std::max<int64_t>(0, hi - lo);
  }
  return n;
}

// The groups of `spec`'s ranks whose values reduce to the tensor's: ranks
// that differ only on Partial mesh dims (one rank each without Partial).
std::vector<std::vector<int64_t>> Groups(const DistSpec& spec) {
  const DeviceMesh& mesh = spec.mesh();
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_key;
  for (int64_t r = 0; r < mesh.num_ranks(); ++r) {
    std::vector<int64_t> key = mesh.Coordinate(r);
    for (int m = 0; m < mesh.ndim(); ++m) {
      if (spec.state().placement(m).is_partial()) key[m] = 0;
    }
    by_key[std::move(key)].push_back(r);
  }
  std::vector<std::vector<int64_t>> groups;
  for (auto& [key, ranks] : by_key) groups.push_back(std::move(ranks));
  return groups;
}

}  // namespace

ReceiveBound ReceiveLowerBoundAcross(const DistSpec& src, const DistSpec& dst,
                                     const std::vector<int64_t>& src_ranks,
                                     const std::vector<int64_t>& dst_ranks) {
  const std::vector<std::vector<int64_t>> src_groups = Groups(src);
  std::map<int64_t, size_t> src_group_of;  // global rank -> its source group
  for (size_t g = 0; g < src_groups.size(); ++g) {
    for (int64_t s : src_groups[g]) src_group_of[src_ranks[s]] = g;
  }
  ReceiveBound bound;
  for (const std::vector<int64_t>& members : Groups(dst)) {
    const ShardRegion want = RegionOf(dst, dst.mesh().Coordinate(members.front()));
    std::set<int64_t> ranks;
    for (int64_t d : members) ranks.insert(dst_ranks[d]);
    // The blocks whose tensor values the group holds: those of source groups
    // all of whose ranks are in it. Distinct blocks of a layout are disjoint.
    std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> held_blocks;
    for (int64_t r : ranks) {
      const auto g = src_group_of.find(r);
      if (g == src_group_of.end()) continue;
      const std::vector<int64_t>& addends = src_groups[g->second];
      if (std::all_of(addends.begin(), addends.end(),
                      [&](int64_t s) { return ranks.count(src_ranks[s]) > 0; })) {
        ShardRegion block = RegionOf(src, src.mesh().Coordinate(addends.front()));
        held_blocks.emplace(std::move(block.offset), std::move(block.shape));
      }
    }
    int64_t held = 0;
    for (const auto& [offset, shape] : held_blocks) held += Overlap(want, {offset, shape});
    const int64_t missing = std::max<int64_t>(0, Elements(want.shape) - held);
    const int64_t n = static_cast<int64_t>(members.size());
    bound.max_bytes = std::max(bound.max_bytes, (missing + n - 1) / n * ItemSize(dst.dtype()));
    bound.total_bytes += missing * ItemSize(dst.dtype());
  }
  return bound;
}

ReceiveBound ReceiveLowerBound(const DistSpec& src, const DistSpec& dst) {
  std::vector<int64_t> ranks(src.mesh().num_ranks());
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
  return ReceiveLowerBoundAcross(src, dst, ranks, ranks);
}

}  // namespace reshard
