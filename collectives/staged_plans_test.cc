// Issue 43's repros whose native plans stage over rails (spec §11.2),
// planned under the nccl model (hosts of 8) and run on Gloo with every rank a
// thread: each rank ends with its shard of the destination, and its counters
// are BytesOfStep's for every step. C2 at its size; C3 and C6 at 4096 x 4096,
// where their plans still stage (at 8192 x 8192 and 16384 x 8192 they take
// 30-40 s each here).
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/planner.h"
#include "tests/util/executor_harness.h"

namespace reshard {
namespace {

struct Repro {
  const char* name;
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  const char* src;
  const char* dst;
};

void PlanStagedAndRun(const Repro& r) {
  SCOPED_TRACE(r.name);
  const DistSpec src = Spec(r.mesh, r.src, r.shape, DType::kBF16);
  const DistSpec dst = Spec(r.mesh, r.dst, r.shape, DType::kBF16);
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *MakeCostModel("nccl", 8);
  const absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  bool staged = false;
  for (const TransformInfo& info : plan->steps) staged |= info.step.staging.staged();
  ASSERT_TRUE(staged) << plan->Trace();
  const RunResult run = Execute(src, dst, *plan);
  ExpectDstShards(src, dst, run);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    ExpectBytesOfStep(src, plan->states[i], plan->steps[i].step, static_cast<int64_t>(i), run,
                      DType::kBF16);
  }
}

TEST(StagedPlansTest, C2OrderSwapOnEightHosts) {
  PlanStagedAndRun({"C2", {8, 8}, {4096, 4096}, "S(0)[1]S(0)[0]", "S(0)S(0)"});
}

TEST(StagedPlansTest, C3RowsToGpusOnTwoHosts) {
  PlanStagedAndRun({"C3", {2, 8}, {4096, 4096}, "S(0)R", "RS(0)"});
}

TEST(StagedPlansTest, C6TransposeOnEightHosts) {
  PlanStagedAndRun({"C6", {8, 8}, {4096, 4096}, "S(0)S(1)", "S(1)S(0)"});
}

}  // namespace
}  // namespace reshard
