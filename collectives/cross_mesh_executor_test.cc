// Cross-mesh moves (spec §14; planner/cross_mesh/cross_mesh_plan.h,
// collectives/cross_mesh_executor.h): planned, then run on Gloo with every
// participant a thread holding a source-mesh, a destination-mesh and a
// union communicator (harness/cross_mesh_runner.h, what `reshard verify`
// runs); each destination rank's result is compared with its shard of the
// same global tensor. Disjoint, overlapping and equal rank
// sets, uneven shapes, a Partial source, ranks that only send or receive;
// which communicators each participant joins (cross_mesh_communicators.h).
#include "collectives/cross_mesh_executor.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/cross_mesh_communicators.h"
#include "collectives/gloo/gloo_communicator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/cross_mesh_case.h"
#include "harness/cross_mesh_runner.h"
#include "harness/ground_truth.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/cross_mesh/relayed_crossing.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

DistSpec Spec(std::vector<int64_t> mesh, const char* layout, std::vector<int64_t> shape,
              DType dtype = DType::kF32) {
  return *DistSpec::Parse(*DeviceMesh::Create(std::move(mesh)), layout, std::move(shape), dtype);
}

// Plans and runs `r` (harness/cross_mesh_runner.h), checks every
// destination rank's result; every participant's crossing counters.
// With `rounds`, the crossing's rounds.
std::vector<CrossingStats> RunAcross(const CrossMeshRequest& r,
                                     const PlanOptions& options = PlanOptions{PlanMode::kNative},
                                     int64_t* rounds = nullptr) {
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  if (rounds != nullptr) *rounds = plan->rounds;
  const LocalTensor global =
      *TestTensor(r.src.dtype(), r.src.global_shape(), 5, r.src.mesh().num_ranks());
  const std::vector<ParticipantResult> results =
      RunAcrossOnThreads(r, *plan, global, 5, GlooOptions());
  const CaseReport report = CheckAcross(r, *plan, global, 5, results);
  EXPECT_EQ(report.outcome, Outcome::kPassed) << report.detail;
  std::vector<CrossingStats> stats;
  for (const ParticipantResult& p : results) stats.push_back(p.stats);
  return stats;
}

int64_t MaxSent(const std::vector<CrossingStats>& stats) {
  int64_t m = 0;
  for (const CrossingStats& s : stats) m = std::max(m, s.bytes_sent);
  return m;
}

// Trainer FSDP x TP on 4x2 (ranks 0-7) to inference TP on 2 (ranks 8, 9),
// f32 16 x 12: trainer rank (a, b) holds rows 4a.., columns 6b.. (4 x 6, 96
// bytes); inference rank i needs columns 6i.. of every row (16 x 6, 384
// bytes): the four 4 x 6 blocks of trainer ranks (0..3, i), one each. Every
// trainer rank sends its block once, the receive lower bound per sender.
TEST(CrossMeshTest, TrainerToInferenceOnDisjointRanks) {
  CrossMeshRequest r{Spec({4, 2}, "S(0)S(1)", {16, 12}), Spec({2}, "S(1)", {16, 12}), {}, {8, 9}};
  const std::vector<CrossingStats> stats = RunAcross(r);
  ASSERT_EQ(stats.size(), 10u);
  EXPECT_EQ(stats[8].bytes_received, 16 * 6 * 4);
  EXPECT_EQ(stats[8].bytes_sent, 0);
  EXPECT_EQ(MaxSent(stats), 4 * 6 * 4);
}

// Overlapping: ranks 2 and 3 are in both sets; what they hold of their new
// block is copied locally. Uneven 7 x 5, replicas on the source's mesh dim 1.
TEST(CrossMeshTest, OverlappingRankSetsWithReplicasAndUnevenShards) {
  CrossMeshRequest r{
      Spec({2, 2}, "S(0)R", {7, 5}), Spec({4}, "S(1)", {7, 5}), {0, 1, 2, 3}, {2, 3, 4, 5}};
  const std::vector<CrossingStats> stats = RunAcross(r);
  ASSERT_EQ(stats.size(), 6u);
}

// A remesh: the same 8 ranks, 2x2x2 to 2x4.
TEST(CrossMeshTest, RemeshOnTheSameRanks) {
  CrossMeshRequest r{
      Spec({2, 2, 2}, "S(0)S(1)R", {8, 8, 2}), Spec({2, 4}, "RS(0)", {8, 8, 2}), {}, {}};
  RunAcross(r);
}

