#include "planner/steps/permute_exchange.h"

#include <algorithm>

namespace reshard {

int64_t BoxElements(const Box& box) {
  int64_t n = 1;
  for (const Slice& s : box) n *= s.size;
  return n;
}

namespace {

// Every member's block, as boxes of the logical tensor: per tensor dim its
// slice over the group's splits before (after = false) or after the step.
std::vector<Box> Blocks(const DistState& state, const Step& step, const DeviceMesh& mesh,
                        absl::Span<const int64_t> logical, bool after) {
  std::vector<Box> blocks(mesh.GroupSize(step.group), Box(logical.size()));
  for (size_t d = 0; d < logical.size(); ++d) {
    const MeshDimList splits = GroupSplitsOf(state, step, static_cast<int>(d), after);
    const std::vector<Slice> slices = GroupSlices(mesh, step.group, splits, logical[d]);
    for (size_t j = 0; j < slices.size(); ++j) blocks[j][d] = slices[j];
  }
  return blocks;
}

// The intersection of `a` and `b`, relative to `origin`'s offsets: an empty
// box (sizes 0) when they do not meet.
Box Meet(const Box& a, const Box& b, const Box& origin) {
  Box out(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    const int64_t begin = std::max(a[d].offset, b[d].offset);
    const int64_t end = std::min(a[d].offset + a[d].size, b[d].offset + b[d].size);
    out[d] = Slice{begin - origin[d].offset, std::max<int64_t>(0, end - begin)};
    if (end <= begin) out[d].offset = 0;
  }
  return out;
}

std::vector<int64_t> Counts(const std::vector<Box>& boxes) {
  std::vector<int64_t> counts;
  for (const Box& b : boxes) counts.push_back(BoxElements(b));
  return counts;
}

}  // namespace

std::vector<int64_t> PermuteExchange::SendCounts() const { return Counts(send); }
std::vector<int64_t> PermuteExchange::RecvCounts() const { return Counts(recv); }

PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step,
                                  const DeviceMesh& mesh, absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate) {
  const std::vector<Box> source = Blocks(state, step, mesh, logical, /*after=*/false);
  const std::vector<Box> target = Blocks(state, step, mesh, logical, /*after=*/true);
  PermuteExchange x;
  x.me = mesh.IndexInGroup(step.group, mesh.Rank(coordinate));
  for (const Slice& s : source[x.me]) x.source_shape.push_back(s.size);
  for (const Slice& s : target[x.me]) x.target_shape.push_back(s.size);
  for (size_t j = 0; j < source.size(); ++j) {
    x.send.push_back(Meet(source[x.me], target[j], source[x.me]));
    x.recv.push_back(Meet(source[j], target[x.me], target[x.me]));
  }
  return x;
}

}  // namespace reshard
