#include "planner/cross_mesh/cross_mesh_plan.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dtype.h"

namespace reshard {
namespace {

// `ranks`, or 0 .. size - 1 when empty; InvalidArgument naming `field` for
// a wrong size or a repeated or negative rank.
absl::StatusOr<std::vector<int64_t>> RanksOf(absl::string_view field,
                                             const std::vector<int64_t>& ranks, int64_t size) {
  if (ranks.empty()) {
    std::vector<int64_t> all(size);
    for (int64_t i = 0; i < size; ++i) all[i] = i;
    return all;
  }
  if (static_cast<int64_t>(ranks.size()) != size) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", ranks.size(),
                                                   ranks.size() == 1 ? " rank" : " ranks",
                                                   " for a mesh of ", size, " ranks"));
  }
  absl::flat_hash_set<int64_t> seen;
  for (int64_t r : ranks) {
    if (r < 0 || !seen.insert(r).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": rank ", r, r < 0 ? " is negative" : " appears twice"));
    }
  }
  return ranks;
}

// `spec` with every Partial mesh dim Replicate.
absl::StatusOr<DistSpec> WithoutPartials(const DistSpec& spec) {
  DistState state = spec.state();
  for (int m = 0; m < state.ndim(); ++m) {
    if (state.placement(m).is_partial()) state = state.WithPlacement(m, Placement::Replicate());
  }
  return DistSpec::Create(spec.mesh(), state, spec.global_shape(), spec.dtype());
}

// Spec §14: the crossing's boxes per participant. Participant i holds its
// crossing_src block if it is a source rank and wants its crossing_dst
// block if it is a destination rank (empty boxes otherwise).
void CrossingBoxes(const CrossMeshPlan& p, std::vector<Box>* held, std::vector<Box>* wanted) {
  const size_t n = p.participants.size();
  const Box nothing(p.crossing_src.global_shape().size());
  held->assign(n, nothing);
  wanted->assign(n, nothing);
  auto index = [&](int64_t rank) {
    return std::lower_bound(p.participants.begin(), p.participants.end(), rank) -
           p.participants.begin();
  };
  for (size_t r = 0; r < p.src_ranks.size(); ++r) {
    (*held)[index(p.src_ranks[r])] =
        BlockOf(p.crossing_src, p.crossing_src.mesh().Coordinate(static_cast<int64_t>(r)));
  }
  for (size_t r = 0; r < p.dst_ranks.size(); ++r) {
    (*wanted)[index(p.dst_ranks[r])] =
        BlockOf(p.crossing_dst, p.crossing_dst.mesh().Coordinate(static_cast<int64_t>(r)));
  }
}

// The slices the crossing's routes hold before balancing splits any: per
// destination rank, the source blocks its block meets. A layout's blocks
// are the product of one partition of [0, extent) per tensor dim (each
// mesh dim splits one tensor dim), so per tensor dim the count is the
// source intervals meeting the destination's, and their product is the
// rank's count. Cheap: per destination rank a binary search per tensor dim.
int64_t CrossingSlices(const CrossMeshPlan& p) {
  const DistSpec& src = p.crossing_src;
  std::vector<std::vector<int64_t>> begins(src.tensor_ndim()), ends(src.tensor_ndim());
  for (int64_t r = 0; r < src.mesh().num_ranks(); ++r) {
    const Box box = BlockOf(src, src.mesh().Coordinate(r));
    for (int d = 0; d < src.tensor_ndim(); ++d) {
      if (box[d].size == 0) continue;
      begins[d].push_back(box[d].offset);
      ends[d].push_back(box[d].offset + box[d].size);
    }
  }
  for (int d = 0; d < src.tensor_ndim(); ++d) {  // distinct, disjoint: sorted alike
    for (std::vector<int64_t>* v : {&begins[d], &ends[d]}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }
  int64_t total = 0;
  for (int64_t r = 0; r < p.crossing_dst.mesh().num_ranks(); ++r) {
    const Box box = BlockOf(p.crossing_dst, p.crossing_dst.mesh().Coordinate(r));
    int64_t slices = 1;
    for (int d = 0; d < src.tensor_ndim() && slices > 0; ++d) {
      if (box[d].size == 0) slices = 0;
      // Source intervals [b, e) with e > begin and b < end.
      const auto first = std::upper_bound(ends[d].begin(), ends[d].end(), box[d].offset);
      const auto last =
          std::lower_bound(begins[d].begin(), begins[d].end(), box[d].offset + box[d].size);
      slices *= std::max<int64_t>(0, (last - begins[d].begin()) - (first - ends[d].begin()));
    }
    total += slices;
  }
  return total;
}

std::vector<SliceRoute> CrossingRoutes(const CrossMeshPlan& p) {
  std::vector<Box> held, wanted;
  CrossingBoxes(p, &held, &wanted);
  return RouteSlices(held, wanted);
}

// The total of the plan's parts, or none when the crossing is not priced.
void PriceCrossing(const PlanOptions& options, CrossMeshPlan* plan) {
  const std::shared_ptr<const CostModel>& model = ResolvedCostModel(options);
  plan->crossing_cost = model->ExchangeAmongRanksUs(plan->participants, plan->load,
                                                    ItemSize(plan->crossing_src.dtype()));
  if (plan->crossing_cost.has_value()) {
    plan->cost = plan->before.cost + *plan->crossing_cost + plan->after.cost;
  }
}

}  // namespace