// A Partial source is reduced on the source mesh first (a reduce_scatter,
// the cheaper candidate: spec §14); a Partial destination is the crossed
// Replicate partitioned after.
TEST(CrossMeshTest, PartialsAreReducedBeforeAndPartitionedAfter) {
  CrossMeshRequest r{Spec({2}, "P(sum)", {7, 3}, DType::kI32),
                     Spec({3}, "P(sum)", {7, 3}, DType::kI32),
                     {0, 1},
                     {2, 3, 4}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->before.Trace(), "P(sum)->S(0)");
  EXPECT_EQ(plan->after.Trace(), "R->P(sum)");
  RunAcross(r);
}

// Spec §14, choosing the crossing layouts. FSDP on 8 ranks (host 0) to
// RS(0) on 2x4 ranks 8-15 (host 1), 16 MiB: sending each of the two
// replicas its block moves the tensor twice between hosts; crossing with
// mesh dim 0 also splitting rows (S(0)[1]S(0)[0]: the first candidate of
// the cheapest price) moves it once, and the replicas all_gather on their
// own host.
TEST(CrossMeshTest, DestinationReplicasGatherAfterInsteadOfEachReceivingItsCopy) {
  CrossMeshRequest r{Spec({8}, "S(0)", {4096, 1024}),
                     Spec({2, 4}, "RS(0)", {4096, 1024}),
                     {0, 1, 2, 3, 4, 5, 6, 7},
                     {8, 9, 10, 11, 12, 13, 14, 15}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->crossing_dst.state().ToString(), "S(0)[1]S(0)[0]");
  EXPECT_EQ(plan->after.Trace(), "S(0)[1]S(0)[0]->RS(0)");
  EXPECT_EQ(plan->after.steps[0].step.kind, StepKind::kAllGather);
  int64_t sent = 0;
  for (int64_t b : plan->BytesSent()) sent += b;
  EXPECT_EQ(sent, 4096 * 1024 * 4);  // the tensor once, not twice
}

// Without a price for the crossing (pytorch models) there is nothing to
// choose by: the crossing layouts are the plain ones (Partials Replicate).
TEST(CrossMeshTest, UnpricedCrossingsKeepThePlainLayouts) {
  CrossMeshRequest r{Spec({8}, "S(0)", {4096, 1024}),
                     Spec({2, 4}, "RS(0)", {4096, 1024}),
                     {0, 1, 2, 3, 4, 5, 6, 7},
                     {8, 9, 10, 11, 12, 13, 14, 15}};
  PlanOptions options{PlanMode::kPyTorch};
  options.cost_model = *MakeCostModel("pytorch", 8);
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->crossing_dst.state().ToString(), "RS(0)");
  EXPECT_TRUE(plan->after.steps.empty()) << plan->after.Trace();
}

// Random moves (harness/cross_mesh_case.h: meshes of 1-3 dims, uneven and
// empty shards, every dtype, Partials on either side, disjoint, overlapping
// and equal rank sets), run and checked as `reshard verify --cross-mesh`
// does; a few may be skipped (no plan), none may fail.
TEST(CrossMeshTest, RandomMovesOnThreads) {
  int passed = 0;
  for (uint64_t i = 0; i < 40; ++i) {
    const CrossMeshCase c = RandomCrossMeshCase(16 + i, 8, 12);
    const CrossMeshReport r = VerifyCrossMeshOnThreads(c, GlooOptions());
    EXPECT_NE(r.report.outcome, Outcome::kFailed) << c.CommandLine() << "\n" << r.report.detail;
    passed += r.report.outcome == Outcome::kPassed;
  }
  EXPECT_GE(passed, 30);
}

