// The native cost model (spec §6.2), one hand-derived example per rule.
//
// Unless a test says otherwise: a 2x4 mesh with 4 devices per host (mesh dim
// 1 inside a host, mesh dim 0 across hosts), an 8x16 f32 tensor (512 bytes),
// intra-host alpha 2 us and 1 GB/s (1000 bytes/us), inter-host alpha 10 us
// and 0.5 GB/s (500 bytes/us), memory 4 GB/s (4000 bytes/us).
#include "planner/costs/alpha_beta_cost_model.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

const Placement R = Placement::Replicate();
const Placement S0 = Placement::Shard(0);
const Placement S1 = Placement::Shard(1);
const Placement P = Placement::Partial(ReduceOp::kSum);

CostProfile TestProfile() {
  CostProfile p;
  p.name = "test";
  p.intra_host = {2, 1};
  p.inter_host = {10, 0.5};
  p.memory_gbps = 4;
  return p;
}

double Cost(const CostProfile& profile, int64_t devices_per_host, std::vector<int64_t> mesh,
            std::vector<int64_t> shape, std::vector<Placement> current, Step step) {
  const std::shared_ptr<const CostModel> model = *MakeAlphaBetaCostModel(profile, devices_per_host);
  CostProblem problem{*DeviceMesh::Create(std::move(mesh)), std::move(shape), 4};
  return model->Bind(problem)->StepCost(DistState::WithDefaultOrder(current), step);
}

double Cost(std::vector<Placement> current, Step step) {
  return Cost(TestProfile(), 4, {2, 4}, {8, 16}, std::move(current), step);
}

Step On(int mesh_dim, Placement src, Placement dst) {
  return MakeStep(MeshDimSet::Single(mesh_dim), src, dst);
}

// n = 4 intra-host; local block 2x16 (128 B), gathered 512 B:
// 3 * 2 + 3/4 * 512 / 1000.
TEST(AlphaBetaCostModelTest, AllGatherMovesTheGatheredBlockOnARing) {
  EXPECT_DOUBLE_EQ(Cost({R, S0}, On(1, S0, R)), 6 + 0.384);
}

// Mesh dim 0 crosses hosts: n = 2, local 4x16 (256 B), gathered 512 B:
// 1 * 10 + 1/2 * 512 / 500.
TEST(AlphaBetaCostModelTest, InterHostMeshDimUsesTheInterHostLink) {
  EXPECT_DOUBLE_EQ(Cost({S0, R}, On(0, S0, R)), 10 + 0.512);
}

// With 8 devices per host the whole 2x4 mesh is one host: 1 * 2 + 256 / 1000.
TEST(AlphaBetaCostModelTest, DevicesPerHostDecidesWhichMeshDimsCrossHosts) {
  EXPECT_DOUBLE_EQ(Cost(TestProfile(), 8, {2, 4}, {8, 16}, {S0, R}, On(0, S0, R)), 2 + 0.256);
}

// Input 8x16 (512 B) unscattered: 3 * 2 + 3/4 * 512 / 1000.
TEST(AlphaBetaCostModelTest, ReduceScatterMovesTheInputBlock) {
  EXPECT_DOUBLE_EQ(Cost({R, P}, On(1, P, S1)), 6 + 0.384);
}

// Twice the ring formula on the local 512 B: 2 * (3 * 2 + 3/4 * 512 / 1000).
TEST(AlphaBetaCostModelTest, AllReduceIsTwiceTheRing) {
  EXPECT_DOUBLE_EQ(Cost({R, P}, On(1, P, R)), 12 + 0.768);
}

// Local block 2x16 (128 B), sent to the 3 peers at once, a quarter kept:
// one hop, 1 * 2 + 3/4 * 128 / 1000 (spec §6.2: concurrent sends).
TEST(AlphaBetaCostModelTest, AllToAllIsConcurrentSendsOfTheLocalBlock) {
  EXPECT_DOUBLE_EQ(Cost({R, S0}, On(1, S0, S1)), 2 + 0.096);
}

// A per-call latency of 5 us is paid once by every communicating call,
// whatever its group, and by no local step: all_gather 5 + 3 * 2 + 0.384;
// the group {0,1} gather 5 + 70 + 0.896 (one call, not two); chunk 128 / 4000.
TEST(AlphaBetaCostModelTest, CallLatencyOncePerCommunicatingStep) {
  CostProfile p = TestProfile();
  p.call_us = 5;
  EXPECT_DOUBLE_EQ(Cost(p, 4, {2, 4}, {8, 16}, {R, S0}, On(1, S0, R)), 5 + 6 + 0.384);
  EXPECT_DOUBLE_EQ(Cost(p, 4, {2, 4}, {8, 16}, {S0, S0}, MakeStep(MeshDimSet::Of({0, 1}), S0, R)),
                   5 + 70 + 0.896);
  EXPECT_DOUBLE_EQ(Cost(p, 4, {2, 4}, {8, 16}, {R, R}, On(1, R, S1)), 128.0 / 4000);
  EXPECT_EQ(Cost(p, 4, {1, 4}, {8, 16}, {S0, R}, On(0, S0, R)), 0);  // a group of one
}

