// The stream-ordered allocator under repeated plans: every buffer the executor
// allocates from the copy engine's pool goes back to it (cudaFreeAsync), so
// running the same plans over and over leaves nothing allocated after each
// round, peaks no higher than the first round and reserves no more than the
// second (the pool's layout settles once it has been used). Read from the
// counters of the engine's memory pool; and that pool keeps what is freed
// mapped across synchronisations, which the device's default pool does not.
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

constexpr int64_t kMiB = int64_t{1} << 20;

cudaMemPool_t DevicePool() {
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetMemPool(&pool, device), cudaSuccess);
  return pool;
}

// Allocates 64 MiB on the engine, frees it and synchronises the stream.
void AllocateFreeAndSync(CudaCopyEngine& engine, TestStream& stream) {
  absl::StatusOr<LocalTensor> t = engine.Allocate(DType::kU8, {64 * kMiB});
  ASSERT_TRUE(t.ok()) << t.status();
  *t = LocalTensor();
  ASSERT_TRUE(stream.Sync().ok());
}

TEST(CudaAllocator, TheEnginesOwnPoolKeepsFreedMemoryMappedAcrossSynchronisations) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream.get());
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_NE(engine->pool(), DevicePool());
  AllocateFreeAndSync(*engine, stream);
  EXPECT_EQ(PoolAttribute(engine->pool(), cudaMemPoolAttrUsedMemCurrent), 0u);
  const uint64_t reserved = PoolAttribute(engine->pool(), cudaMemPoolAttrReservedMemCurrent);
  EXPECT_GE(reserved, static_cast<uint64_t>(64 * kMiB));
  // The next plan's buffer is the one kept: nothing more is mapped.
  AllocateFreeAndSync(*engine, stream);
  EXPECT_EQ(PoolAttribute(engine->pool(), cudaMemPoolAttrReservedMemCurrent), reserved);
}

TEST(CudaAllocator, CopiesOfAnEngineShareItsPoolAndATensorMayOutliveThem) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<LocalTensor> survivor;
  {
    absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream.get());
    ASSERT_TRUE(engine.ok()) << engine.status();
    const CudaCopyEngine copy = *engine;
    EXPECT_EQ(copy.pool(), engine->pool());
    survivor = engine->Allocate(DType::kF32, {1024});
    ASSERT_TRUE(survivor.ok()) << survivor.status();
  }
  // The pool is destroyed once its last allocation is freed, not before.
  ASSERT_EQ(cudaMemsetAsync(survivor->data(), 0, 4096, stream.get()), cudaSuccess);
  ASSERT_TRUE(stream.Sync().ok());
  *survivor = LocalTensor();
  ASSERT_TRUE(stream.Sync().ok());
}

TEST(CudaAllocator, WithoutItsOwnPoolTheEngineUsesTheDevicesCurrentPool) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CudaCopyEngine> engine =
      CudaCopyEngine::Create(stream.get(), CudaCopyEngineOptions{/*own_pool=*/false});
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_EQ(engine->pool(), DevicePool());
  uint64_t release_threshold = 0;  // CUDA's default, set again in case
  ASSERT_EQ(
      cudaMemPoolSetAttribute(engine->pool(), cudaMemPoolAttrReleaseThreshold, &release_threshold),
      cudaSuccess);
  // Which is why the engine has a pool of its own: the device's gives back
  // what is free at every synchronisation.
  AllocateFreeAndSync(*engine, stream);
  EXPECT_LT(PoolAttribute(engine->pool(), cudaMemPoolAttrReservedMemCurrent),
            static_cast<uint64_t>(64 * kMiB));
}

TEST(CudaAllocator, RepeatedPlansDoNotGrowThePool) {
  TestStream stream;
  ASSERT_TRUE(stream.creation_status().ok()) << stream.creation_status();
  absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream.get());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const cudaMemPool_t pool = engine->pool();
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