// A destination rank's corrupted result, or a crossing that moved other
// bytes than the plan's, fails the check, naming the rank.
TEST(CrossMeshTest, CheckFailsACorruptedResult) {
  CrossMeshRequest r{Spec({4, 2}, "S(0)S(1)", {16, 12}, DType::kI32),
                     Spec({2}, "S(1)", {16, 12}, DType::kI32),
                     {},
                     {8, 9}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const LocalTensor global = *TestTensor(DType::kI32, {16, 12}, 5, 8);
  std::vector<ParticipantResult> results = RunAcrossOnThreads(r, *plan, global, 5, GlooOptions());
  ASSERT_EQ(CheckAcross(r, *plan, global, 5, results).outcome, Outcome::kPassed);
  static_cast<int32_t*>(results[9].tensor.data())[7] += 1;  // global rank 9
  CaseReport report = CheckAcross(r, *plan, global, 5, results);
  EXPECT_EQ(report.outcome, Outcome::kFailed);
  EXPECT_THAT(report.detail, HasSubstr("rank 9: element 7 of its shard"));
  static_cast<int32_t*>(results[9].tensor.data())[7] -= 1;
  results[3].stats.bytes_sent += 4;
  report = CheckAcross(r, *plan, global, 5, results);
  EXPECT_THAT(report.detail, HasSubstr("rank 3: the crossing sent/received 100/0 bytes"));
}

TEST(CrossMeshTest, RankListsMustFitTheirMeshes) {
  CrossMeshRequest r{Spec({2}, "S(0)", {4}), Spec({2}, "R", {4}), {0, 0}, {}};
  EXPECT_THAT(PlanCrossMesh(r, PlanOptions()).status().message(),
              HasSubstr("src_ranks: rank 0 appears twice"));
  r.src_ranks = {0, 1, 2};
  EXPECT_THAT(PlanCrossMesh(r, PlanOptions()).status().message(),
              HasSubstr("src_ranks: 3 ranks for a mesh of 2"));
}

// Who joins which communicator (collectives/cross_mesh_communicators.h, what
// the Gloo runner and ConnectNcclAcross connect): source mesh 2x2 on global
// ranks 6,2,4,0 (row-major), destination mesh 3 on 4,9,1; participants
// 0,1,2,4,6,9. Rank 6 only sends, 9 only receives, 4 is in both.
TEST(CrossMeshTest, EachParticipantJoinsTheUnionThenTheMeshesItHasRanksIn) {
  CrossMeshRequest r{
      Spec({2, 2}, "S(0)S(1)", {8, 6}), Spec({3}, "S(1)", {8, 6}), {6, 2, 4, 0}, {4, 9, 1}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  // "role:mesh sizes:rank", in joining order.
  auto joins = [&](int64_t rank) {
    absl::StatusOr<std::vector<CrossMeshMembership>> m = CrossMeshMemberships(*plan, rank);
    if (!m.ok()) return std::string(m.status().message());
    std::vector<std::string> out;
    for (const CrossMeshMembership& c : *m) {
      out.push_back(absl::StrCat(CrossMeshRoleName(c.role), ":", absl::StrJoin(c.mesh.sizes(), "x"),
                                 ":", c.rank));
    }
    return absl::StrJoin(out, " ");
  };
  EXPECT_EQ(joins(6), "union:6:4 src:2x2:0");
  EXPECT_EQ(joins(9), "union:6:5 dst:3:1");
  EXPECT_EQ(joins(4), "union:6:3 src:2x2:2 dst:3:0");
  EXPECT_EQ(joins(1), "union:6:1 dst:3:2");
  EXPECT_EQ(joins(0), "union:6:0 src:2x2:3");
  EXPECT_THAT(joins(7), HasSubstr("rank 7 takes no part in the move (its ranks are 0,1,2,4,6,9)"));
}

// Over random moves, every communicator's ranks are joined exactly once each,
// by the participants its mesh's global ranks name, and the union first.
TEST(CrossMeshTest, EveryCommunicatorRankIsJoinedOnceByItsGlobalRank) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const CrossMeshCase c = RandomCrossMeshCase(seed, 8, 12);
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMeshCase(c);
    if (!plan.ok()) continue;  // no plan: nothing to join
    std::vector<int64_t> union_joined, src_joined, dst_joined;
    for (int64_t rank : plan->participants) {
      absl::StatusOr<std::vector<CrossMeshMembership>> m = CrossMeshMemberships(*plan, rank);
      ASSERT_TRUE(m.ok()) << m.status();
      ASSERT_FALSE(m->empty());
      EXPECT_EQ(m->front().role, CrossMeshRole::kUnion) << c.CommandLine();
      for (const CrossMeshMembership& j : *m) {
        if (j.role == CrossMeshRole::kUnion) union_joined.push_back(j.rank);
        if (j.role == CrossMeshRole::kSource) {
          EXPECT_EQ(plan->src_ranks[j.rank], rank) << c.CommandLine();
          src_joined.push_back(j.rank);
        }
        if (j.role == CrossMeshRole::kDestination) {
          EXPECT_EQ(plan->dst_ranks[j.rank], rank) << c.CommandLine();
          dst_joined.push_back(j.rank);
        }
      }
    }
    auto all_of = [](std::vector<int64_t> joined, size_t n) {
      std::sort(joined.begin(), joined.end());
      std::vector<int64_t> want(n);
      std::iota(want.begin(), want.end(), 0);
      return joined == want;
    };
    EXPECT_TRUE(all_of(union_joined, plan->participants.size())) << c.CommandLine();
    EXPECT_TRUE(all_of(src_joined, plan->src_ranks.size())) << c.CommandLine();
    EXPECT_TRUE(all_of(dst_joined, plan->dst_ranks.size())) << c.CommandLine();
  }
}

