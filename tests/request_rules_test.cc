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
  const DeviceMesh mesh = *DeviceMesh::Create(r.mesh);
  const absl::Status s = CheckRunnable(*plan, mesh, DType::kF32);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("needs R->P(prod)"));
  r.dst = "P(sum)";
  plan = PlanFromFields(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckRunnable(*plan, mesh, DType::kF32).ok());
}

// The rule is RunsOnData's (planner/steps/step.h): on a size-1 mesh dim the
// partition moves nothing, so the native plan that uses one runs; without
// the mesh, CheckRunnable cannot tell and refuses it.
TEST(RequestRules, RToPProdOnASizeOneMeshDimCanRun) {
  RequestFields r;
  r.mesh = {1, 2, 4};
  r.shape = {7};
  r.src = "RP(prod)S(0)";
  r.dst = "S(0)[0]S(0)[1]R";
  r.mode = "native";
  absl::StatusOr<Plan> plan = PlanFromFields(r, FieldStyle::kFlag);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const DeviceMesh mesh = *DeviceMesh::Create(r.mesh);
  bool partitions_size_one_dim = false;
  for (const TransformInfo& info : plan->steps) {
    partitions_size_one_dim |= info.step.kind == StepKind::kPartition &&
                               info.step.dst.op() == ReduceOp::kProd &&
                               mesh.GroupSize(info.step.group) == 1;
  }
  ASSERT_TRUE(partitions_size_one_dim) << plan->Trace();
  EXPECT_TRUE(CheckRunnable(*plan, mesh, DType::kF32).ok());
  const DeviceMesh wide = *DeviceMesh::Create({2, 2, 4});
  EXPECT_EQ(CheckRunnable(*plan, wide, DType::kF32).code(), absl::StatusCode::kUnimplemented);
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
