#include "planner/steps/permute_exchange.h"

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

}  // namespace

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
