// The executor on native steps (spec §4.2), Gloo with ranks as threads: group
// collectives over several mesh dims on nested uneven and empty slices, and
// permutes, plain and staged over rails, against the ground-truth shards;
// byte counters derived by hand from the nested slices
// (planner/layout/chunk.h).
#include <cstdint>
#include <utility>
#include <vector>

#include "collectives/executor.h"
#include "gtest/gtest.h"
#include "planner/layout/chunk.h"
#include "planner/steps/rail_staging.h"
#include "planner/steps/route_rounds.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"
#include "tests/util/executor_harness.h"

namespace reshard {
namespace {

Plan OneStep(const Step& step) {
  Plan plan;
  plan.steps.push_back({step, {}, 0});
  return plan;
}

Plan GroupStep(std::vector<int> order, Placement src, Placement dst) {
  return OneStep(MakeGroupStep(order, src, dst));
}

// 5 rows over mesh dims 0 then 1 of a 2x2 mesh: 3, 2 then 2, 1 | 1, 1, so
// ranks hold 2, 1, 1, 1 rows (not torch.chunk(5, 4)'s 2, 2, 1, 0); padded to 2.
TEST(GroupExecutorTest, AllGatherOverTwoMeshDimsUnpadsNestedSlices) {
  const DistSpec src = Spec({2, 2}, "S(0)S(0)", {5, 3}), dst = Spec({2, 2}, "RR", {5, 3});
  RunResult run = Execute(src, dst, GroupStep({0, 1}, Placement::Shard(0), Placement::Replicate()));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, /*(n-1) * 2 rows * 3 * 4 bytes=*/3 * 2 * 3 * 4);
}

// Split over mesh dim 1 first: member j = (c0, c1) of the group (row-major
// over ascending mesh dims) holds the nested slice of (c1, c0).
TEST(GroupExecutorTest, AllGatherMapsMembersToTheirNestingOrder) {
  const DistSpec src = Spec({2, 2}, "S(0)[1]S(0)[0]", {5, 3}), dst = Spec({2, 2}, "RR", {5, 3});
  RunResult run = Execute(src, dst, GroupStep({0, 1}, Placement::Shard(0), Placement::Replicate()));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, 3 * 2 * 3 * 4);
}

// 2x3: 7 rows over 2 then 3: 4 -> 2,1,1 and 3 -> 1,1,1 (padded 2); 5 columns
// over mesh dim 1 then 0, as the entries say: 2,2,1 -> 1,1 | 1,1 | 1,0 (padded 1).
TEST(GroupExecutorTest, AllToAllOverTwoMeshDimsEntersInEntriesOrder) {
  const DistSpec src = Spec({2, 3}, "S(0)S(0)", {7, 5});
  const DistSpec dst = Spec({2, 3}, "S(1)[1]S(1)[0]", {7, 5});
  RunResult run = Execute(src, dst, GroupStep({1, 0}, Placement::Shard(0), Placement::Shard(1)));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, /*(n-1) * 2 * 1 * 4=*/5 * 2 * 1 * 4);
}

// 2x2x2, reducing over mesh dims {0,1} while mesh dim 2 keeps S(1): 5 rows
// nested 2,1,1,1 (padded 2) by 4 / 2 = 2 columns.
TEST(GroupExecutorTest, ReduceScatterOverTwoMeshDimsOfThree) {
  const DistSpec src = Spec({2, 2, 2}, "P(sum)P(sum)S(1)", {5, 4}, DType::kI32);
  const DistSpec dst = Spec({2, 2, 2}, "S(0)S(0)S(1)", {5, 4}, DType::kI32);
  const Placement sum = Placement::Partial(ReduceOp::kSum);
  RunResult run = Execute(src, dst, GroupStep({0, 1}, sum, Placement::Shard(0)));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, /*(n-1) * 2 * 2 * 4=*/3 * 2 * 2 * 4);
}

// Mesh dims {0,2} of 2x2x2 (not adjacent): 15 elements, 2 (n-1) ceil(15/4) * 8.
TEST(GroupExecutorTest, AllReduceOverNonAdjacentMeshDims) {
  const DistSpec src = Spec({2, 2, 2}, "P(max)RP(max)", {3, 5}, DType::kI64);
  const DistSpec dst = Spec({2, 2, 2}, "RRR", {3, 5}, DType::kI64);
  const Placement max = Placement::Partial(ReduceOp::kMax);
  RunResult run = Execute(src, dst, GroupStep({0, 2}, max, Placement::Replicate()));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, 2 * 3 * 4 * 8);
}

