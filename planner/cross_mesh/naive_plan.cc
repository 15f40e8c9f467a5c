#include "planner/cross_mesh/naive_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/layout/dtype.h"

namespace reshard {
namespace {

Box WholeTensor(const DistSpec& spec) {
  Box box;
  for (int64_t extent : spec.global_shape()) box.push_back(Slice{0, extent});
  return box;
}

// Per participant, the bytes of the hops' routes it sends (`sender`) or
// receives, local copies not counted.
std::vector<int64_t> HopBytes(const NaiveCrossMeshPlan& plan, bool sender) {
  std::vector<int64_t> bytes(plan.plain.participants.size(), 0);
  const int64_t itemsize = ItemSize(plan.plain.crossing_src.dtype());
  for (const std::vector<SliceRoute>& hop : plan.hops) {
    for (const SliceRoute& r : hop) {
      if (r.sender == r.receiver) continue;
      bytes[sender ? r.sender : r.receiver] += itemsize * BoxElements(r.box);
    }
  }
  return bytes;
}

}  // namespace

void NaiveHopBoxes(const NaiveCrossMeshPlan& plan, int hop, std::vector<Box>* held,
                   std::vector<Box>* wanted) {
  const CrossMeshPlan& p = plan.plain;
  const Box nothing(p.crossing_src.global_shape().size());
  const Box whole = WholeTensor(p.crossing_src);
  p.CrossingBoxes(held, wanted);  // the gather keeps `held`, the scatter `wanted`
  if (hop != 0) held->assign(p.participants.size(), nothing);
  if (hop != 2) wanted->assign(p.participants.size(), nothing);
  if (hop == 0) {  // gather: the source blocks to the source root
    (*wanted)[plan.src_root] = whole;
  } else if (hop == 1) {  // send: root to root
    (*held)[plan.src_root] = whole;
    (*wanted)[plan.dst_root] = whole;
  } else {  // scatter: the destination root to every destination block
    (*held)[plan.dst_root] = whole;
  }
}

absl::StatusOr<NaiveCrossMeshPlan> PlanNaiveCrossMesh(const CrossMeshRequest& request,
                                                      const PlanOptions& options) {
  RESHARD_ASSIGN_OR_RETURN(CrossMeshPlan plain, PlanPlainCrossMesh(request, options));
  NaiveCrossMeshPlan naive{std::move(plain)};
  const CrossMeshPlan& p = naive.plain;
  naive.src_root = p.ParticipantIndex(p.src_ranks.front());
  naive.dst_root = p.ParticipantIndex(p.dst_ranks.front());
  const std::shared_ptr<const CostModel>& model = ResolvedCostModel(options);
  std::optional<double> cost = p.before.cost + p.after.cost;
  for (int hop = 0; hop < kNaiveHops; ++hop) {
    std::vector<Box> held, wanted;
    NaiveHopBoxes(naive, hop, &held, &wanted);
    naive.hops[hop] = RouteSlices(held, wanted);
    // Each hop is priced by the rule of plain's crossing (spec §14 "Price").
    const std::optional<double> hop_cost = model->ExchangeAmongRanksUs(
        p.participants, naive.hops[hop], ItemSize(p.crossing_src.dtype()));
    cost = cost.has_value() && hop_cost.has_value() ? std::optional<double>(*cost + *hop_cost)
                                                    : std::nullopt;
  }
  naive.cost = cost;
  return naive;
}

std::vector<int64_t> NaiveCrossMeshPlan::BytesSent() const { return HopBytes(*this, true); }

std::vector<int64_t> NaiveCrossMeshPlan::BytesReceived() const { return HopBytes(*this, false); }

std::string NaiveCrossMeshPlan::Summary() const {
  return absl::StrCat(
      plain.before.Trace(), " on ", plain.crossing_src.mesh().ToString(), " ranks [",
      absl::StrJoin(plain.src_ranks, ","), "] -> gather on ", plain.participants[src_root],
      " -> send to ", plain.participants[dst_root], " -> scatter -> ", plain.after.Trace(), " on ",
      plain.crossing_dst.mesh().ToString(), " ranks [", absl::StrJoin(plain.dst_ranks, ","), "]");
}

}  // namespace reshard
