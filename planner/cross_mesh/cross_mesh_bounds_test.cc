// Cross-mesh moves are bounded by their ranks and slices (issue 44: 2^24
// destination ranks took 59 s and 5.5 GB; cross_mesh_plan.h,
// kMaxCrossingRanks): past the bound, ResourceExhausted naming dst_ranks at
// once; at it, a plan. Nor does a huge devices_per_host cost memory by rail.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/layout/dist_spec.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

CrossMeshRequest Move(int64_t dst_ranks) {
  const DistSpec src =
      *DistSpec::Parse(*DeviceMesh::Create({4, 2}), "S(0)S(1)", {16, 12}, DType::kF32);
  const DistSpec dst =
      *DistSpec::Parse(*DeviceMesh::Create({dst_ranks}), "S(1)", {16, 12}, DType::kF32);
  return CrossMeshRequest{src, dst, {}, {}};
}

TEST(CrossMeshBoundsTest, AMoveOfMoreRanksThanTheBoundIsRefusedNamingDstRanks) {
  for (int64_t n : {kMaxCrossingRanks - 7, int64_t{1} << 24}) {
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(Move(n), PlanOptions());
    EXPECT_TRUE(absl::IsResourceExhausted(plan.status())) << n << ": " << plan.status();
    EXPECT_THAT(plan.status().message(), HasSubstr("dst_ranks: the move names"));
    EXPECT_THAT(plan.status().message(), HasSubstr(std::to_string(kMaxCrossingRanks)));
  }
}

TEST(CrossMeshBoundsTest, AMoveAtTheBoundPlans) {
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(Move(kMaxCrossingRanks - 8), PlanOptions());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->dst_ranks.size(), static_cast<size_t>(kMaxCrossingRanks - 8));
  // 12 columns over 2^17 ranks: only the 12 ranks holding a column receive.
  EXPECT_LE(plan->routes.size(), 48u);
}

// Ranks far apart on hosts of 2^31 - 1 devices (a user's bound on the
// flag, not a machine): NIC tables by (host, rail) would hold billions of
// slots, and planning threw bad_alloc or took 137 s and 23 GB. The link
// loads count such NICs sparsely and staging over rails skips them.
TEST(CrossMeshBoundsTest, HugeHostsPlanWithoutTablesByRail) {
  const DistSpec src = *DistSpec::Parse(*DeviceMesh::Create({2}), "S(0)", {64, 64}, DType::kF32);
  const DistSpec dst = *DistSpec::Parse(*DeviceMesh::Create({2}), "S(1)", {64, 64}, DType::kF32);
  for (int64_t per_host : {int64_t{500000000}, int64_t{2147483647}}) {
    PlanOptions options{PlanMode::kNative};
    options.cost_model = *MakeCostModel("nccl", per_host);
    absl::StatusOr<CrossMeshPlan> plan =
        PlanCrossMesh({src, dst, {0, 1}, {per_host, 2 * per_host}}, options);
    ASSERT_TRUE(plan.ok()) << per_host << ": " << plan.status();
    EXPECT_TRUE(plan->cost.has_value());
  }
}

}  // namespace
}  // namespace reshard
