// The stream-ordered allocator under repeated plans: every buffer the executor
// allocates (cudaMallocAsync) goes back to the pool (cudaFreeAsync), so
// running the same plans over and over leaves nothing allocated after each
// round, peaks no higher than the first round and reserves no more than the
// second (the pool's layout settles once it has been used). Read from the
// device's current memory pool's counters.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "collectives/nccl/cuda_copy_engine.h"
#include "gtest/gtest.h"
#include "tests/gpu/cuda_test_util.h"
#include "tests/gpu/local_only_communicator.h"
#include "tests/gpu/rank_by_rank.h"

namespace reshard {
namespace {

uint64_t PoolAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, attr, &value), cudaSuccess);
  return value;
}

TEST(CudaAllocator, RepeatedPlansDoNotGrowThePool) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetMemPool(&pool, device), cudaSuccess);
  // Keep freed memory in the pool (as a caching allocator does) so that its
  // reserved size shows growth instead of being trimmed at every sync.
  uint64_t keep_all = UINT64_MAX;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), cudaSuccess);

  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream.get());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<PreparedCase> cases = LocalOnlyCases(20, 8, 1000, 20000);
  ASSERT_EQ(cases.size(), 20u);
  const Transfer transfer = CudaTransfer(*engine);

  const uint64_t used_before = PoolAttribute(pool, cudaMemPoolAttrUsedMemCurrent);
  uint64_t reserved_after_warmup = 0, peak_after_first = 0;
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    for (const PreparedCase& p : cases) {
      for (int64_t rank = 0; rank < p.src.mesh().num_ranks(); ++rank) {
        LocalOnlyCommunicator comm(p.src.mesh(), rank, *engine);
        absl::StatusOr<RankResult> r = RunRankOn(p, comm, transfer);
        ASSERT_TRUE(r.ok()) << p.spec_case.CommandLine() << ": " << r.status();
      }
    }
    ASSERT_TRUE(stream.Sync().ok());
    // Every tensor of the round is gone: nothing is left allocated.
    EXPECT_EQ(PoolAttribute(pool, cudaMemPoolAttrUsedMemCurrent), used_before) << "round " << round;
    if (round == 0) {
      peak_after_first = PoolAttribute(pool, cudaMemPoolAttrUsedMemHigh);
      EXPECT_GT(peak_after_first, used_before) << "the plans allocated nothing from the pool";
    }
    // The pool's layout settles in the second round (the first starts from
    // an empty pool), so that is the reserved size to stay within.
    if (round == 1) reserved_after_warmup = PoolAttribute(pool, cudaMemPoolAttrReservedMemCurrent);
  }
  EXPECT_LE(PoolAttribute(pool, cudaMemPoolAttrReservedMemCurrent), reserved_after_warmup);
  // The same allocations in the same order: the peak in use never moves.
  EXPECT_EQ(PoolAttribute(pool, cudaMemPoolAttrUsedMemHigh), peak_after_first);
}

}  // namespace
}  // namespace reshard