// 3 rows over all three mesh dims of 2x2x2: 2,1 -> 1,1 | 1,0 -> 1,0 | 1,0 |
// 1,0 | 0,0: five ranks hold no rows.
TEST(GroupExecutorTest, AllGatherOverThreeMeshDimsWithEmptySlices) {
  const DistSpec src = Spec({2, 2, 2}, "S(0)S(0)S(0)", {3, 2});
  const DistSpec dst = Spec({2, 2, 2}, "RRR", {3, 2});
  RunResult run =
      Execute(src, dst, GroupStep({0, 1, 2}, Placement::Shard(0), Placement::Replicate()));
  ExpectDstShards(src, dst, run);
  ExpectBytes(run, 0, /*(n-1) * 1 row * 2 * 4=*/7 * 1 * 2 * 4);
}

// S(0)[1]S(0)[0] -> S(0)S(0) on 2x2 with 5 rows: before, rank (c0, c1) holds
// slice (c1, c0) of 3,2 -> 2,1 | 1,1; after, slice (c0, c1). Ranks (0,1) and
// (1,0) swap their one row; (0,0) and (1,1) keep theirs and send nothing.
TEST(GroupExecutorTest, PermuteMovesEachBlockOnce) {
  const DistSpec src = Spec({2, 2}, "S(0)[1]S(0)[0]", {5, 3});
  const DistSpec dst = Spec({2, 2}, "S(0)S(0)", {5, 3});
  RunResult run = Execute(src, dst, OneStep(MakePermute({{0, 0}, {1, 0}})));
  ExpectDstShards(src, dst, run);
  const int64_t row = 3 * 4;
  const int64_t want[] = {0, row, row, 0};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(run.stats[r].steps[0].bytes_sent, want[r]) << "rank " << r;
    EXPECT_EQ(run.stats[r].steps[0].bytes_received, want[r]) << "rank " << r;
  }
}

