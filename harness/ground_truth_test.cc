// Ground-truth shards: regions follow torch.chunk in shard order (spec §2),
// every rank's shard of every layout (Partial included, for every dtype and
// reduce op) reassembles to the global tensor, and Partial values are really
// spread over the ranks rather than copies.
#include "harness/ground_truth.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "collectives/tensor/host_math.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"

namespace reshard {
namespace {

DistSpec Spec(std::vector<int64_t> mesh, const std::string& notation, std::vector<int64_t> shape,
              DType dtype = DType::kF32) {
  absl::StatusOr<DistSpec> s =
      DistSpec::Parse(*DeviceMesh::Create(std::move(mesh)), notation, std::move(shape), dtype);
  EXPECT_TRUE(s.ok()) << notation << ": " << s.status();
  return *s;
}

TEST(RegionOfTest, TorchChunkSizesInShardOrder) {
  // Spec §2: L=5 over 4 ranks gives 2,2,1,0.
  const DistSpec s = Spec({4}, "S(0)", {5});
  const int64_t offsets[] = {0, 2, 4, 5}, sizes[] = {2, 2, 1, 0};
  for (int64_t r = 0; r < 4; ++r) {
    ShardRegion region = RegionOf(s, {r});
    EXPECT_EQ(region.offset[0], offsets[r]);
    EXPECT_EQ(region.shape[0], sizes[r]);
  }
  // Dim 0 (13 rows) split over mesh dim 1 (size 2: 7, 6) first, then mesh dim 0 (size 2).
  const DistSpec o = Spec({2, 2}, "S(0)[1]S(0)[0]", {13, 3});
  ShardRegion r = RegionOf(o, {1, 1});  // second half (rows 7..12), then its second chunk (10..12)
  EXPECT_EQ(r.offset, (std::vector<int64_t>{10, 0}));
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 3}));
  r = RegionOf(o, {1, 0});  // first half (rows 0..6), second chunk: 4..6
  EXPECT_EQ(r.offset, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 3}));
}

std::vector<LocalTensor> AllShards(const LocalTensor& global, const DistSpec& spec, uint64_t seed) {
  std::vector<LocalTensor> shards;
  for (int64_t r = 0; r < spec.mesh().num_ranks(); ++r) {
    const std::vector<int64_t> coord = spec.mesh().Coordinate(r);
    absl::StatusOr<LocalTensor> s = ShardOf(global, spec, coord, seed);
    EXPECT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->shape(), spec.LocalShape(coord));
    shards.push_back(*std::move(s));
  }
  return shards;
}

TEST(ShardOfTest, EveryLayoutDTypeAndOpRoundTrips) {
  const std::vector<std::string> layouts = {
      "S(0)S(1)R",         "S(1)[1]S(1)[0]S(0)", "RRR",
      "P(sum)S(0)P(avg)",  "P(avg)P(avg)S(1)",   "P(max)S(1)P(max)",
      "P(min)RP(min)",     "P(prod)S(0)P(prod)", "S(0)[2]S(0)[0]S(0)[1]",
      "P(sum)P(sum)P(sum)"};
  const DType dtypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                          DType::kI32, DType::kI16, DType::kI8,  DType::kU8};
  for (const std::string& layout : layouts) {
    for (DType dtype : dtypes) {
      // Uneven: 5 rows over up to 3*2 ways leaves empty shards.
      const DistSpec spec = Spec({3, 2, 2}, layout, {5, 7}, dtype);
      const LocalTensor global = *TestTensor(dtype, {5, 7}, /*seed=*/11, spec.mesh().num_ranks());
      std::vector<LocalTensor> shards = AllShards(global, spec, 11);
      absl::StatusOr<LocalTensor> back = Reassemble(shards, spec);
      ASSERT_TRUE(back.ok()) << layout << " " << DTypeName(dtype) << ": " << back.status();
      absl::StatusOr<int64_t> bad = FirstMismatch(*back, global, 0);
      ASSERT_TRUE(bad.ok());
      EXPECT_EQ(*bad, -1) << layout << " " << DTypeName(dtype);
    }
  }
}

TEST(ShardOfTest, PartialValuesDifferBetweenRanks) {
  // A Partial whose ranks all held the global value would hide a missing
  // reduction; check that ranks' values differ somewhere for each op.
  for (const char* layout : {"P(sum)", "P(avg)", "P(max)", "P(min)", "P(prod)"}) {
    const DistSpec spec = Spec({4}, layout, {64});
    const LocalTensor global = *TestTensor(DType::kF32, {64}, 3, 4);
    std::vector<LocalTensor> shards = AllShards(global, spec, 3);
    int differing = 0;
    for (int64_t i = 0; i < 64; ++i) {
      for (int r = 1; r < 4; ++r) {
        differing += shards[r].data_as<float>()[i] != shards[0].data_as<float>()[i];
      }
    }
    EXPECT_GT(differing, 32) << layout;
  }
  // Integer sums: one holder per element, the others 0, so no wrap-around.
  const DistSpec spec = Spec({4}, "P(sum)", {64}, DType::kI8);
  const LocalTensor global = *TestTensor(DType::kI8, {64}, 3, 4);
  std::vector<LocalTensor> shards = AllShards(global, spec, 3);
  for (int64_t i = 0; i < 64; ++i) {
    int nonzero = 0;
    for (int r = 0; r < 4; ++r) nonzero += shards[r].data_as<int8_t>()[i] != 0;
    EXPECT_LE(nonzero, 1);
  }
}

TEST(ShardOfTest, DependsOnSeedOnlyForPartials) {
  const DistSpec spec = Spec({2}, "P(sum)", {16}, DType::kF64);
  const LocalTensor global = *TestTensor(DType::kF64, {16}, 1, 2);
  absl::StatusOr<LocalTensor> a = ShardOf(global, spec, {1}, 1);
  absl::StatusOr<LocalTensor> b = ShardOf(global, spec, {1}, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*FirstMismatch(*a, *b, 0), -1);
  const DistSpec plain = Spec({2}, "S(0)", {16}, DType::kF64);
  a = ShardOf(global, plain, {1}, 1);
  b = ShardOf(global, plain, {1}, 2);
  EXPECT_EQ(*FirstMismatch(*a, *b, 0), -1);
}

TEST(ReassembleTest, ReportsDisagreeingReplicasAndBadShapes) {
  const DistSpec spec = Spec({2}, "R", {4}, DType::kI32);
  const LocalTensor global = *TestTensor(DType::kI32, {4}, 5, 2);
  std::vector<LocalTensor> shards = AllShards(global, spec, 5);
  shards[1].data_as<int32_t>()[2] += 1;
  absl::StatusOr<LocalTensor> back = Reassemble(shards, spec);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(back.status().message().find("element 2"), std::string::npos) << back.status();
  shards.pop_back();
  EXPECT_EQ(Reassemble(shards, spec).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShardOf(global, Spec({2}, "R", {5}, DType::kI32), {0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HostMathTest, HalfConversionsRoundToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 1024.0f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;  // exactly representable in f16
  }
  EXPECT_EQ(HalfToFloat(FloatToHalf(2049.0f)), 2048.0f);  // tie to even
  EXPECT_EQ(HalfToFloat(FloatToHalf(2051.0f)), 2052.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(70000.0f))));
  for (float f : {0.0f, 1.0f, -3.0f, 256.0f, 1.5f})
    EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(f)), f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(257.0f)), 256.0f);  // tie to even
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(259.0f)), 260.0f);
}

}  // namespace
}  // namespace reshard
