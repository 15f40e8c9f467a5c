// The compat bound's strength (spec §5.1 item 1), on plans whose cost it can
// know exactly: where a state's abstract path is the plan itself, h(src) is
// C* shrunk by its millionth, bit for bit up to rounding. A bound that lost
// a step's bytes or a Shard's way back would fall short here while staying
// consistent (tests/property_test checks consistency).
#include "planner/costs/bounds/remaining_cost_bound.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/layout/notation.h"
#include "planner/search/graph_planner.h"
#include "planner/search/search_limits.h"

namespace reshard {
namespace {

struct Problem {
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  std::string src, dst;
};

// h(src) and C* for `problem` under `model_name` (8 GPUs per host, a bf16
// tensor): in pytorch mode C* is the pruned compat search's cost (spec §5.1),
// in native mode the native search's (spec §5.2).
void BoundAndCost(const Problem& problem, const std::string& model_name, double* h, double* c_star,
                  bool native = false) {
  const DeviceMesh mesh = *DeviceMesh::Create(problem.mesh);
  const int ndim = static_cast<int>(problem.shape.size());
  const DistState src = ParseDistState(problem.src, mesh, ndim)->state;
  const DistState dst = ParseDistState(problem.dst, mesh, ndim)->state;
  std::unique_ptr<const BoundCostModel> model =
      (*MakeCostModel(model_name, /*devices_per_host=*/8))
          ->Bind(CostProblem{mesh, problem.shape, /*itemsize=*/2});
  const RemainingCostBound bound(
      dst, *model,
      native ? RemainingCostBound::Graph::kNative : RemainingCostBound::Graph::kCompat);
  *h = bound(src);
  *c_star = native ? FindNativePath(mesh, problem.shape, DType::kBF16, src, dst, *model,
                                    SearchLimits{}, std::numeric_limits<int64_t>::max())
                         ->cost
                   : FindGraphPath(src, dst, ndim, *model, SearchLimits{})->cost;
}

void ExpectTight(const Problem& problem, const std::string& model_name) {
  double h = 0, c_star = 0;
  BoundAndCost(problem, model_name, &h, &c_star);
  EXPECT_NEAR(h, c_star * (1 - 1e-6), 1e-12 * c_star)
      << model_name << " " << problem.src << " -> " << problem.dst;
}

// pytorch prices each collective by the bytes a rank holds when it runs:
// the abstract graph (leave_set_graph.h) prices it at that shard set, where
// a bound from the smallest possible bytes (LowerBound) or from gathered
// bytes alone would fall short on the all_to_all, all_reduce and
// reduce_scatter.
TEST(RemainingCostBoundTest, PyTorchBoundIsExactWhenOneCollectiveIsThePlan) {
  const std::vector<Problem> problems = {
      {{4, 8}, {1024, 512, 64}, "S(0)R", "S(1)R"},              // all_to_all, 4 of 32 shards
      {{4, 8}, {1024, 512, 64}, "P(sum)S(2)", "RS(2)"},         // all_reduce
      {{4, 8}, {1024, 512, 64}, "P(sum)S(2)", "S(0)S(2)"},      // reduce_scatter
      {{2, 4, 8}, {4096, 64, 8}, "S(0)S(1)S(2)", "S(0)S(1)R"},  // all_gather
  };
  for (const Problem& problem : problems) ExpectTight(problem, "pytorch");
}

// A Shard in the wrong place in its tensor dim's order, bound for that same
// tensor dim, leaves and comes back: two all_to_alls or an all_gather and a
// chunk, not one all_to_all.
TEST(RemainingCostBoundTest, ShardThatMustComeBackPaysForBothWays) {
  // Mesh dim 0 holds S(0) first; dst wants mesh dim 1 first. C* = 2: gather
  // mesh dim 0, chunk mesh dim 1, chunk mesh dim 0.
  ExpectTight({{2, 2}, {8, 8}, "S(0)R", "S(0)[1]S(0)[0]"}, "pytorch-const");
  ExpectTight({{4, 2, 2}, {8, 8, 8}, "S(1)S(0)R", "S(1)S(0)[1]S(0)[0]"}, "pytorch-const");
}

// Under nccl and alpha-beta, the native bound at each problem's source: at
// most C* and at least `fraction` of it (half unless a problem says why).
void ExpectNativeBoundsWithinFractionOfCStar(const std::vector<Problem>& problems,
                                             double fraction) {
  for (const std::string model : {"nccl", "alpha-beta"}) {
    for (const Problem& problem : problems) {
      double h = 0, c_star = 0;
      BoundAndCost(problem, model, &h, &c_star, /*native=*/true);
      EXPECT_LE(h, c_star) << model << " " << problem.src << " -> " << problem.dst;
      EXPECT_GE(h, fraction * c_star)
          << model << " " << problem.src << " -> " << problem.dst << ": C* " << c_star;
    }
  }
}

// The native bound of nccl and alpha-beta (native_leave_set_graph.h) prices a plan's one
// collective at its own group and bytes, and the goal exchange that could
// replace it at the bytes its members must receive: on these tensors of
// 128 MiB, where bytes are nearly all of the cost, it is most of C*. A bound
// from latencies alone (every native bound before the abstract graph) stays
// below 30 us here, a few percent of C*.
TEST(RemainingCostBoundTest, NativeBoundSeesEachStepsGroupAndBytes) {
  const std::vector<Problem> problems = {
      {{2, 4}, {8192, 8192}, "S(0)S(0)", "RR"},      // one group all_gather, one host
      {{4, 8}, {8192, 8192}, "S(0)R", "RR"},         // all_gather across 4 hosts
      {{4, 8}, {8192, 8192}, "P(sum)P(sum)", "RR"},  // all_reduce across 4 hosts
      {{4, 8}, {8192, 8192}, "P(sum)R", "S(1)R"},    // reduce_scatter
  };
  ExpectNativeBoundsWithinFractionOfCStar(problems, 0.5);
  // Shards that move to another tensor dim: the exchange that could do it
  // must still bring each member most of its new block
  // (ShardSetBlocks::MovedShardReceipts; without it, h is its latency):
  // 3/4 of a 32 MiB block. Across hosts the bound cannot tell how much of
  // it comes over NVLink (spec §6.4 "bounds"), so it moves at NVLink's and
  // the NIC's bandwidths together: h = 11.8 + 25165824 B / (340 + 48) GB/s
  // = 76.7 us; C* = 256.0 us (chunk 2.5, all_to_all on both mesh dims
  // 139.7, all_gather 113.8): 0.299.
  ExpectNativeBoundsWithinFractionOfCStar({{{4, 8}, {8192, 8192}, "S(0)R", "S(1)R"}}, 0.29);
  // A permute is priced by its routes (spec §6.4), which the bound does not
  // know (a permute may keep any part of a block): its least is one NVLink
  // message, 8.4 + 3.4 = 11.8 us, the receipt bound's too; C* is the
  // transpose permute's 64.5 us (7 NVLink peers).
  ExpectNativeBoundsWithinFractionOfCStar({{{2, 4}, {8192, 8192}, "S(0)S(1)", "S(1)S(0)"}}, 0.18);
}

// Where dst holds a Partial, an R must still be partitioned: a local step,
// but one that writes the whole block (128 MiB here), and the only way to
// that Partial. The native bound prices it at the shard set it runs on; it
// used to see no cost at all.
TEST(RemainingCostBoundTest, NativeBoundPricesThePartitionsDstStillNeeds) {
  const std::vector<Problem> problems = {
      {{2, 4}, {8192, 4096}, "RR", "P(sum)R"},       // the partition is the plan
      {{2, 4}, {8192, 4096}, "RR", "P(sum)P(avg)"},  // two partitions
      {{2, 4}, {8192, 4096}, "S(0)R", "P(sum)R"},    // gathered first
  };
  ExpectNativeBoundsWithinFractionOfCStar(problems, 0.5);
}

// Every layout of a 2x2x2 mesh with R, S(0), S(1), P(sum) and P(avg).
std::vector<DistState> LayoutsOf2x2x2(const DeviceMesh& mesh) {
  const char* placements[] = {"R", "S(0)", "S(1)", "P(sum)", "P(avg)"};
  std::vector<DistState> layouts;
  for (const char* a : placements) {
    for (const char* b : placements) {
      for (const char* c : placements) {
        layouts.push_back(ParseDistState(std::string(a) + b + c, mesh, 2)->state);
      }
    }
  }
  return layouts;
}

// The native abstract graph lists its edges once per thread for each mesh
// rank and destination masks (abstract_distances.h, AbstractEdgeCache): a
// bound built after bounds towards other destinations in one thread equals
// the bound towards the same destination built in a fresh thread, at every
// state.
TEST(RemainingCostBoundTest, NativeBoundsBuiltAfterOthersEqualBoundsBuiltInAFreshThread) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2});
  const std::vector<DistState> layouts = LayoutsOf2x2x2(mesh);
  std::unique_ptr<const BoundCostModel> model =
      (*MakeCostModel("nccl", /*devices_per_host=*/4))
          ->Bind(CostProblem{mesh, {48, 100}, /*itemsize=*/4});
  auto bounds_towards = [&](const DistState& dst) {
    const RemainingCostBound bound(dst, *model, RemainingCostBound::Graph::kNative);
    std::vector<double> h;
    for (const DistState& s : layouts) h.push_back(bound(s));
    return h;
  };
  for (const DistState& dst : layouts) {
    std::vector<double> fresh;
    std::thread([&] { fresh = bounds_towards(dst); }).join();
    EXPECT_EQ(bounds_towards(dst), fresh) << "towards " << dst.ToString();
  }
}

}  // namespace
}  // namespace reshard
