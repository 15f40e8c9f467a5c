// ValidatePlanRequest (planner/plan_request.h), the one place a rule about a
// request is checked, and the typed limits PlanRedistribution reports
// (planner/steps/plan_limit.h). Messages name fields, never CLI flags.
#include "planner/plan_request.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/planner.h"
#include "planner/steps/plan_limit.h"
#include "tests/util/spec_helpers.h"

namespace reshard {
namespace {

using test_util::Mesh;
using test_util::Spec;

PlanRequest Request(const char* src, const char* dst) {
  const DeviceMesh mesh = Mesh({2, 2});
  return PlanRequest{Spec(mesh, src, {8, 8}), Spec(mesh, dst, {8, 8}), PlanOptions()};
}

void ExpectInvalidNaming(const PlanRequest& request, absl::string_view field) {
  const absl::Status s = ValidatePlanRequest(request);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), absl::StrCat(field, ": "))) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "--")) << "names a CLI flag: " << s;
}

TEST(ValidatePlanRequestTest, AValidRequestPasses) {
  EXPECT_TRUE(ValidatePlanRequest(Request("S(0)S(1)", "RR")).ok());
}

TEST(ValidatePlanRequestTest, DestinationOnAnotherMeshNamesDst) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.dst = Spec(Mesh({4}), "R", {8, 8});
  ExpectInvalidNaming(r, "dst");
}

TEST(ValidatePlanRequestTest, DestinationOfAnotherShapeOrDtypeNamesDst) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.dst = Spec(Mesh({2, 2}), "RR", {8, 9});
  ExpectInvalidNaming(r, "dst");
  r.dst = Spec(Mesh({2, 2}), "RR", {8, 8}, DType::kBF16);
  ExpectInvalidNaming(r, "dst");
}

TEST(ValidatePlanRequestTest, LimitsBelowOneNameTheirField) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.options.max_memory = 0;
  ExpectInvalidNaming(r, "max_memory");
  r.options.max_memory = 1 << 20;
  r.options.max_expanded_states = 0;
  ExpectInvalidNaming(r, "max_expanded_states");
}

TEST(ValidatePlanRequestTest, CoordinateOutsideTheMeshNamesCoordinate) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.options.coordinate = {0, 2};
  ExpectInvalidNaming(r, "coordinate");
  r.options.coordinate = {0};
  ExpectInvalidNaming(r, "coordinate");
}

TEST(ValidatePlanRequestTest, NativeModeWithACompatModelNamesModeAndModel) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.options.mode = PlanMode::kNative;
  r.options.cost_model = DefaultCostModel();  // "pytorch": compat steps only
  ExpectInvalidNaming(r, "mode");
  EXPECT_TRUE(absl::StrContains(ValidatePlanRequest(r).message(), "`cost_model`"));
}

TEST(ValidatePlanRequestTest, GreedyInNativeModeNamesAlgorithm) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.options.mode = PlanMode::kNative;
  r.options.algorithm = Algorithm::kGreedy;
  ExpectInvalidNaming(r, "algorithm");
}

// Spec §13: the default rule, in one function.
TEST(ResolvedModeTest, TheModelAndTheAlgorithmDecideAnAutoMode) {
  PlanOptions options;
  EXPECT_EQ(ResolvedMode(options), PlanMode::kNative);
  EXPECT_EQ(ResolvedCostModel(options)->name(), "nccl");
  options.algorithm = Algorithm::kGreedy;  // greedy is pytorch mode's planner
  EXPECT_EQ(ResolvedMode(options), PlanMode::kPyTorch);
  EXPECT_EQ(ResolvedCostModel(options)->name(), "pytorch");
  options.algorithm = Algorithm::kAuto;
  options.cost_model = *MakeCostModel("pytorch-const");
  EXPECT_EQ(ResolvedMode(options), PlanMode::kPyTorch);
  options.mode = PlanMode::kNative;  // an explicit mode wins
  EXPECT_EQ(ResolvedMode(options), PlanMode::kNative);
  EXPECT_EQ(DefaultCostModelName(PlanMode::kNative), "nccl");
  EXPECT_EQ(DefaultCostModelName(PlanMode::kPyTorch), "pytorch");
}

TEST(PlanLimitTest, AStateBoundHitIsTypedAsMaxExpandedStates) {
  PlanRequest r = Request("S(0)[1]S(0)[0]", "S(1)[1]S(1)[0]");  // several steps
  r.options.mode = PlanMode::kPyTorch;
  r.options.max_expanded_states = 1;
  absl::StatusOr<Plan> plan = PlanRedistribution(r);
  ASSERT_TRUE(absl::IsResourceExhausted(plan.status())) << plan.status();
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxExpandedStates) << plan.status();
  EXPECT_FALSE(absl::StrContains(plan.status().message(), "--")) << plan.status();
}

TEST(PlanLimitTest, AMemoryLimitHitIsTypedAsMaxMemory) {
  PlanRequest r = Request("S(0)S(1)", "RR");
  r.options.max_memory = 64;  // the source shard alone is 4x4 f32 = 64 bytes, the result 256
  absl::StatusOr<Plan> plan = PlanRedistribution(r);
  ASSERT_TRUE(absl::IsResourceExhausted(plan.status())) << plan.status();
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxMemory) << plan.status();
}

TEST(PlanLimitTest, OtherStatusesCarryNoLimit) {
  EXPECT_EQ(PlanLimitOf(absl::ResourceExhaustedError("out of memory")), std::nullopt);
  EXPECT_EQ(PlanLimitOf(absl::OkStatus()), std::nullopt);
}

}  // namespace
}  // namespace reshard
