// StageOverRails and StagedExchangeOf (rail_staging.h, spec §11.2): the
// transposes of issue 43 (C2, C6) staged so that every NIC carries one
// block, every element still reaching its receiver once.
#include "planner/steps/rail_staging.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/notation.h"
#include "planner/steps/link_load.h"
#include "planner/steps/logical_shape.h"
#include "planner/steps/slice_routes.h"

namespace reshard {
namespace {

DistState State(const DeviceMesh& mesh, const char* text) {
  return ParseDistState(text, mesh, 2).value().state;
}

// Each participant ends with exactly the part of its wanted block it does
// not hold, each element once: boxes staged through a stager arrive at the
// receiver in a later round, and a stager receives only what it passes on.
void ExpectEveryElementOnce(absl::Span<const Box> held, absl::Span<const Box> wanted,
                            const RouteRounds& rounds) {
  std::vector<int64_t> kept(held.size(), 0), received(held.size(), 0);
  for (size_t k = 0; k < rounds.routes.size(); ++k) {
    const SliceRoute& r = rounds.routes[k];
    if (r.sender == r.receiver) continue;
    if (BoxContains(wanted[r.receiver], r.box)) {
      received[r.receiver] += BoxElements(r.box);
    } else {
      kept[r.receiver] += BoxElements(r.box);  // staged: passed on later
    }
    if (!BoxContains(held[r.sender], r.box)) {
      EXPECT_GT(rounds.round_of[k], 0) << "a stager sends only what an earlier round brought";
    }
  }
  for (size_t i = 0; i < held.size(); ++i) {
    const int64_t lacks =
        BoxElements(wanted[i]) - BoxElements(MeetBoxes(wanted[i], held[i], wanted[i]));
    EXPECT_EQ(received[i], lacks) << "participant " << i;
  }
}

// C6 on 8 hosts of 8 (mesh 8,8 over hosts on mesh dim 0): rank (i, j)
// sends its whole block to (j, i). Direct, host i's seven remote sends all
// leave through NIC i (PXN: the receiver's local rank is i), 7 blocks on
// one NIC; staged by the Latin square each NIC sends and receives one.
TEST(RailStagingTest, TransposeOnEightHostsLoadsEveryNicWithOneBlock) {
  const DeviceMesh mesh = DeviceMesh::Create({8, 8}).value();
  const DistState src = State(mesh, "S(0)S(1)"), dst = State(mesh, "S(1)S(0)");
  Step step = MakePermute({{0, 1}, {1, 0}});
  step.staging = {8, 1};
  const std::vector<int64_t> zeros = {0, 0}, global = {64, 64};
  const std::vector<int64_t> logical = LogicalShape(src, step, mesh, global, zeros);
  const StagedExchange x = StagedExchangeOf(src, step, mesh, logical, zeros);
  ASSERT_EQ(ApplyStep(src, step), dst);
  const int64_t block = 8 * 8;
  const LinkLoad direct = LinkLoadOfRoutes(RouteSlices(x.held, x.wanted), x.ranks, 8);
  EXPECT_EQ(direct.inter, 7 * block);
  ASSERT_EQ(x.rounds.rounds, 2);
  const LinkLoad first =
      LinkLoadOfRoutes(RoutesOfRound(x.rounds.routes, x.rounds.round_of, 0), x.ranks, 8);
  EXPECT_EQ(first.inter, block);
  const LinkLoad second =
      LinkLoadOfRoutes(RoutesOfRound(x.rounds.routes, x.rounds.round_of, 1), x.ranks, 8);
  EXPECT_EQ(second.inter, 0);  // the stagers pass on over NVLink
  ExpectEveryElementOnce(x.held, x.wanted, x.rounds);
}

// Chunks pipeline: part c of a staged route crosses in round c and is
// passed on in round c + 1.
TEST(RailStagingTest, ChunksPipelineOverOneMoreRound) {
  const DeviceMesh mesh = DeviceMesh::Create({4, 4}).value();
  const DistState src = State(mesh, "S(0)S(1)");
  Step step = MakePermute({{0, 1}, {1, 0}});
  const std::vector<int64_t> zeros = {0, 0}, global = {17, 13};  // uneven blocks
  const std::vector<int64_t> logical = LogicalShape(src, step, mesh, global, zeros);
  for (int32_t chunks : {1, 2, 4}) {
    step.staging = {4, chunks};
    const StagedExchange x = StagedExchangeOf(src, step, mesh, logical, zeros);
    EXPECT_EQ(x.rounds.rounds, chunks + 1) << chunks;
    ExpectEveryElementOnce(x.held, x.wanted, x.rounds);
  }
}

// Nothing to stage on one host, or with fewer than two rails.
TEST(RailStagingTest, NoneOnOneHostOrOneRail) {
  const std::vector<Box> held = {{Slice{0, 2}}, {Slice{2, 2}}};
  const std::vector<Box> wanted = {{Slice{2, 2}}, {Slice{0, 2}}};
  const std::vector<SliceRoute> routes = RouteSlices(held, wanted);
  EXPECT_FALSE(StageOverRails(held, wanted, routes, {0, 1}, 8, 1).has_value());
  EXPECT_FALSE(StageOverRails(held, wanted, routes, {0, 8}, 1, 1).has_value());
}

// Two hosts of two: ranks 0, 1 | 2, 3. Ranks 2 and 3 both send to rank 1
// (rail 1): NIC 1 of host 1 would send 2 blocks and rank 1 receive 2; the
// second route goes through rank 0 (rail 0), which holds and wants nothing
// of it, and rank 1 gets it over NVLink a round later.
TEST(RailStagingTest, StagerTakesTheSecondRouteIntoOneRank) {
  const std::vector<Box> held = {{Slice{0, 0}}, {Slice{0, 0}}, {Slice{0, 4}}, {Slice{4, 4}}};
  const std::vector<Box> wanted = {{Slice{0, 0}}, {Slice{0, 8}}, {Slice{0, 0}}, {Slice{0, 0}}};
  const std::vector<SliceRoute> routes = RouteSlices(held, wanted);
  const std::optional<RouteRounds> staged =
      StageOverRails(held, wanted, routes, {0, 1, 2, 3}, 2, 1);
  ASSERT_TRUE(staged.has_value());
  int64_t through_stager = 0;
  for (const SliceRoute& r : staged->routes)
    through_stager += r.receiver == 0 ? BoxElements(r.box) : 0;
  EXPECT_EQ(through_stager, 4);
  const LinkLoad first =
      LinkLoadOfRoutes(RoutesOfRound(staged->routes, staged->round_of, 0), {0, 1, 2, 3}, 2);
  EXPECT_EQ(first.inter, 4);
  ExpectEveryElementOnce(held, wanted, *staged);
}

}  // namespace
}  // namespace reshard
