// Rules shared by every command (issue 20): --algorithm greedy without a mode
// is pytorch mode (cli/case_json.h, ModeOf), with mode native it is bad
// input; and a plan that needs R->P(prod) is no plan to run
// (collectives/verify/verify.h, CheckRunnable), which verify and bench both
// turn into exit code 3.
#include "absl/status/status.h"
#include "cli/case_json.h"
#include "collectives/verify/verify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

PlanRequest GreedyOnASizeOneDim() {
  PlanRequest r;  // README's example: a greedy S -> P on a mesh dim of size 1
  r.mesh = {1, 4};
  r.shape = {8, 8};
  r.src = "S(0)S(1)";
  r.dst = "P(sum)R";
  r.algorithm = "greedy";
  return r;
}

TEST(RequestRules, GreedyWithoutAModeIsPytorchMode) {
  PlanRequest r = GreedyOnASizeOneDim();
  EXPECT_EQ(ModeOf(r), "pytorch");
  r.mode = "auto";
  EXPECT_EQ(ModeOf(r), "pytorch");
  EXPECT_EQ(ModelNameOf(r), "pytorch");
  absl::StatusOr<Plan> plan = PlanFromRequest(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->mode, PlanMode::kPyTorch);
  EXPECT_EQ(plan->Trace(), "S(0)S(1)->S(0)R->P(sum)R");
}

TEST(RequestRules, GreedyInNativeModeIsBadInput) {
  PlanRequest r = GreedyOnASizeOneDim();
  r.mode = "native";
  EXPECT_EQ(ModeOf(r), "native");
  absl::StatusOr<Plan> plan = PlanFromRequest(r, FieldStyle::kFlag);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
  EXPECT_THAT(plan.status().message(), HasSubstr("greedy"));
}

TEST(RequestRules, OtherAlgorithmsLeaveTheModeToTheCostModel) {
  PlanRequest r = GreedyOnASizeOneDim();
  r.algorithm = "auto";
  EXPECT_EQ(ModeOf(r), "auto");
  EXPECT_EQ(ModelNameOf(r), "alpha-beta");
}

TEST(RequestRules, APlanNeedingRToPProdCannotRun) {
  PlanRequest r;
  r.mesh = {2};
  r.shape = {4};
  r.src = "R";
  r.dst = "P(prod)";
  absl::StatusOr<Plan> plan = PlanFromRequest(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const absl::Status s = CheckRunnable(*plan, DType::kF32);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("needs R->P(prod)"));
  r.dst = "P(sum)";
  plan = PlanFromRequest(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckRunnable(*plan, DType::kF32).ok());
}

}  // namespace
}  // namespace reshard
