#include "planner/layout/dist_state.h"

#include <vector>

#include "absl/hash/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const Placement kR = Placement::Replicate();
Placement S(int d) { return Placement::Shard(d); }
Placement P(ReduceOp op = ReduceOp::kSum) { return Placement::Partial(op); }

TEST(PlacementTest, NamesAndOps) {
  EXPECT_EQ(S(2).ToString(), "S(2)");
  EXPECT_EQ(kR.ToString(), "R");
  EXPECT_EQ(P(ReduceOp::kAvg).ToString(), "P(avg)");
  for (int i = 0; i < kNumReduceOps; ++i) {
    ReduceOp op = static_cast<ReduceOp>(i);
    EXPECT_EQ(ParseReduceOp(ReduceOpName(op)), op);
  }
  EXPECT_FALSE(ParseReduceOp("mean").has_value());
  EXPECT_NE(S(0), S(1));
  EXPECT_NE(P(ReduceOp::kSum), P(ReduceOp::kMax));
}

TEST(DistStateTest, DefaultIsAllReplicate) {
  DistState s(3);
  EXPECT_EQ(s.ndim(), 3);
  EXPECT_THAT(s.placements(), ElementsAre(kR, kR, kR));
  EXPECT_THAT(s.shard_order(), IsEmpty());
  EXPECT_TRUE(s.HasDefaultOrder());
  EXPECT_EQ(s.ToString(), "RRR");
}

TEST(DistStateTest, DefaultOrderIsAscending) {
  DistState s = DistState::WithDefaultOrder({S(0), S(1), S(0), P()});
  EXPECT_THAT(s.OrderOf(0), ElementsAre(0, 2));
  EXPECT_THAT(s.OrderOf(1), ElementsAre(1));
  EXPECT_THAT(s.OrderOf(2), IsEmpty());
  EXPECT_EQ(s.OrderPosition(2), 1);
  EXPECT_TRUE(s.HasDefaultOrder());
  EXPECT_EQ(s.shard_order(), (ShardOrder{{0, {0, 2}}, {1, {1}}}));
  EXPECT_EQ(s.ToString(), "S(0)[0]S(1)S(0)[1]P(sum)");
}

TEST(DistStateTest, CreateWithExplicitOrder) {
  absl::StatusOr<DistState> s = DistState::Create({S(0), S(0), S(0)}, {{0, {1, 0, 2}}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->OrderOf(0), ElementsAre(1, 0, 2));
  EXPECT_EQ(s->OrderPosition(1), 0);
  EXPECT_FALSE(s->HasDefaultOrder());
  EXPECT_EQ(s->ToString(), "S(0)[1]S(0)[0]S(0)[2]");
  EXPECT_NE(*s, DistState::WithDefaultOrder({S(0), S(0), S(0)}));
  // The explicit default order is the default state.
  absl::StatusOr<DistState> d = DistState::Create({S(0), S(0), S(0)}, {{0, {0, 1, 2}}});
  EXPECT_EQ(*d, DistState::WithDefaultOrder({S(0), S(0), S(0)}));
  EXPECT_EQ(absl::HashOf(*d), absl::HashOf(DistState::WithDefaultOrder({S(0), S(0), S(0)})));
}

TEST(DistStateTest, CreateRoundTripsShardOrder) {
  ShardOrder order = {{0, {3}}, {1, {2, 0}}};
  absl::StatusOr<DistState> s = DistState::Create({S(1), P(ReduceOp::kMax), S(1), S(0)}, order);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shard_order(), order);
  EXPECT_EQ(s->ToString(), "S(1)[1]P(max)S(1)[0]S(0)");
}

