// The greedy planner's S -> P on size-1 mesh dims (spec §8). PyTorch plans
// such a step and executes it as nothing (it skips size-1 mesh dims); the
// reference oracle has no collective name for it and fails, so the expected
// plans here are derived by hand:
//   mesh (1, 4), S(0)S(1) -> P(sum)R, greedy. The source has 4 shards, so
//   pass one runs, last mesh dim first: mesh dim 1 targets R (S(1) -> R,
//   all_gather); mesh dim 0 targets P(sum) (S(0) -> P(sum), a partition on a
//   group of one rank). Pass two finds nothing left.
//   Cost: the all_gather costs what it costs in S(0)S(1) -> S(0)R, a plan of
//   that one step; the S -> P step is local and costs 0 in both models (§6).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"
#include "planner/steps/step.h"

namespace reshard {
namespace {

Plan Greedy(const std::vector<int64_t>& mesh_sizes, const std::string& src, const std::string& dst,
            const std::string& cost_model) {
  const DeviceMesh mesh = *DeviceMesh::Create(mesh_sizes);
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGreedy;
  options.cost_model = *MakeCostModel(cost_model, /*devices_per_host=*/8);
  absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, src, {8, 8}, DType::kF32),
                         *DistSpec::Parse(mesh, dst, {8, 8}, DType::kF32), options);
  EXPECT_TRUE(plan.ok()) << src << " -> " << dst << ": " << plan.status();
  return plan.ok() ? *plan : Plan();
}

TEST(GreedyPlannerTest, ShardToPartialOnSizeOneMeshDimIsALocalStep) {
  for (const std::string model : {"pytorch", "pytorch-const"}) {
    const Plan plan = Greedy({1, 4}, "S(0)S(1)", "P(sum)R", model);
    EXPECT_EQ(plan.algorithm, Algorithm::kGreedy);
    EXPECT_EQ(plan.Trace(), "S(0)S(1)->S(0)R->P(sum)R");
    ASSERT_EQ(plan.steps.size(), 2u);
    EXPECT_EQ(plan.steps[0].step.kind, StepKind::kAllGather);
    EXPECT_EQ(plan.steps[1].step.mesh_dim(), 0);
    EXPECT_EQ(plan.steps[1].step.kind, StepKind::kPartition);
    EXPECT_EQ(plan.steps[1].cost, 0.0);
    const Plan gather_only = Greedy({1, 4}, "S(0)S(1)", "S(0)R", model);
    ASSERT_EQ(gather_only.steps.size(), 1u);
    EXPECT_EQ(plan.steps[0].cost, gather_only.steps[0].cost) << model;
    EXPECT_EQ(plan.cost, gather_only.cost) << model;
  }
}

TEST(GreedyPlannerTest, ShardToPartialElsewhereHasNoGreedyPlan) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 4});
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGreedy;
  absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, "S(0)S(1)", {8, 8}, DType::kF32),
                         *DistSpec::Parse(mesh, "P(sum)R", {8, 8}, DType::kF32), options);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound) << plan.status();
}

TEST(GreedyPlannerTest, ShardToPartialIsAStepOnlyOnAOneRankGroup) {
  const Placement s0 = Placement::Shard(0), r = Placement::Replicate();
  const Placement sum = Placement::Partial(ReduceOp::kSum),
                  max = Placement::Partial(ReduceOp::kMax);
  EXPECT_EQ(StepKindFor(s0, sum, 1), StepKind::kPartition);
  EXPECT_EQ(StepKindFor(s0, sum, 2), std::nullopt);
  EXPECT_EQ(StepKindFor(sum, max, 1), std::nullopt);
  EXPECT_EQ(StepKindFor(r, r, 1), std::nullopt);
  EXPECT_EQ(StepKindFor(r, sum, 4), StepKind::kPartition);
  EXPECT_EQ(StepKindFor(sum, s0, 4), StepKind::kReduceScatter);
  // The one legality rule agrees (step.h, CheckStep).
  const DeviceMesh mesh = *DeviceMesh::Create({1, 4});
  const DistState state = DistState::WithDefaultOrder({s0, r});
  const Step size_one{MeshDimSet::Single(0), StepKind::kPartition, s0, sum};
  EXPECT_TRUE(CheckStep(state, size_one, mesh, 2).ok());
  const DistState wide = DistState::WithDefaultOrder({r, s0});
  const Step size_four{MeshDimSet::Single(1), StepKind::kPartition, s0, sum};
  EXPECT_FALSE(CheckStep(wide, size_four, mesh, 2).ok());
}

}  // namespace
}  // namespace reshard
