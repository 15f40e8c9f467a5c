#include "planner/layout/chunk.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::ElementsAre;

std::vector<int64_t> Chunks(int64_t length, int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(ChunkSize(length, n, i));
  return out;
}

// The examples of spec §2.
TEST(ChunkTest, SpecExamples) {
  EXPECT_THAT(Chunks(5, 4), ElementsAre(2, 2, 1, 0));
  EXPECT_THAT(Chunks(13, 4), ElementsAre(4, 4, 4, 1));
  EXPECT_THAT(Chunks(1, 4), ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(Chunks(12, 4), ElementsAre(3, 3, 3, 3));
  // torch.chunk leaves trailing ranks empty rather than spreading: 6 over 4
  // is 2,2,2,0 (chunk size ceil(6/4) = 2), not 2,2,1,1.
  EXPECT_THAT(Chunks(6, 4), ElementsAre(2, 2, 2, 0));
  EXPECT_THAT(Chunks(7, 1), ElementsAre(7));
}

TEST(ChunkTest, ChunksTileTheLength) {
  for (int64_t n = 1; n <= 17; ++n) {
    for (int64_t length = 1; length <= 100; ++length) {
      const int64_t c = (length + n - 1) / n;
      int64_t sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t size = ChunkSize(length, n, i);
        ASSERT_GE(size, 0);
        ASSERT_LE(size, c);
        // Chunks are contiguous: each starts where the previous ended.
        ASSERT_EQ(ChunkOffset(length, n, i), sum) << "L=" << length << " n=" << n << " i=" << i;
        if (i > 0) {
          ASSERT_LE(size, ChunkSize(length, n, i - 1));  // non-increasing
        }
        // Only the chunks starting at or past L are empty.
        ASSERT_EQ(size == 0, i * c >= length);
        sum += size;
      }
      ASSERT_EQ(sum, length) << "L=" << length << " n=" << n;
      ASSERT_EQ(ChunkOffset(length, n, n), length);
      if (length % n == 0) {
        ASSERT_THAT(Chunks(length, n), ::testing::Each(length / n));
      }
    }
  }
}

TEST(ChunkTest, HugeLengthsDoNotOverflow) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  // ceil(big / 3) = big / 3 + 1 since big % 3 == 1.
  EXPECT_EQ(ChunkSize(big, 3, 0), big / 3 + 1);
  EXPECT_EQ(ChunkSize(big, 3, 0) + ChunkSize(big, 3, 1) + ChunkSize(big, 3, 2), big);
  EXPECT_EQ(ChunkOffset(big, 3, 2), 2 * (big / 3 + 1));
}

Placement S(int d) { return Placement::Shard(d); }

TEST(LocalShapeTest, ShardOrderDecidesUnevenSplits) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3});
  ASSERT_TRUE(mesh.ok());
  // Order [1, 0]: 13 over mesh dim 1 (coord 2): chunk size 5, [10, 13) -> 3;
  // then 3 over mesh dim 0 (coord 1): chunk size 2, [2, 3) -> 1.
  absl::StatusOr<DistState> reversed = DistState::Create({S(0), S(0)}, {{0, {1, 0}}});
  ASSERT_TRUE(reversed.ok());
  EXPECT_THAT(LocalShape(*mesh, *reversed, {13, 5}, {1, 2}), ElementsAre(1, 5));
  // Default order [0, 1]: 13 over mesh dim 0 (coord 1): [7, 13) -> 6;
  // then 6 over mesh dim 1 (coord 2): chunk size 2 -> 2.
  DistState ascending = DistState::WithDefaultOrder({S(0), S(0)});
  EXPECT_THAT(LocalShape(*mesh, ascending, {13, 5}, {1, 2}), ElementsAre(2, 5));
  // Replicate and Partial keep the global shape.
  DistState rp = DistState::WithDefaultOrder({Placement::Replicate(), Placement::Partial()});
  EXPECT_THAT(LocalShape(*mesh, rp, {13, 5}, {1, 2}), ElementsAre(13, 5));
  // Two tensor dims.
  DistState two = DistState::WithDefaultOrder({S(1), S(0)});
  EXPECT_THAT(LocalShape(*mesh, two, {13, 5}, {1, 0}), ElementsAre(5, 2));  // 5 = ceil(13/3)
}

// Over all ranks, the local shards hold every element once per replica.
TEST(LocalShapeTest, ShardsPartitionTheTensor) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int mesh_ndim = 1 + rng() % 3;
    const int tensor_ndim = 1 + rng() % 3;
    std::vector<int64_t> sizes, shape;
    for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(1 + rng() % 4);
    for (int d = 0; d < tensor_ndim; ++d) shape.push_back(1 + rng() % 11);
    absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
    ASSERT_TRUE(mesh.ok());
    std::vector<Placement> placements;
    int64_t replicas = 1;
    for (int m = 0; m < mesh_ndim; ++m) {
      if (rng() % 3 == 0) {
        placements.push_back(Placement::Replicate());
        replicas *= sizes[m];
      } else {
        placements.push_back(S(rng() % tensor_ndim));
      }
    }
    // A random shard order: shuffle each tensor dim's mesh dims.
    ShardOrder order = DistState::WithDefaultOrder(placements).shard_order();
    for (ShardOrderEntry& e : order) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
    absl::StatusOr<DistState> state = DistState::Create(placements, order);
    ASSERT_TRUE(state.ok());

    int64_t total = 0, global = 1;
    for (int64_t s : shape) global *= s;
    for (int64_t r = 0; r < mesh->num_ranks(); ++r) {
      std::vector<int64_t> local = LocalShape(*mesh, *state, shape, mesh->Coordinate(r));
      int64_t n = 1;
      for (int64_t s : local) n *= s;
      total += n;
    }
    EXPECT_EQ(total, global * replicas) << state->ToString() << " on " << mesh->ToString();
  }
}

}  // namespace
}  // namespace reshard