TEST(DistStateTest, CreateErrors) {
  // A listed mesh dim that does not hold S(d).
  EXPECT_THAT(DistState::Create({S(0), kR}, {{0, {0, 1}}}).status().message(),
              HasSubstr("lists mesh dim 1"));
  // Wrong tensor dim.
  EXPECT_THAT(DistState::Create({S(0), S(1)}, {{0, {0}}, {0, {1}}}).status().message(),
              HasSubstr("mesh dim 1"));
  // Listed twice.
  EXPECT_FALSE(DistState::Create({S(0), S(0)}, {{0, {0, 0, 1}}}).ok());
  // Out of range.
  EXPECT_FALSE(DistState::Create({S(0)}, {{0, {0, 5}}}).ok());
  EXPECT_FALSE(DistState::Create({S(0)}, {{0, {-1}}}).ok());
  // Missing.
  absl::StatusOr<DistState> missing = DistState::Create({S(0), S(0)}, {{0, {1}}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("misses mesh dim 0 (S(0))"));
}

TEST(DistStateTest, WithPlacementStackDiscipline) {
  absl::StatusOr<DistState> s = DistState::Create({S(0), S(0), kR}, {{0, {1, 0}}});
  ASSERT_TRUE(s.ok());
  // Mesh dim 0 is last in [1, 0], so it may leave: the order becomes [1].
  DistState gathered = s->WithPlacement(0, kR);
  EXPECT_EQ(gathered.ToString(), "RS(0)R");
  EXPECT_THAT(gathered.OrderOf(0), ElementsAre(1));
  // Re-entering appends last: [1, 0] again.
  EXPECT_EQ(gathered.WithPlacement(0, S(0)), *s);
  // Entering from the other side: mesh dim 2 appended after [1, 0].
  DistState three = s->WithPlacement(2, S(0));
  EXPECT_THAT(three.OrderOf(0), ElementsAre(1, 0, 2));
  EXPECT_EQ(three.ToString(), "S(0)[1]S(0)[0]S(0)[2]");
  // all_to_all: last mesh dim of dim 0 moves to the end of dim 1's order.
  DistState moved = s->WithPlacement(0, S(1));
  EXPECT_EQ(moved.ToString(), "S(1)S(0)R");
  EXPECT_THAT(moved.OrderOf(1), ElementsAre(0));
  // Partial and back.
  DistState partial = s->WithPlacement(2, P(ReduceOp::kAvg));
  EXPECT_EQ(partial.ToString(), "S(0)[1]S(0)[0]P(avg)");
  EXPECT_EQ(partial.WithPlacement(2, kR), *s);
}

TEST(DistStateTest, NumShardsAndPartialOps) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create({2, 3, 4, 5});
  ASSERT_TRUE(mesh.ok());
  DistState s = DistState::WithDefaultOrder({S(0), P(ReduceOp::kAvg), S(1), P()});
  EXPECT_EQ(s.NumShards(*mesh), 2 * 4);
  EXPECT_EQ(s.PartialOps(),
            (1u << static_cast<int>(ReduceOp::kAvg)) | (1u << static_cast<int>(ReduceOp::kSum)));
  EXPECT_EQ(DistState(4).NumShards(*mesh), 1);
  EXPECT_EQ(DistState(4).PartialOps(), 0u);
}

// The mask every price is keyed by: each Shard mesh dim, whatever its
// tensor dim, order position or neighbours (Partials share no bit with it).
TEST(DistStateTest, ShardSetHoldsExactlyTheShardMeshDims) {
  EXPECT_EQ(DistState(4).ShardSet(), 0u);
  EXPECT_EQ(DistState::WithDefaultOrder({S(0), kR, P(ReduceOp::kMax), S(0)}).ShardSet(), 0b1001u);
  EXPECT_EQ(DistState::WithDefaultOrder({P(), S(7), P(ReduceOp::kAvg), kR, S(3), kR, kR, S(7)})
                .ShardSet(),
            0b10010010u);
  for (int m = 0; m < kMaxMeshDims; ++m) {
    std::vector<Placement> placements(kMaxMeshDims, P(ReduceOp::kMin));
    placements[m] = S(m % kMaxTensorDims);
    EXPECT_EQ(DistState::WithDefaultOrder(placements).ShardSet(), 1u << m) << m;
  }
}

TEST(DistStateTest, EqualityNeedsSameMeshDims) {
  // The same bits on different numbers of mesh dims are different states.
  EXPECT_NE(DistState(2), DistState(3));
  EXPECT_EQ(DistState(2), DistState::WithDefaultOrder({kR, kR}));
}

TEST(DistStateTest, EveryTensorAndMeshDimEncodes) {
  // The packed cells must hold tensor dims 0..7, positions 0..7 and every op.
  std::vector<Placement> all_zero(kMaxMeshDims, S(7));
  DistState s = DistState::WithDefaultOrder(all_zero);
  for (int m = 0; m < kMaxMeshDims; ++m) {
    EXPECT_EQ(s.placement(m), S(7));
    EXPECT_EQ(s.OrderPosition(m), m);
  }
  for (int i = 0; i < kNumReduceOps; ++i) {
    ReduceOp op = static_cast<ReduceOp>(i);
    EXPECT_EQ(DistState::WithDefaultOrder({kR, P(op)}).placement(1), P(op));
  }
}

}  // namespace
}  // namespace reshard
