#include "harness/receive_bound.h"

#include <algorithm>
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

}  // namespace

ReceiveBound ReceiveLowerBoundAcross(const DistSpec& src, const DistSpec& dst,
                                     const std::vector<int64_t>& src_ranks,
                                     const std::vector<int64_t>& dst_ranks) {
  ReceiveBound bound;
  if (dst.has_partial()) return bound;
  const bool src_partial = src.has_partial();
  for (size_t d = 0; d < dst_ranks.size(); ++d) {
    const ShardRegion want = RegionOf(dst, dst.mesh().Coordinate(static_cast<int64_t>(d)));
    const auto s = std::find(src_ranks.begin(), src_ranks.end(), dst_ranks[d]);
    const int64_t held =
        src_partial || s == src_ranks.end()
            ? 0
            : Overlap(want, RegionOf(src, src.mesh().Coordinate(s - src_ranks.begin())));
    const int64_t bytes = (Elements(want.shape) - held) * ItemSize(dst.dtype());
    bound.max_bytes = std::max(bound.max_bytes, bytes);
    bound.total_bytes += bytes;
  }
  return bound;
}

ReceiveBound ReceiveLowerBound(const DistSpec& src, const DistSpec& dst) {
  std::vector<int64_t> ranks(src.mesh().num_ranks());
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
  return ReceiveLowerBoundAcross(src, dst, ranks, ranks);
}

}  // namespace reshard