// all_to_all and permute are the same kind of exchange: on group {0,1}
// (n = 8, alpha 10, 500 B/us), S(0)S(0) -> S(1)S(1) as one all_to_all moves
// 7/8 of the local 1x16 block (64 B) in one hop: 10 + 56 / 500; the permute
// S(0)S(1) -> S(1)S(0) at most its whole 4x4 block (64 B): 10 + 64 / 500.
TEST(AlphaBetaCostModelTest, AllToAllAndPermuteAreBothOneExchange) {
  EXPECT_DOUBLE_EQ(Cost({S0, S0}, MakeGroupStep(std::vector<int>{0, 1}, S0, S1)), 10 + 56.0 / 500);
  EXPECT_DOUBLE_EQ(Cost({S0, S1}, MakePermute({{0, 1}, {1, 0}})), 10 + 64.0 / 500);
}

// Bounds (spec §5.2): rings by hops, exchanges and calls shared among the 2
// mesh dims of size > 1. call 5: all_gather on mesh dim 1 (n = 4, alpha 2)
// 5/2 + 3 * 2; all_to_all on mesh dim 0 (alpha 10) 5/2 + 10/2; permute
// 5/2 + 10.
TEST(AlphaBetaCostModelTest, LowerBoundsShareTheCallAndTheExchangeHop) {
  CostProfile p = TestProfile();
  p.call_us = 5;
  const std::shared_ptr<const CostModel> model = *MakeAlphaBetaCostModel(p, 4);
  const std::unique_ptr<const BoundCostModel> bound =
      model->Bind(CostProblem{*DeviceMesh::Create({2, 4}), {8, 16}, 4});
  EXPECT_DOUBLE_EQ(bound->LowerBound(StepKind::kAllGather, 1), 2.5 + 6);
  EXPECT_DOUBLE_EQ(bound->LowerBound(StepKind::kAllToAll, 0), 2.5 + 5);
  EXPECT_DOUBLE_EQ(bound->LowerBound(StepKind::kPermute, 0), 2.5 + 10);
  EXPECT_EQ(bound->LowerBound(StepKind::kChunk, 0), 0);
}

// Chunk writes its output, 8x4 (128 B), at 4000 B/us; partition writes the
// whole local block (512 B, a sum zero-fills all but one rank's copy).
TEST(AlphaBetaCostModelTest, LocalStepsCostTheirCopyAtMemoryBandwidth) {
  EXPECT_DOUBLE_EQ(Cost({R, R}, On(1, R, S1)), 128.0 / 4000);
  EXPECT_DOUBLE_EQ(Cost({R, R}, On(1, R, P)), 512.0 / 4000);
}

// Group {0,1}: n = 8 on the slowest link (alpha 10, 500 B/us); local block
// 1x16 (64 B), gathered 512 B: 7 * 10 + 7/8 * 512 / 500.
TEST(AlphaBetaCostModelTest, MultiDimGroupRunsAtItsSlowestLink) {
  EXPECT_DOUBLE_EQ(Cost({S0, S0}, MakeStep(MeshDimSet::Of({0, 1}), S0, R)), 70 + 0.896);
}

// S(0)S(1) -> S(1)S(0) on group {0,1}: n = 8 on the slowest link (alpha 10,
// 500 B/us), one exchange of at most the local block 4x4 (64 B): 10 + 64 / 500.
TEST(AlphaBetaCostModelTest, PermuteIsOneExchangeOfTheLocalBlock) {
  EXPECT_DOUBLE_EQ(Cost({S0, S1}, MakePermute({{0, 1}, {1, 0}})), 10 + 0.128);
}

// S(0)R -> RS(0) as one exchange over {0,1} (slowest link: alpha 10, 500
// B/us). Rank (a, b) = member 4a + b holds rows 4a..4a+3, replicated along
// mesh dim 1, and needs rows 2b, 2b+1: members 2, 3 need rows of the other
// half from members 4-7, members 4, 5 from 0-3; each 2x16 block (128 B)
// from its own idle holder (spec §11.1). The busiest member sends or
// receives one message of 128 B: 10 + 128 / 500.
TEST(AlphaBetaCostModelTest, ExchangeIsItsBusiestMembersMessagesAndBytes) {
  EXPECT_DOUBLE_EQ(Cost({S0, R}, MakeExchange(MeshDimSet::Of({0, 1}), {{1, 0}})), 10 + 0.256);
}

// The exchange bound is one message's latency: at most any communicating
// step on the mesh dim (cost_model.h).
TEST(AlphaBetaCostModelTest, ExchangeBoundIsOneLatency) {
  const std::shared_ptr<const CostModel> model = *MakeAlphaBetaCostModel(TestProfile(), 4);
  CostProblem problem{*DeviceMesh::Create({2, 4}), {8, 16}, 4};
  const std::unique_ptr<const BoundCostModel> bound = model->Bind(problem);
  EXPECT_EQ(bound->LowerBound(StepKind::kExchange, 0), 10);
  EXPECT_EQ(bound->LowerBound(StepKind::kExchange, 1), 2);
}

