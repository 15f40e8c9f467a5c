// A plan that needs R->P(prod) is no plan to run (harness/prepared_case.h,
// CheckRunnable), which verify and bench both turn into exit code 3.
#include "absl/status/status.h"
#include "cli/case_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/prepared_case.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

TEST(RequestRules, APlanNeedingRToPProdCannotRun) {
  RequestFields r;
  r.mesh = {2};
  r.shape = {4};
  r.src = "R";
  r.dst = "P(prod)";
  absl::StatusOr<Plan> plan = PlanFromFields(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const absl::Status s = CheckRunnable(*plan, DType::kF32);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("needs R->P(prod)"));
  r.dst = "P(sum)";
  plan = PlanFromFields(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckRunnable(*plan, DType::kF32).ok());
}

}  // namespace
}  // namespace reshard