// S(0)S(1) -> S(1)S(0) on 4x2, 7 x 5: rank (c0, c1) holds rows chunk(7, 4)[c0]
// x columns chunk(5, 2)[c1] before, rows chunk(7, 2)[c1] x columns
// chunk(5, 4)[c0] after. What it keeps is the overlap of the two; every
// other element travels exactly once.
TEST(GroupExecutorTest, TransposePermuteOnUnevenShape) {
  const DistSpec src = Spec({4, 2}, "S(0)S(1)", {7, 5}, DType::kI16);
  const DistSpec dst = Spec({4, 2}, "S(1)S(0)", {7, 5}, DType::kI16);
  RunResult run = Execute(src, dst, OneStep(MakePermute({{0, 1}, {1, 0}})));
  ExpectDstShards(src, dst, run);
  auto overlap = [](int64_t a_off, int64_t a_size, int64_t b_off, int64_t b_size) {
    return std::max<int64_t>(0, std::min(a_off + a_size, b_off + b_size) - std::max(a_off, b_off));
  };
  int64_t kept = 0, sent = 0, received = 0;
  for (int64_t c0 = 0; c0 < 4; ++c0) {
    for (int64_t c1 = 0; c1 < 2; ++c1) {
      kept += overlap(ChunkOffset(7, 4, c0), ChunkSize(7, 4, c0), ChunkOffset(7, 2, c1),
                      ChunkSize(7, 2, c1)) *
              overlap(ChunkOffset(5, 2, c1), ChunkSize(5, 2, c1), ChunkOffset(5, 4, c0),
                      ChunkSize(5, 4, c0));
      sent += run.stats[c0 * 2 + c1].steps[0].bytes_sent;
      received += run.stats[c0 * 2 + c1].steps[0].bytes_received;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_EQ(sent, (7 * 5 - kept) * 2);
  EXPECT_EQ(received, sent);
}

// The issue's role swap on 2x2x2, small: every rank's block is [2, 2, 2]
// (32 bytes); members 1 to 6 each receive one block, members 0 and 7 keep
// theirs (native_planner_test derives the routes).
TEST(GroupExecutorTest, ExchangeSwapsMeshDimRoles) {
  const DistSpec src = Spec({2, 2, 2}, "S(0)S(1)R", {4, 4, 2});
  const DistSpec dst = Spec({2, 2, 2}, "RS(0)S(1)", {4, 4, 2});
  RunResult run =
      Execute(src, dst, OneStep(MakeExchange(MeshDimSet::Of({0, 1, 2}), {{1, 0}, {2, 1}})));
  ExpectDstShards(src, dst, run);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(run.stats[r].steps[0].bytes_received, r == 0 || r == 7 ? 0 : 32) << "rank " << r;
  }
}

// Uneven and empty: 5 rows over mesh dim 0 of 4x2 (2, 2, 1, 0), replicated
// on mesh dim 1, to 5 rows over mesh dim 1 (3, 2), replicated on mesh dim 0,
// in i64. Ranks (3, *) hold no rows and send none; every rank receives
// exactly the rows of its new block it lacks.
TEST(GroupExecutorTest, ExchangeOnUnevenAndEmptyShardsWithReplicas) {
  const DistSpec src = Spec({4, 2}, "S(0)R", {5, 3}, DType::kI64);
  const DistSpec dst = Spec({4, 2}, "RS(0)", {5, 3}, DType::kI64);
  RunResult run = Execute(src, dst, OneStep(MakeExchange(MeshDimSet::Of({0, 1}), {{1, 0}})));
  ExpectDstShards(src, dst, run);
  const int64_t row = 3 * 8;
  for (int64_t c0 = 0; c0 < 4; ++c0) {
    for (int64_t c1 = 0; c1 < 2; ++c1) {
      const int64_t r = c0 * 2 + c1;
      const int64_t held =
          std::max<int64_t>(0, std::min(ChunkOffset(5, 4, c0) + ChunkSize(5, 4, c0),
                                        ChunkOffset(5, 2, c1) + ChunkSize(5, 2, c1)) -
                                   std::max(ChunkOffset(5, 4, c0), ChunkOffset(5, 2, c1)));
      EXPECT_EQ(run.stats[r].steps[0].bytes_received, (ChunkSize(5, 2, c1) - held) * row)
          << "rank " << r;
      if (c0 == 3) {
        EXPECT_EQ(run.stats[r].steps[0].bytes_sent, 0) << "rank " << r;
      }
    }
  }
}

// The counters agree with BytesOfStep at every rank, for permutes and
// exchanges too.
TEST(GroupExecutorTest, CountersMatchBytesOfStep) {
  const DistSpec src = Spec({4, 2}, "S(0)S(1)", {7, 5}), dst = Spec({4, 2}, "S(1)S(0)", {7, 5});
  const Step step = MakePermute({{0, 1}, {1, 0}});
  RunResult run = Execute(src, dst, OneStep(step));
  ExpectBytesOfStep(src, src.state(), step, 0, run);
}

TEST(GroupExecutorTest, ExchangeCountersMatchBytesOfStep) {
  const DistSpec src = Spec({2, 3}, "RS(1)", {7, 5}), dst = Spec({2, 3}, "S(0)R", {7, 5});
  const Step step = MakeExchange(MeshDimSet::Of({0, 1}), {{0, 0}});
  RunResult run = Execute(src, dst, OneStep(step));
  ExpectDstShards(src, dst, run);
  ExpectBytesOfStep(src, src.state(), step, 0, run);
}

// Spec §11.2: steps staged over rails (hosts of 2 or 4 ranks), with every
// chunk count, on uneven blocks and replicas: the shards are the ground
// truth's and the counters BytesOfStep's (stagers count what they pass on).
TEST(GroupExecutorTest, StepsStagedOverRailsMatchShardsAndCounters) {
  struct Case {
    std::vector<int64_t> mesh;
    const char* src;
    const char* dst;
    std::vector<int64_t> shape;
    Step step;
    int32_t rails;
    bool stages;  // else every NIC already carries one block: direct, one round
  };
  const Case cases[] = {
      {{4, 4}, "S(0)S(1)", "S(1)S(0)", {9, 7}, MakePermute({{0, 1}, {1, 0}}), 4, true},
      {{2, 4}, "S(0)R", "RS(0)", {5, 3}, MakeExchange(MeshDimSet::Of({0, 1}), {{1, 0}}), 2, true},
      {{2, 2, 2},
       "S(0)S(1)R",
       "RS(0)S(1)",
       {4, 4, 2},
       MakeExchange(MeshDimSet::Of({0, 1, 2}), {{1, 0}, {2, 1}}),
       2,
       false},
  };
  for (const Case& c : cases) {
    const DistSpec src = Spec(c.mesh, c.src, c.shape), dst = Spec(c.mesh, c.dst, c.shape);
    for (int64_t chunks : kPipelineChunks) {
      Step step = c.step;
      step.staging = {c.rails, static_cast<int32_t>(chunks)};
      SCOPED_TRACE(step.ToString());
      const std::vector<int64_t> origin(c.mesh.size(), 0);
      const StagedExchange x = StagedExchangeOf(
          src.state(), step, src.mesh(),
          LogicalShape(src.state(), step, src.mesh(), src.global_shape(), origin), origin);
      // 1 + chunks rounds, fewer where a route has fewer rows than chunks.
      if (c.stages) {
        EXPECT_GT(x.rounds.rounds, 1);
        EXPECT_LE(x.rounds.rounds, chunks + 1);
      } else {
        EXPECT_EQ(x.rounds.rounds, 1);
      }
      RunResult run = Execute(src, dst, OneStep(step));
      ExpectDstShards(src, dst, run);
      ExpectBytesOfStep(src, src.state(), step, 0, run);
    }
  }
}

}  // namespace
}  // namespace reshard
