// Native mode's incumbent (spec §5.2 item 9): pytorch mode's plan bounds the
// native search, which never ends with less than it. Where the search
// completes the incumbent changes nothing (same states, bits and expansions);
// where a limit stops it, the cheapest plan known comes back with a note.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/search/graph_planner.h"
#include "planner/steps/step.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

DistSpec Spec(const DeviceMesh& mesh, const std::string& text, std::vector<int64_t> shape) {
  absl::StatusOr<DistSpec> spec = DistSpec::Parse(mesh, text, std::move(shape), DType::kF32);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return *std::move(spec);
}

// Pytorch mode's plan priced by the native default model: the bound.
double PyTorchCost(const DistSpec& src, const DistSpec& dst) {
  PlanOptions options{PlanMode::kPyTorch};
  options.cost_model = DefaultNativeCostModel();
  absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? plan->cost : 0;
}

void ExpectAPath(const Plan& plan, const DistSpec& src, const DistSpec& dst) {
  ASSERT_EQ(plan.states.size(), plan.steps.size() + 1);
  EXPECT_EQ(plan.states.front(), src.state());
  EXPECT_EQ(plan.states.back(), dst.state());
  double sum = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    EXPECT_EQ(ApplyStep(plan.states[i], plan.steps[i].step), plan.states[i + 1]);
    sum += plan.steps[i].cost;
  }
  EXPECT_EQ(sum, plan.cost);
}

struct AllPartial : ::testing::Test {
  DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2, 2, 2});
  DistSpec src = Spec(mesh, "P(sum)P(sum)P(sum)P(sum)P(sum)", {16, 16, 16, 16, 16});
  DistSpec dst = Spec(mesh, "RRRRR", {16, 16, 16, 16, 16});
};

// The issue-44 case: before the incumbent, the search passed the default
// edge limit and native mode answered "no plan" (exit 3). It still stops
// there, with a cheaper plan than the incumbent found on the way.
TEST_F(AllPartial, PlansAtTheDefaultLimits) {
  absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectAPath(*plan, src, dst);
  EXPECT_LT(plan->cost, PyTorchCost(src, dst));
}

TEST_F(AllPartial, AStoppedSearchReturnsTheCheapestKnownWithANote) {
  for (bool edges : {true, false}) {
    PlanOptions options{PlanMode::kNative};
    (edges ? options.max_search_edges : options.max_expanded_states) = 3;
    absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ExpectAPath(*plan, src, dst);
    EXPECT_EQ(plan->mode, PlanMode::kNative);
    EXPECT_LE(plan->cost, PyTorchCost(src, dst));
    EXPECT_THAT(plan->not_optimal,
                HasSubstr(edges ? "max_search_edges (3)" : "max_expanded_states (3)"));
  }
}

// No pytorch plan (greedy cannot do R -> P, spec §8): no incumbent, so a
// limit is still an error.
TEST(NativeIncumbent, WithoutAPyTorchPlanALimitIsAnError) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2});
  PlanOptions options{PlanMode::kNative};
  options.max_expanded_states = 1;
  absl::StatusOr<Plan> plan =
      PlanRedistribution(Spec(mesh, "S(0)R", {8, 8}), Spec(mesh, "P(sum)S(1)", {8, 8}), options);
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxExpandedStates) << plan.status();
}

// Where the search completes, FindNativePath with pytorch mode's states as
// incumbent returns what it returns without: the same states, cost bits and
// expansions (the incumbent only leaves out keys above its cost, which never
// pop before the destination).
TEST(NativeIncumbent, ChangesNothingWhereTheSearchCompletes) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2});
  const std::vector<int64_t> shape = {24, 12, 40};
  const std::vector<std::string> placements = {"R", "S(0)", "S(1)", "S(2)", "P(sum)"};
  const std::shared_ptr<const CostModel> nccl = DefaultNativeCostModel();
  const std::unique_ptr<const BoundCostModel> model = nccl->Bind(CostProblem{mesh, shape, 4});
  std::mt19937 rng(44);
  int with_incumbent = 0;
  for (int i = 0; i < 200; ++i) {
    std::string text[2];
    for (std::string& t : text) {
      for (int m = 0; m < 3; ++m) t += placements[rng() % placements.size()];
    }
    const DistSpec src = Spec(mesh, text[0], shape);
    const DistSpec dst = Spec(mesh, text[1], shape);
    PlanOptions pytorch{PlanMode::kPyTorch};
    pytorch.cost_model = nccl;
    absl::StatusOr<Plan> incumbent = PlanRedistribution(src, dst, pytorch);
    if (!incumbent.ok()) continue;
    ++with_incumbent;
    const SearchLimits limits;
    absl::StatusOr<GraphPath> plain = FindNativePath(mesh, shape, DType::kF32, src.state(),
                                                     dst.state(), *model, limits, INT64_MAX);
    absl::StatusOr<GraphPath> bounded =
        FindNativePath(mesh, shape, DType::kF32, src.state(), dst.state(), *model, limits,
                       INT64_MAX, incumbent->states);
    ASSERT_TRUE(plain.ok() && bounded.ok()) << text[0] << " -> " << text[1];
    EXPECT_EQ(bounded->states, plain->states) << text[0] << " -> " << text[1];
    EXPECT_EQ(bounded->cost, plain->cost) << text[0] << " -> " << text[1];
    EXPECT_EQ(bounded->expanded, plain->expanded) << text[0] << " -> " << text[1];
    EXPECT_EQ(bounded->stopped, SearchLimit::kNone);
    EXPECT_LE(bounded->cost, incumbent->cost);
  }
  EXPECT_GT(with_incumbent, 100);  // most pairs have a pytorch plan
}

}  // namespace
}  // namespace reshard