// A size-1 mesh dim moves nothing.
TEST(AlphaBetaCostModelTest, CollectiveOnAGroupOfOneIsFree) {
  EXPECT_EQ(Cost(TestProfile(), 4, {1, 4}, {8, 16}, {S0, R}, On(0, S0, R)), 0);
  EXPECT_EQ(Cost(TestProfile(), 4, {1, 4}, {8, 16}, {P, R}, On(0, P, R)), 0);
}

// Uneven shapes are padded as the executor pads (torch.chunk, spec §11).
TEST(AlphaBetaCostModelTest, UnevenShapesArePaddedToTheLargestChunk) {
  const CostProfile p = TestProfile();
  // 5x3 on 4 ranks: chunk ceil(5/4) = 2 rows (24 B), gathered 4 * 24 = 96 B
  // (not 60): 3 * 2 + 3/4 * 96 / 1000.
  EXPECT_DOUBLE_EQ(Cost(p, 8, {4}, {5, 3}, {S0}, On(0, S0, R)), 6 + 0.072);
  // 5 split by mesh dim 0 then 1: ceil(5/2) = 3, ceil(3/2) = 2 (8 B);
  // gathered on dim 1: 16 B: 1 * 2 + 1/2 * 16 / 1000.
  EXPECT_DOUBLE_EQ(Cost(p, 8, {2, 2}, {5}, {S0, S0}, On(1, S0, R)), 2 + 0.008);
  // reduce_scatter of 5 onto 4 ranks pads the input to 4 * 2 (32 B).
  EXPECT_DOUBLE_EQ(Cost(p, 8, {4}, {5}, {P}, On(0, P, S0)), 6 + 0.024);
}

TEST(AlphaBetaCostModelTest, FingerprintChangesWithEveryParameter) {
  const std::string base = (*MakeAlphaBetaCostModel(TestProfile(), 4))->fingerprint();
  std::vector<CostProfile> changed(7, TestProfile());
  changed[6].call_us = 1;
  changed[0].name = "other";
  changed[1].intra_host.alpha_us = 2.0000001;
  changed[2].intra_host.beta_gbps = 1.5;
  changed[3].inter_host.alpha_us = 11;
  changed[4].inter_host.beta_gbps = 0.25;
  changed[5].memory_gbps = 8;
  for (const CostProfile& p : changed) {
    EXPECT_NE((*MakeAlphaBetaCostModel(p, 4))->fingerprint(), base) << p.name;
  }
  EXPECT_NE((*MakeAlphaBetaCostModel(TestProfile(), 8))->fingerprint(), base);
  EXPECT_EQ((*MakeAlphaBetaCostModel(TestProfile(), 4))->fingerprint(), base);
}

TEST(AlphaBetaCostModelTest, ByNameIsTheDefaultGpuProfileAndPricesNativeSteps) {
  const std::shared_ptr<const CostModel> model = *MakeCostModel("alpha-beta", 8);
  EXPECT_EQ(model->fingerprint(), (*MakeAlphaBetaCostModel(DefaultGpuProfile(), 8))->fingerprint());
  EXPECT_TRUE(model->prices_native_steps());
  EXPECT_FALSE((*MakeCostModel("pytorch", 8))->prices_native_steps());
  EXPECT_FALSE((*MakeCostModel("pytorch-const", 8))->prices_native_steps());
}

TEST(AlphaBetaCostModelTest, BuiltInProfilesAreValid) {
  EXPECT_TRUE(ValidateCostProfile(DefaultGpuProfile()).ok());
  EXPECT_TRUE(ValidateCostProfile(GlooLoopbackProfile()).ok());
}

TEST(AlphaBetaCostModelTest, InvalidProfileIsRejectedNamingTheField) {
  CostProfile p = TestProfile();
  p.inter_host.beta_gbps = 0;
  EXPECT_THAT(MakeAlphaBetaCostModel(p, 4).status().message(), HasSubstr("inter_host.beta_gbps"));
  p = TestProfile();
  p.intra_host.alpha_us = -1;
  EXPECT_THAT(MakeAlphaBetaCostModel(p, 4).status().message(), HasSubstr("intra_host.alpha_us"));
  EXPECT_THAT(MakeAlphaBetaCostModel(TestProfile(), 0).status().message(),
              HasSubstr("must be >= 1"));
}

// The split the fit relies on: time = hops * alpha + link_bytes / beta.
TEST(AlphaBetaCostModelTest, TermsRecombineIntoTheFormula) {
  const AlphaBetaTerms t = CommunicationTerms(StepKind::kAllReduce, 4, 1000);
  EXPECT_DOUBLE_EQ(t.hops, 6);
  EXPECT_DOUBLE_EQ(t.link_bytes, 1500);
  EXPECT_DOUBLE_EQ(TimeOnLinkUs(t, {2, 1}), 12 + 1.5);
  EXPECT_EQ(CommunicationTerms(StepKind::kAllGather, 1, 1000).hops, 0);
}

}  // namespace
}  // namespace reshard