// Pricing (spec §14): the crossing is one grouped send/recv over the
// participants, priced by the model's exchange rule. The trainer case with
// alpha-beta's default profile (call_us 6.6; intra-host {0.6 us, 370 GB/s},
// inter-host {2.7 us, 46 GB/s}): inference rank 8 receives the busiest load,
// 4 messages (trainer ranks (0..3, 0)) of 96 bytes, 384 bytes; ranks 0-9
// span two hosts of 8, so the inter-host link:
//   6.6 + 4 * 2.7 + 384 / (46 * 1e3) us.
// With 16 devices per host every participant shares one host: the intra link.
TEST(CrossMeshTest, AlphaBetaPricesTheCrossingAsOneGroupedSendRecv) {
  CrossMeshRequest r{Spec({4, 2}, "S(0)S(1)", {16, 12}), Spec({2}, "S(1)", {16, 12}), {}, {8, 9}};
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *MakeAlphaBetaCostModel(DefaultGpuProfile(), 8);
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->load.max_messages, 4);
  ASSERT_TRUE(plan->crossing_cost.has_value());
  EXPECT_DOUBLE_EQ(*plan->crossing_cost, 6.6 + 4 * 2.7 + 384 / (46 * 1e3));
  ASSERT_TRUE(plan->cost.has_value());
  EXPECT_DOUBLE_EQ(*plan->cost, plan->before.cost + *plan->crossing_cost + plan->after.cost);
  options.cost_model = *MakeAlphaBetaCostModel(DefaultGpuProfile(), 16);
  plan = PlanCrossMesh(r, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(*plan->crossing_cost, 6.6 + 4 * 0.6 + 384 / (370 * 1e3));
}

// On one mesh and the same ranks, the crossing of S(0)S(1)R -> RS(0)S(1)
// (2x2x2, 512 x 512 x 8) is the native plan's single exchange step (issue
// 16): both models price the two alike, bit for bit, by one rule.
TEST(CrossMeshTest, CrossingOnTheSameRanksCostsWhatTheSameExchangeStepCosts) {
  const DistSpec src = Spec({2, 2, 2}, "S(0)S(1)R", {512, 512, 8});
  const DistSpec dst = Spec({2, 2, 2}, "RS(0)S(1)", {512, 512, 8});
  for (const char* name : {"nccl", "alpha-beta"}) {
    SCOPED_TRACE(name);
    PlanOptions options{PlanMode::kNative};
    options.cost_model = *MakeCostModel(name, 8);
    absl::StatusOr<Plan> same = PlanRedistribution(src, dst, options);
    ASSERT_TRUE(same.ok()) << same.status();
    ASSERT_EQ(same->steps.size(), 1u);
    ASSERT_EQ(same->steps[0].step.kind, StepKind::kExchange);
    absl::StatusOr<CrossMeshPlan> cross =
        PlanCrossMesh(CrossMeshRequest{src, dst, {}, {}}, options);
    ASSERT_TRUE(cross.ok()) << cross.status();
    ASSERT_TRUE(cross->cost.has_value());
    EXPECT_EQ(*cross->crossing_cost, same->steps[0].cost);
    EXPECT_EQ(*cross->cost, same->cost);
  }
}

// The pytorch models price no exchange: the crossing and the total are none.
TEST(CrossMeshTest, PytorchModelsLeaveTheCrossingUnpriced) {
  CrossMeshRequest r{Spec({2}, "S(0)", {8}), Spec({2}, "R", {8}), {}, {2, 3}};
  PlanOptions options{PlanMode::kPyTorch};
  options.cost_model = *MakeCostModel("pytorch", 8);
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->crossing_cost.has_value());
  EXPECT_FALSE(plan->cost.has_value());
}

