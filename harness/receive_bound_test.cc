// ReceiveLowerBound (harness/receive_bound.h): the part of each rank's
// destination block it does not hold, worked out by hand per case.
#include "harness/receive_bound.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"

namespace reshard {
namespace {

ReceiveBound Bound(std::vector<int64_t> mesh_sizes, std::vector<int64_t> shape,
                   const std::string& src, const std::string& dst) {
  DeviceMesh mesh = *DeviceMesh::Create(mesh_sizes);
  return ReceiveLowerBound(*DistSpec::Parse(mesh, src, shape, DType::kF32),
                           *DistSpec::Parse(mesh, dst, shape, DType::kF32));
}

TEST(ReceiveBoundTest, GatherNeedsEverythingButTheOwnShard) {
  // 8 rows over 4 ranks: each holds 2 and needs the other 6 (4 bytes each).
  ReceiveBound b = Bound({4}, {8}, "S(0)", "R");
  EXPECT_EQ(b.max_bytes, 6 * 4);
  EXPECT_EQ(b.total_bytes, 4 * 6 * 4);
}

TEST(ReceiveBoundTest, UnevenShardsCountEachRanksOwnBlock) {
  // torch.chunk: 5 rows over 4 ranks are 2, 2, 1, 0; rank 3 needs all 5.
  ReceiveBound b = Bound({4}, {5}, "S(0)", "R");
  EXPECT_EQ(b.max_bytes, 5 * 4);
  EXPECT_EQ(b.total_bytes, (3 + 3 + 4 + 5) * 4);
}

TEST(ReceiveBoundTest, OverlappingBlocksAreNotReceived) {
  // Rank (0,0) holds rows 0-31 (all columns) and wants columns 0-31 (all
  // rows): it has the 32x32 corner and needs 64*32 - 32*32 elements.
  ReceiveBound b = Bound({2, 2}, {64, 64}, "S(0)R", "RS(1)");
  EXPECT_EQ(b.max_bytes, (64 * 32 - 32 * 32) * 4);
}

TEST(ReceiveBoundTest, NothingToReceiveWhenTheBlockIsHeld) {
  EXPECT_EQ(Bound({2, 2}, {8, 8}, "RR", "S(0)S(1)").max_bytes, 0);
  EXPECT_EQ(Bound({4}, {8}, "S(0)", "S(0)").max_bytes, 0);
}

TEST(ReceiveBoundTest, PartialSourcesHoldNothingPartialTargetsNeedNothing) {
  // P(sum) -> S(0): a rank's 4 rows need the other rank's contributions.
  EXPECT_EQ(Bound({2}, {8}, "P(sum)", "S(0)").max_bytes, 4 * 4);
  // Any values that reduce right will do: the own shard and zeros.
  EXPECT_EQ(Bound({2}, {8}, "S(0)", "P(sum)").max_bytes, 0);
}

// Issue 44: a Partial destination group must together hold the tensor's
// values on its block; this read 0 for every Partial destination.
TEST(ReceiveBoundTest, PartialTargetGroupsReceiveWhatNoneOfThemHolds) {
  // 2x2, 8x8: ranks (i,0) and (i,1) both hold addend i (64 elements) and
  // need the other's addend between them: 32 elements each at least.
  ReceiveBound b = Bound({2, 2}, {8, 8}, "P(sum)R", "RP(sum)");
  EXPECT_EQ(b.max_bytes, 32 * 4);
  EXPECT_EQ(b.total_bytes, 2 * 64 * 4);
  // (i,0) and (i,1) hold the same rows i (one block, counted once): the
  // other 32 elements, 16 each.
  b = Bound({2, 2}, {8, 8}, "S(0)R", "RP(sum)");
  EXPECT_EQ(b.max_bytes, 16 * 4);
  EXPECT_EQ(b.total_bytes, 2 * 32 * 4);
  // A group holding every addend of its block, or the tensor, needs nothing.
  EXPECT_EQ(Bound({2, 2}, {8, 8}, "P(sum)R", "P(sum)R").total_bytes, 0);
  EXPECT_EQ(Bound({2, 2}, {8, 8}, "RR", "RP(sum)").total_bytes, 0);
}

// Cross-mesh (ReceiveLowerBoundAcross): a destination rank that is also a
// source rank keeps what its source block holds of its new one. S(0) of 8
// rows on ranks {0, 1} to S(0) on ranks {0, 5}: rank 0 keeps rows 0-3,
// rank 5 holds nothing and needs rows 4-7; rank 1 only sends.
TEST(ReceiveBoundTest, AcrossMeshesOnlySharedRanksKeepTheirOverlap) {
  DeviceMesh two = *DeviceMesh::Create({2});
  const DistSpec src = *DistSpec::Parse(two, "S(0)", {8}, DType::kF32);
  ReceiveBound b = ReceiveLowerBoundAcross(src, src, {0, 1}, {0, 5});
  EXPECT_EQ(b.max_bytes, 4 * 4);
  EXPECT_EQ(b.total_bytes, 4 * 4);
  // On disjoint ranks every destination rank receives its whole block.
  b = ReceiveLowerBoundAcross(src, src, {0, 1}, {2, 3});
  EXPECT_EQ(b.total_bytes, 8 * 4);
  // With both lists 0 .. n - 1 it is the one-mesh bound.
  EXPECT_EQ(ReceiveLowerBoundAcross(src, src, {0, 1}, {0, 1}).total_bytes, 0);
}

}  // namespace
}  // namespace reshard
