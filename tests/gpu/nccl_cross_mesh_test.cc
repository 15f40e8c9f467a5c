// A cross-mesh move (spec §14) on NCCL, as far as one GPU can take it: NCCL
// allows one rank per device in a communicator, so the move has one
// participant, global rank 5, a source and a destination rank at once (its
// one-rank meshes remeshed), with the union, source-mesh and
// destination-mesh communicators of ConnectNcclAcross
// (collectives/nccl/nccl_cross_mesh.h), through NCCL's one-rank paths
// (split_size_one_dims) or the local copies. CheckAcross (what `reshard
// verify` checks cross-mesh moves with) compares the result with the ground
// truth and the crossing's counters with the plan. Moves among several GPUs
// (ranks that only send or only receive) need a machine with several; the
// same code runs them on Gloo (collectives/cross_mesh_executor_test, reshard verify).
#include "collectives/nccl/nccl_cross_mesh.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/cross_mesh_executor.h"
#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/stores/in_process_store.h"
#include "gtest/gtest.h"
#include "harness/cross_mesh_case.h"
#include "harness/cross_mesh_runner.h"
#include "harness/ground_truth.h"
#include "tests/gpu/cuda_test_util.h"

namespace reshard {
namespace {

constexpr int64_t kRank = 5;

// A move of a 7 x 5 tensor whose only participant is global rank 5.
CrossMeshCase Move(std::vector<int64_t> mesh, std::string src, std::vector<int64_t> dst_mesh,
                   std::string dst, DType dtype) {
  CrossMeshCase c;
  c.mesh = std::move(mesh);
  c.dst_mesh = std::move(dst_mesh);
  c.src_ranks = {kRank};
  c.dst_ranks = {kRank};
  c.shape = {7, 5};
  c.dtype = dtype;
  c.src = std::move(src);
  c.dst = std::move(dst);
  c.data_seed = 3;
  return c;
}

// GetParam(): NcclOptions::split_size_one_dims (through NCCL, or local copies).
class NcclCrossMeshTest : public testing::TestWithParam<bool> {};

TEST_P(NcclCrossMeshTest, OneParticipantMovesItsBlockThroughItsThreeCommunicators) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  std::shared_ptr<Store> store = NewInProcessStore();
  // A Shard source to a Replicate destination, a Partial source to a Shard,
  // a Replicate source to a Partial destination.
  const std::vector<CrossMeshCase> moves = {
      Move({1, 1}, "S(0)S(1)", {1}, "R", DType::kF32),
      Move({1}, "P(sum)", {1, 1}, "RS(1)", DType::kI32),
      Move({1, 1}, "RR", {1}, "P(max)", DType::kBF16),
  };
  int prefix = 0;
  for (const CrossMeshCase& c : moves) {
    absl::StatusOr<CrossMeshRequest> r = RequestOf(c);
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMeshCase(c);
    ASSERT_TRUE(r.ok() && plan.ok()) << c.CommandLine() << ": " << plan.status();
    NcclOptions options;
    options.split_size_one_dims = GetParam();
    options.prefix = absl::StrCat("move", ++prefix);
    absl::StatusOr<NcclAcross> comms =
        ConnectNcclAcross(*plan, kRank, *store, stream.get(), options);
    ASSERT_TRUE(comms.ok()) << comms.status();
    ASSERT_NE(comms->src, nullptr);
    ASSERT_NE(comms->dst, nullptr);
    EXPECT_EQ(comms->union_comm->mesh().num_ranks(), 1);
    EXPECT_EQ(comms->src->mesh().sizes(), c.mesh);
    EXPECT_EQ(comms->dst->mesh().sizes(), c.dst_mesh);

    const LocalTensor global = *TestTensor(c.dtype, c.shape, c.data_seed, 1);
    absl::StatusOr<LocalTensor> shard =
        ShardOf(global, r->src, r->src.mesh().Coordinate(0), c.data_seed);
    ASSERT_TRUE(shard.ok()) << shard.status();
    CudaCopyEngine& engine = static_cast<CudaCopyEngine&>(comms->union_comm->copy_engine());
    absl::StatusOr<LocalTensor> t = ToDevice(engine, *shard);
    ASSERT_TRUE(t.ok()) << t.status();
    std::vector<ParticipantResult> results(1);
    results[0].status = RedistributeAcross(*t, *r, *plan, kRank, comms->src.get(), comms->dst.get(),
                                           *comms->union_comm, &results[0].stats);
    ASSERT_TRUE(results[0].status.ok()) << c.CommandLine() << ": " << results[0].status;
    absl::StatusOr<LocalTensor> back = ToHost(engine, *t);
    ASSERT_TRUE(back.ok()) << back.status();
    results[0].tensor = *std::move(back);
    const CaseReport report = CheckAcross(*r, *plan, global, c.data_seed, results);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << c.CommandLine() << "\n" << report.detail;
  }
  EXPECT_TRUE(stream.Sync().ok());
}

INSTANTIATE_TEST_SUITE_P(NcclOrLocal, NcclCrossMeshTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "ThroughNccl" : "LocalCopies";
                         });

// A rank outside the move joins nothing: InvalidArgument before any NCCL call.
TEST(NcclCrossMesh, ARankOutsideTheMoveIsRefused) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMeshCase(Move({1}, "R", {1}, "R", DType::kF32));
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::shared_ptr<Store> store = NewInProcessStore();
  absl::StatusOr<NcclAcross> comms =
      ConnectNcclAcross(*plan, kRank + 1, *store, stream.get(), NcclOptions());
  EXPECT_EQ(comms.status().code(), absl::StatusCode::kInvalidArgument) << comms.status();
}

}  // namespace
}  // namespace reshard
