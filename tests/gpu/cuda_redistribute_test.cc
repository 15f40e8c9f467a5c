// Redistribute (collectives/executor.h) on device memory, checked against the
// ground truth (verify.h's Check, shard_util.h) with one GPU:
//   * every rank of meshes with dims of size > 1, in turn, for plans whose
//     steps on those dims are local (chunk, partition): random verify cases
//     (RandomCase: uneven and empty shards, shard orders, every dtype);
//   * one-rank meshes on the NCCL backend itself, its groups split per dim.
#include <memory>
#include <set>

#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/stores/in_process_store.h"
#include "gtest/gtest.h"
#include "harness/verify_runner.h"
#include "tests/gpu/cuda_test_util.h"
#include "tests/gpu/rank_by_rank.h"

namespace reshard {
namespace {

TEST(CudaRedistribute, LocalPlansOnEveryRankMatchTheGroundTruth) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream.get());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<PreparedCase> cases = LocalOnlyCases(200, 8, 1, 50000);
  ASSERT_EQ(cases.size(), 200u);
  std::set<DType> dtypes;
  for (const PreparedCase& p : cases) {
    const CaseReport r = VerifyRankByRank(p, *engine, CudaTransfer(*engine));
    EXPECT_EQ(r.outcome, Outcome::kPassed) << p.spec_case.CommandLine() << "\n" << r.detail;
    dtypes.insert(p.spec_case.dtype);
  }
  // Every dtype RandomCase draws: all but bool (cuda_copy_engine_test has it).
  EXPECT_EQ(dtypes.size(), 9u);
  EXPECT_TRUE(stream.Sync().ok());
}

TEST(CudaRedistribute, OneRankMeshesOnTheNcclBackendMatchTheGroundTruth) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  std::shared_ptr<Store> store = NewInProcessStore();
  const std::vector<VerifyCase> cases = {
      {{1, 1}, {13, 8}, DType::kF32, "S(0)R", "RS(1)"},
      {{1, 1}, {13, 8}, DType::kBF16, "P(sum)S(1)", "RR"},
      {{1, 1}, {5, 2}, DType::kI32, "RR", "S(0)P(avg)"},
      {{1, 1}, {7, 3}, DType::kI16, "S(0)[1]S(0)[0]", "S(1)S(0)"},
      {{1}, {1}, DType::kU8, "S(0)", "R"},
  };
  int prefix = 0;
  for (const VerifyCase& c : cases) {
    absl::StatusOr<PreparedCase> p = Prepare(c);
    ASSERT_TRUE(p.ok()) << c.CommandLine() << ": " << p.status();
    NcclOptions options;
    options.split_size_one_dims = true;
    options.prefix = absl::StrCat("case", ++prefix);
    absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
        NcclCommunicator::Connect(p->src.mesh(), 0, *store, stream.get(), options);
    ASSERT_TRUE(comm.ok()) << comm.status();
    CudaCopyEngine& engine = static_cast<CudaCopyEngine&>((*comm)->copy_engine());
    std::vector<absl::StatusOr<RankResult>> results;
    results.push_back(RunRankOn(*p, **comm, CudaTransfer(engine)));
    const CaseReport r = Check(*p, results);
    EXPECT_EQ(r.outcome, Outcome::kPassed) << c.CommandLine() << "\n" << r.detail;
  }
  EXPECT_TRUE(stream.Sync().ok());
}

}  // namespace
}  // namespace reshard