Box BlockOf(const DistSpec& spec, absl::Span<const int64_t> coordinate) {
  Box box;
  for (int d = 0; d < spec.tensor_ndim(); ++d) {
    std::vector<int64_t> sizes, indices;
    for (int m : spec.state().OrderOf(d)) {
      sizes.push_back(spec.mesh().size(m));
      indices.push_back(coordinate[m]);
    }
    box.push_back(NestedChunk(spec.global_shape()[d], sizes, indices));
  }
  return box;
}

absl::StatusOr<CrossMeshPlan> PlanCrossMesh(const CrossMeshRequest& request,
                                            const PlanOptions& options) {
  const DistSpec& src = request.src;
  const DistSpec& dst = request.dst;
  if (src.global_shape() != dst.global_shape() || src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(
        "dst: a cross-mesh move keeps the global shape and dtype of src");
  }
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> src_ranks,
                           RanksOf("src_ranks", request.src_ranks, src.mesh().num_ranks()));
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> dst_ranks,
                           RanksOf("dst_ranks", request.dst_ranks, dst.mesh().num_ranks()));
  RESHARD_ASSIGN_OR_RETURN(DistSpec crossing_src, WithoutPartials(src));
  RESHARD_ASSIGN_OR_RETURN(DistSpec crossing_dst, WithoutPartials(dst));
  RESHARD_ASSIGN_OR_RETURN(Plan before, PlanRedistribution(src, crossing_src, options));
  RESHARD_ASSIGN_OR_RETURN(Plan after, PlanRedistribution(crossing_dst, dst, options));
  std::vector<int64_t> participants = src_ranks;
  participants.insert(participants.end(), dst_ranks.begin(), dst_ranks.end());
  std::sort(participants.begin(), participants.end());
  participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
  CrossMeshPlan plan{std::move(src_ranks),
                     std::move(dst_ranks),
                     std::move(participants),
                     std::move(before),
                     std::move(crossing_src),
                     std::move(crossing_dst),
                     {},
                     {},
                     std::move(after)};
  if (const int64_t slices = CrossingSlices(plan); slices > kMaxCrossingSlices) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "dst_ranks: the crossing would move ", slices, " slices, more than ", kMaxCrossingSlices,
        " (its routes take time and memory in proportion); move fewer "
        "ranks at once or coarser blocks"));
  }
  plan.routes = CrossingRoutes(plan);
  plan.load = LoadOfRoutes(plan.routes, static_cast<int64_t>(plan.participants.size()));
  PriceCrossing(options, &plan);
  return plan;
}

std::vector<int64_t> CrossMeshPlan::BytesSent() const {
  std::vector<int64_t> sent(participants.size(), 0);
  const int64_t itemsize = ItemSize(crossing_src.dtype());
  for (const SliceRoute& route : routes) {
    if (route.sender != route.receiver) sent[route.sender] += itemsize * BoxElements(route.box);
  }
  return sent;
}

std::vector<int64_t> CrossMeshPlan::ReceiveLowerBoundBytes() const {
  std::vector<Box> held, wanted;
  CrossingBoxes(*this, &held, &wanted);
  const int64_t itemsize = ItemSize(crossing_src.dtype());
  std::vector<int64_t> bound(participants.size(), 0);
  for (size_t i = 0; i < participants.size(); ++i) {
    bound[i] =
        itemsize * (BoxElements(wanted[i]) - BoxElements(MeetBoxes(wanted[i], held[i], wanted[i])));
  }
  return bound;
}

std::string CrossMeshPlan::Summary() const {
  return absl::StrCat(before.Trace(), " on ", crossing_src.mesh().ToString(), " ranks [",
                      absl::StrJoin(src_ranks, ","), "] -> exchange (", routes.size(),
                      " slices) -> ", after.Trace(), " on ", crossing_dst.mesh().ToString(),
                      " ranks [", absl::StrJoin(dst_ranks, ","), "]");
}

}  // namespace reshard
