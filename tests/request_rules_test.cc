// A plan that needs R->P(prod) is no plan to run (harness/prepared_case.h,
// CheckRunnable), which verify and bench both turn into exit code 3; and
// layouts with a Partial on bool data are no request (CheckPartialsReducible,
// exit code 2).
#include <string>

#include "absl/status/status.h"
#include "formats/request_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/prepared_case.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"

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

// The rule on the layouts, before any plan: bool data holds no pending
// reduction; its message led by the dtype as the caller's user named it.
TEST(RequestRules, PartialsOnBoolDataAreRefused) {
  const DeviceMesh mesh = *DeviceMesh::Create({2});
  const DistSpec bool_partial = *DistSpec::Parse(mesh, "P(sum)", {4}, DType::kBool);
  const DistSpec bool_shard = *DistSpec::Parse(mesh, "S(0)", {4}, DType::kBool);
  const absl::Status s = CheckPartialsReducible(bool_shard, bool_partial, "--dtype");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::StartsWith("--dtype bool: "));
  EXPECT_EQ(CheckPartialsReducible(bool_partial, bool_shard, "dtype").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckPartialsReducible(bool_shard, bool_shard, "dtype").ok());
  const DistSpec u8_partial = *DistSpec::Parse(mesh, "P(max)", {4}, DType::kU8);
  EXPECT_TRUE(CheckPartialsReducible(u8_partial, u8_partial, "dtype").ok());
}

}  // namespace
}  // namespace reshard