// Trainer case: every trainer rank sends its 4 x 6 f32 block (96 bytes)
// once; each inference rank must receive its whole 16 x 6 block (384 bytes:
// it holds nothing before), the trainer ranks nothing.
TEST(CrossMeshTest, BytesSentAndTheReceiveLowerBoundPerParticipant) {
  CrossMeshRequest r{Spec({4, 2}, "S(0)S(1)", {16, 12}), Spec({2}, "S(1)", {16, 12}), {}, {8, 9}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->BytesSent(), std::vector<int64_t>({96, 96, 96, 96, 96, 96, 96, 96, 0, 0}));
  EXPECT_EQ(plan->ReceiveLowerBoundBytes(),
            std::vector<int64_t>({0, 0, 0, 0, 0, 0, 0, 0, 384, 384}));
}

// Overlapping ranks keep what they hold: the routes' bytes received by
// each participant (local copies aside) are exactly its lower bound, and
// the bytes sent add up to the bytes received.
TEST(CrossMeshTest, RoutesReceiveExactlyTheLowerBound) {
  CrossMeshRequest r{
      Spec({2, 2}, "S(0)R", {7, 5}), Spec({4}, "S(1)", {7, 5}), {0, 1, 2, 3}, {2, 3, 4, 5}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> received(plan->participants.size(), 0);
  for (const SliceRoute& route : plan->routes) {
    if (route.sender != route.receiver) received[route.receiver] += 4 * BoxElements(route.box);
  }
  EXPECT_EQ(received, plan->ReceiveLowerBoundBytes());
  const std::vector<int64_t> sent = plan->BytesSent();
  EXPECT_EQ(std::accumulate(sent.begin(), sent.end(), int64_t{0}),
            std::accumulate(received.begin(), received.end(), int64_t{0}));
  EXPECT_GT(received[2] + received[3], 0);  // what 2 and 3 lack of their new blocks
}

// A crossing's routes take time and memory in proportion to its slices:
// S(0) over 1025 ranks to R on 1024 others is 1025 x 1024 slices, over
// kMaxCrossingSlices (2^20), refused before routing; S(0) to S(0) on as
// many shifted ranks is 1025 slices (a few of them split), planned.
TEST(CrossMeshTest, CrossingsOfTooManySlicesAreRefusedUpFront) {
  std::vector<int64_t> shifted(1025), others(1024);
  for (int64_t i = 0; i < 1025; ++i) shifted[i] = i + 1;
  for (int64_t i = 0; i < 1024; ++i) others[i] = 2000 + i;
  CrossMeshRequest r{Spec({1025}, "S(0)", {4100}), Spec({1024}, "R", {4100}), {}, others};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted) << plan.status();
  EXPECT_THAT(plan.status().message(),
              HasSubstr("dst_ranks: the crossing would move 1049600 slices"));
  r = CrossMeshRequest{Spec({1025}, "S(0)", {4100}), Spec({1025}, "S(0)", {4100}), {}, shifted};
  plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->routes.size(), 1025u);
}

// Spec §14 "Memory": S(0) on ranks 0, 1 to R on ranks 2, 3 (f32 8) under
// 40 bytes per rank runs in 4 rounds (planner/cross_mesh/crossing_rounds_test); each
// destination rank still receives its 32 bytes and matches the tensor.
TEST(CrossMeshTest, RoundsUnderAMemoryLimitRunAndMatchTheGroundTruth) {
  CrossMeshRequest r{Spec({2}, "S(0)", {8}), Spec({2}, "R", {8}), {0, 1}, {2, 3}};
  PlanOptions options{PlanMode::kPyTorch};
  options.max_memory = 40;
  int64_t rounds = 0;
  const std::vector<CrossingStats> stats = RunAcross(r, options, &rounds);
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(rounds, 4);
  EXPECT_EQ(stats[2].bytes_received, 32);
  EXPECT_EQ(stats[0].bytes_sent, 32);
}

