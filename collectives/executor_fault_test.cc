// A rank that dies or stalls mid-plan: the ranks that share a group with it
// at that step fail with an error naming the step and mesh dim (after at
// most the timeout) instead of hanging; ranks in other groups finish.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "collectives/executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/gloo/thread_ranks.h"
#include "gtest/gtest.h"
#include "harness/faulty_communicator.h"
#include "harness/ground_truth.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

namespace reshard {
namespace {

enum class Death { kCloses, kStalls };

// Mesh (2, 2), S(0)S(1) -> RR: step 1 gathers along mesh dim 0, step 2 along
// mesh dim 1. Rank 3 dies at its second collective (step 2), where its group
// is {2, 3}; ranks 0 and 1 never need it then.
std::vector<absl::Status> RunWithDeath(Death death) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2});
  const DistSpec src = *DistSpec::Parse(mesh, "S(0)S(1)", {8, 8}, DType::kF32);
  const DistSpec dst = *DistSpec::Parse(mesh, "RR", {8, 8}, DType::kF32);
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGraph;
  const Plan plan = *PlanRedistribution(src, dst, options);
  EXPECT_EQ(plan.Trace(), "S(0)S(1)->RS(1)->RR");
  const LocalTensor global = *TestTensor(DType::kF32, {8, 8}, 1, 4);
  GlooOptions gloo;
  gloo.timeout = absl::Seconds(2);
  std::vector<absl::Status> result(4);
  std::vector<absl::Status> connect = RunRanksOnThreads(mesh, gloo, [&](GlooCommunicator& c) {
    LocalTensor t = *ShardOf(global, src, c.coordinate());
    if (c.rank() != 3) {
      result[c.rank()] = Redistribute(t, src, dst, plan, c);
      return absl::OkStatus();
    }
    // A closing rank shuts its sockets as a dead process would; a stalling
    // one keeps them open and simply never takes part again.
    FaultyCommunicator faulty(c, /*fail_at_call=*/1, [&] {
      if (death == Death::kCloses) c.Abort();
    });
    result[3] = Redistribute(t, src, dst, plan, faulty);
    return absl::OkStatus();
  });
  for (const absl::Status& s : connect) EXPECT_TRUE(s.ok()) << s;
  return result;
}

void ExpectNamedFailure(const absl::Status& s) {
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kDeadlineExceeded)
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "step 2 (S(1)->R all_gather on mesh dim 1)")) << s;
}

TEST(ExecutorFaultTest, DeadPeerFailsItsGroup) {
  std::vector<absl::Status> r = RunWithDeath(Death::kCloses);
  EXPECT_TRUE(r[0].ok()) << r[0];
  EXPECT_TRUE(r[1].ok()) << r[1];
  ExpectNamedFailure(r[2]);
  EXPECT_TRUE(absl::StrContains(r[3].message(), "fault injection")) << r[3];
}

TEST(ExecutorFaultTest, StalledPeerTimesOut) {
  std::vector<absl::Status> r = RunWithDeath(Death::kStalls);
  EXPECT_TRUE(r[0].ok()) << r[0];
  EXPECT_TRUE(r[1].ok()) << r[1];
  ExpectNamedFailure(r[2]);
  EXPECT_EQ(r[2].code(), absl::StatusCode::kDeadlineExceeded) << r[2];
}

}  // namespace
}  // namespace reshard
