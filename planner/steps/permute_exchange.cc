#include "planner/steps/permute_exchange.h"

#include <algorithm>

namespace reshard {
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

std::vector<int64_t> Counts(const std::vector<Box>& boxes) {
  std::vector<int64_t> counts;
  for (const Box& b : boxes) counts.push_back(BoxElements(b));
  return counts;
}

std::vector<int64_t> Sizes(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.size);
  return out;
}

// The first member's slice of tensor dim d (length `length`) before or
// after the step: NestedChunk at index 0 of every split (Blocks' member 0).
Slice FirstMemberSlice(const DistState& state, const Step& step, const DeviceMesh& mesh, int d,
                       int64_t length, bool after) {
  const MeshDimList splits = GroupSplitsOf(state, step, d, after);
  int64_t sizes[kMaxMeshDims];
  const int64_t zeros[kMaxMeshDims] = {};
  for (size_t i = 0; i < splits.size(); ++i) sizes[i] = mesh.size(splits[i]);
  return NestedChunk(length, absl::MakeConstSpan(sizes, splits.size()),
                     absl::MakeConstSpan(zeros, splits.size()));
}

}  // namespace

int64_t FirstMemberReceives(const DistState& state, const Step& step, const DeviceMesh& mesh,
                            absl::Span<const int64_t> logical) {
  int64_t wanted = 1, kept = 1;
  for (size_t d = 0; d < logical.size(); ++d) {
    const int dim = static_cast<int>(d);
    const Slice held = FirstMemberSlice(state, step, mesh, dim, logical[d], /*after=*/false);
    const Slice want = FirstMemberSlice(state, step, mesh, dim, logical[d], /*after=*/true);
    const int64_t lo = std::max(held.offset, want.offset);
    const int64_t hi = std::min(held.offset + held.size, want.offset + want.size);
    wanted *= want.size;
    kept *= std::max<int64_t>(0, hi - lo);
  }
  return wanted - kept;
}

std::vector<int64_t> PermuteExchange::SendCounts() const { return Counts(send); }
std::vector<int64_t> PermuteExchange::RecvCounts() const { return Counts(recv); }

PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                  absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate) {
  const std::vector<Box> source = Blocks(state, step, mesh, logical, /*after=*/false);
  const std::vector<Box> target = Blocks(state, step, mesh, logical, /*after=*/true);
  PermuteExchange x;
  x.me = mesh.IndexInGroup(step.group, mesh.Rank(coordinate));
  const std::vector<SliceRoute> routes = RouteSlicesOf(source, target, x.me);
  x.source_shape = Sizes(source[x.me]);
  x.target_shape = Sizes(target[x.me]);
  x.send.assign(source.size(), Box(logical.size()));
  x.recv.assign(source.size(), Box(logical.size()));
  for (const SliceRoute& r : routes) {
    // The route's box is in logical coordinates; make it block-relative.
    if (r.sender == x.me) x.send[r.receiver] = MeetBoxes(r.box, source[x.me], source[x.me]);
    if (r.receiver == x.me) x.recv[r.sender] = MeetBoxes(r.box, target[x.me], target[x.me]);
  }
  return x;
}

RouteLoad ExchangeLoadOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                         absl::Span<const int64_t> logical) {
  return LoadOfSliceRoutes(Blocks(state, step, mesh, logical, /*after=*/false),
                           Blocks(state, step, mesh, logical, /*after=*/true));
}

}  // namespace reshard