// Overlapping ranks, replicas, uneven 7 x 5, native plans: under a limit
// halfway between the least the crossing needs and its peak the crossing
// splits, and runs to the right blocks with exact byte counts (CheckAcross).
TEST(CrossMeshTest, UnevenOverlappingMoveInRoundsMatchesTheGroundTruth) {
  CrossMeshRequest r{
      Spec({2, 2}, "S(0)R", {7, 5}), Spec({4}, "S(1)", {7, 5}), {0, 1, 2, 3}, {2, 3, 4, 5}};
  absl::StatusOr<CrossMeshPlan> unlimited = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  const std::vector<int64_t> peaks = unlimited->CrossingPeakBytes();
  const int64_t peak = *std::max_element(peaks.begin(), peaks.end());
  PlanOptions options{PlanMode::kNative};
  options.max_memory =
      unlimited->LeastCrossingBytes() + (peak - unlimited->LeastCrossingBytes()) / 2;
  int64_t rounds = 0;
  RunAcross(r, options, &rounds);
  EXPECT_GT(rounds, 1);
}

// Runs `plan` on Gloo threads and checks it as `reshard verify` does.
CaseReport RunPlan(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                   std::vector<CrossingStats>* stats = nullptr) {
  const LocalTensor global =
      *TestTensor(r.src.dtype(), r.src.global_shape(), 5, r.src.mesh().num_ranks());
  const std::vector<ParticipantResult> results =
      RunAcrossOnThreads(r, plan, global, 5, GlooOptions());
  for (const ParticipantResult& p : results) {
    if (stats != nullptr) stats->push_back(p.stats);
  }
  return CheckAcross(r, plan, global, 5, results);
}

// The issue's fan-out (S(0) on ranks 0, 1 to S(1)R on 2x4 ranks 0-7; here
// 64 x 64 bf16), relayed: the destination ranks that are not sources pass
// the pieces on, every rank gets its block, and the busiest sender moves
// one source block (8 KiB), the most a rank must receive, where the direct
// crossing's sources send 3.5 times that.
TEST(CrossMeshTest, FanOutRelayedByTheDestinationsReplicasRuns) {
  CrossMeshRequest r{Spec({2}, "S(0)", {64, 64}, DType::kBF16),
                     Spec({2, 4}, "S(1)R", {64, 64}, DType::kBF16),
                     {},
                     {}};
  absl::StatusOr<CrossMeshPlan> plain = PlanPlainCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int64_t chunks : kPipelineChunks) {
    std::optional<CrossMeshPlan> relayed = RelayedPlan(*plain, chunks);
    ASSERT_TRUE(relayed.has_value());
    std::vector<CrossingStats> stats;
    const CaseReport report = RunPlan(r, *relayed, &stats);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << chunks << ": " << report.detail;
    EXPECT_EQ(MaxSent(stats), 64 * 32 * 2) << chunks;
  }
  const std::vector<int64_t> direct = plain->BytesSent();
  EXPECT_EQ(*std::max_element(direct.begin(), direct.end()), 7 * 32 * 32 * 2);
}

// Issue 43's C4 (S(0) over 16 ranks, two hosts of 8, to S(0) over the first
// host's 8; here 64 x 64 bf16) spread over host 0's rails: ranks 0-3 take
// host 1's blocks through their NICs and pass them on to ranks 4-7 a round
// later, keeping them aside between (spec §14 "Rails"); every rank gets its
// block and every participant sends and receives what the plan counts.
TEST(CrossMeshTest, CrossingSpreadOverTheReceivingHostsRailsRuns) {
  CrossMeshRequest r{Spec({16}, "S(0)", {64, 64}, DType::kBF16),
                     Spec({8}, "S(0)", {64, 64}, DType::kBF16),
                     {},
                     {}};
  absl::StatusOr<CrossMeshPlan> plain = PlanPlainCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int64_t chunks : kPipelineChunks) {
    std::optional<CrossMeshPlan> spread = SpreadPlan(*plain, chunks, 8);
    ASSERT_TRUE(spread.has_value());
    ASSERT_TRUE(spread->Staged());
    const CaseReport report = RunPlan(r, *spread);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << chunks << ": " << report.detail;
  }
}

// Random moves (seeds from `first_seed`) remade over rails of 2 or 4 ranks
// a host with 1-3 chunks by `remake` (SpreadPlan or StagedPlan), run and
// checked; returns how many it remade.
int RunRandomMovesRemadeOverRails(uint64_t first_seed,
                                  std::optional<CrossMeshPlan> (*remake)(const CrossMeshPlan&,
                                                                         int64_t, int64_t,
                                                                         int64_t)) {
  int remade = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    const CrossMeshCase c = RandomCrossMeshCase(first_seed + i, 8, 12);
    absl::StatusOr<CrossMeshRequest> r = RequestOf(c);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) continue;
    absl::StatusOr<CrossMeshPlan> plan = PlanPlainCrossMesh(*r, PlanOptions{PlanMode::kNative});
    if (!plan.ok()) continue;
    std::optional<CrossMeshPlan> over_rails =
        remake(*plan, 1 + static_cast<int64_t>(i % 3), i % 2 == 0 ? 2 : 4, kMaxCrossingSlices);
    if (!over_rails.has_value()) continue;
    ++remade;
    const CaseReport report = RunPlan(*r, *over_rails);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << c.CommandLine() << "\n" << report.detail;
  }
  return remade;
}

// Random moves spread over rails of 2 or 4 ranks a host, run and checked.
TEST(CrossMeshTest, RandomMovesSpreadOverRailsOnThreads) {
  EXPECT_GE(RunRandomMovesRemadeOverRails(300, SpreadPlan), 10);
}

// A trainer-to-inference transpose (S(0)S(1) on 4x4 ranks 0-15 to S(1)S(0)
// on 4x4 ranks 16-31, hosts of 4; 64 x 64 bf16): under PXN rank (i, j)
// sends through NIC i of host i, every rank of a host on one NIC. Staged
// over rails (spec §11.2) the sends leave on every NIC and stagers on the
// receiving hosts pass them on; the nccl model plans it so, and it runs.
TEST(CrossMeshTest, TransposeAcrossMeshesStagedOverRailsRuns) {
  std::vector<int64_t> src_ranks(16), dst_ranks(16);
  for (int64_t i = 0; i < 16; ++i) src_ranks[i] = i, dst_ranks[i] = 16 + i;
  CrossMeshRequest r{Spec({4, 4}, "S(0)S(1)", {64, 64}, DType::kBF16),
                     Spec({4, 4}, "S(1)S(0)", {64, 64}, DType::kBF16), src_ranks, dst_ranks};
  absl::StatusOr<CrossMeshPlan> plain = PlanPlainCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int64_t chunks : kPipelineChunks) {
    std::optional<CrossMeshPlan> staged = StagedPlan(*plain, chunks, 4);
    ASSERT_TRUE(staged.has_value());
    ASSERT_TRUE(staged->Staged());
    const CaseReport report = RunPlan(r, *staged);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << chunks << ": " << report.detail;
  }
  PlanOptions nccl{PlanMode::kNative};
  nccl.cost_model = *MakeCostModel("nccl", 4);
  CrossMeshRequest big = r;
  big.src = Spec({4, 4}, "S(0)S(1)", {8192, 8192}, DType::kBF16);
  big.dst = Spec({4, 4}, "S(1)S(0)", {8192, 8192}, DType::kBF16);
  absl::StatusOr<CrossMeshPlan> planned = PlanCrossMesh(big, nccl);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_TRUE(planned->Staged());
  absl::StatusOr<CrossMeshPlan> direct = PlanPlainCrossMesh(big, nccl);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_LT(*planned->cost, *direct->cost / 2);
}

// Random moves staged over rails of 2 or 4 ranks a host, run and checked.
TEST(CrossMeshTest, RandomMovesStagedOverRailsOnThreads) {
  EXPECT_GE(RunRandomMovesRemadeOverRails(700, StagedPlan), 10);
}

// Random moves (as RandomMovesOnThreads) whose crossing relays, run relayed
// and checked: results, and bytes sent and received as the plan counts them.
TEST(CrossMeshTest, RandomMovesRelayedOnThreads) {
  int relayed_cases = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    const CrossMeshCase c = RandomCrossMeshCase(100 + i, 8, 12);
    absl::StatusOr<CrossMeshRequest> r = RequestOf(c);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(*r, PlanOptions{PlanMode::kNative});
    if (!plan.ok()) continue;
    std::optional<CrossMeshPlan> relayed = RelayedPlan(*plan, 1 + static_cast<int64_t>(i % 3));
    if (!relayed.has_value()) continue;
    ++relayed_cases;
    const CaseReport report = RunPlan(*r, *relayed);
    EXPECT_EQ(report.outcome, Outcome::kPassed) << c.CommandLine() << "\n" << report.detail;
  }
  EXPECT_GE(relayed_cases, 10);
}

}  // namespace
}  // namespace reshard
