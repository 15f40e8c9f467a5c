// Worked examples of the planner core, one per rule: each edge kind of spec §4,
// each cost-model rule of spec §6, and the step model (planner/steps/step.h). Every
// expected value is derived by hand in the comment above it; the goldens
// (parity_test) cover the same rules at scale.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/search/transitions.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceMesh Mesh(std::vector<int64_t> sizes) { return *DeviceMesh::Create(std::move(sizes)); }

DistState State(const DeviceMesh& mesh, absl::string_view text, int tensor_ndim = 2) {
  std::vector<int64_t> shape(tensor_ndim, 64);
  absl::StatusOr<DistSpec> spec = DistSpec::Parse(mesh, text, shape, DType::kF32);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec->state();
}

constexpr unsigned Ops(std::initializer_list<ReduceOp> ops) {
  unsigned mask = 0;
  for (ReduceOp op : ops) mask |= 1u << static_cast<int>(op);
  return mask;
}

// The edges out of `state` (spec §4) as "src->dst kind on mesh dim m" strings.
std::vector<std::string> Edges(const DistState& state, int tensor_ndim, unsigned ops,
                               StepKind only) {
  std::vector<Step> steps;
  AppendTransitions(state, tensor_ndim, ops, &steps);
  std::vector<std::string> out;
  for (const Step& s : steps) {
    if (s.kind == only) out.push_back(s.ToString());
  }
  return out;
}

Step On(int mesh_dim, Placement src, Placement dst) {
  return MakeStep(MeshDimSet::Single(mesh_dim), src, dst);
}

const Placement R = Placement::Replicate();
const Placement S0 = Placement::Shard(0);
const Placement S1 = Placement::Shard(1);
const Placement Psum = Placement::Partial(ReduceOp::kSum);

// --- Edges (spec §4) --------------------------------------------------------

// S(0)[1]S(0)[0]: tensor dim 0 is split by mesh dim 1 first, then mesh dim 0,
// so only mesh dim 0 may leave it; it moves to S(1).
TEST(EdgeTest, AllToAllMovesTheLastMeshDimOfAnOrder) {
  const DeviceMesh mesh = Mesh({2, 2});
  const DistState s = State(mesh, "S(0)[1]S(0)[0]");
  EXPECT_THAT(Edges(s, 2, 0, StepKind::kAllToAll),
              ElementsAre("S(0)->S(1) all_to_all on mesh dim 0"));
  EXPECT_EQ(ApplyStep(s, On(0, S0, S1)).ToString(), "S(1)S(0)");
}

// Same state: all_gather also only from the last split, leaving RS(0).
TEST(EdgeTest, AllGatherUndoesOnlyTheLastSplit) {
  const DeviceMesh mesh = Mesh({2, 2});
  const DistState s = State(mesh, "S(0)[1]S(0)[0]");
  EXPECT_THAT(Edges(s, 2, 0, StepKind::kAllGather),
              ElementsAre("S(0)->R all_gather on mesh dim 0"));
  EXPECT_EQ(ApplyStep(s, On(0, S0, R)).ToString(), "RS(0)");
}

// Every Partial mesh dim may all_reduce, ascending.
TEST(EdgeTest, AllReduceFromEveryPartialMeshDim) {
  const DeviceMesh mesh = Mesh({2, 2});
  EXPECT_THAT(
      Edges(State(mesh, "P(sum)P(avg)"), 2, 0, StepKind::kAllReduce),
      ElementsAre("P(sum)->R all_reduce on mesh dim 0", "P(avg)->R all_reduce on mesh dim 1"));
}

// R -> S(b) for every tensor dim b; no data moves, so it is free in both models.
TEST(EdgeTest, ChunkIsLocalAndFree) {
  const DeviceMesh mesh = Mesh({4});
  EXPECT_THAT(Edges(State(mesh, "R"), 2, 0, StepKind::kChunk),
              ElementsAre("R->S(0) chunk on mesh dim 0", "R->S(1) chunk on mesh dim 0"));
  EXPECT_FALSE(IsCommunicating(StepKind::kChunk));
  const CostProblem problem{mesh, {64, 64}, 4};
  for (const char* name : {"pytorch", "pytorch-const"}) {
    EXPECT_EQ((*MakeCostModel(name))->Bind(problem)->StepCost(State(mesh, "R"), On(0, R, S0)), 0)
        << name;
  }
}

// P(op) -> S(b) for every tensor dim b.
TEST(EdgeTest, ReduceScatterToEveryTensorDim) {
  const DeviceMesh mesh = Mesh({2});
  EXPECT_THAT(Edges(State(mesh, "P(max)"), 2, Ops({ReduceOp::kMax}), StepKind::kReduceScatter),
              ElementsAre("P(max)->S(0) reduce_scatter on mesh dim 0",
                          "P(max)->S(1) reduce_scatter on mesh dim 0"));
}

// R -> P(op) only for the ops of source and target (the mask), in op order.
TEST(EdgeTest, PartitionOnlyUsesOpsOfSourceOrTarget) {
  const DeviceMesh mesh = Mesh({2});
  EXPECT_THAT(Edges(State(mesh, "R"), 1, Ops({ReduceOp::kMax}), StepKind::kPartition),
              ElementsAre("R->P(max) partition on mesh dim 0"));
  EXPECT_THAT(
      Edges(State(mesh, "R"), 1, Ops({ReduceOp::kAvg, ReduceOp::kSum}), StepKind::kPartition),
      ElementsAre("R->P(sum) partition on mesh dim 0", "R->P(avg) partition on mesh dim 0"));
}

// P(sum) next to P(avg) is allowed, P(max) next to P(min) is not: the
// partition edge that would make it is skipped.
TEST(EdgeTest, SumAndAvgMayCoexistButNotMaxAndMin) {
  const DeviceMesh mesh = Mesh({2, 2});
  EXPECT_TRUE(PartialOpsCompatible(Ops({ReduceOp::kSum, ReduceOp::kAvg})));
  EXPECT_FALSE(PartialOpsCompatible(Ops({ReduceOp::kMax, ReduceOp::kMin})));
  EXPECT_FALSE(PartialOpsCompatible(Ops({ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax})));
  EXPECT_THAT(
      Edges(State(mesh, "P(sum)R"), 1, Ops({ReduceOp::kSum, ReduceOp::kAvg}), StepKind::kPartition),
      ElementsAre("R->P(sum) partition on mesh dim 1", "R->P(avg) partition on mesh dim 1"));
  EXPECT_THAT(
      Edges(State(mesh, "P(max)R"), 1, Ops({ReduceOp::kMax, ReduceOp::kMin}), StepKind::kPartition),
      ElementsAre("R->P(max) partition on mesh dim 1"));
}

// From S(0)P(sum)R with a 2-D tensor, the six kinds come in spec §4 order.
TEST(EdgeTest, EdgesComeInSpecOrder) {
  const DeviceMesh mesh = Mesh({2, 2, 2});
  std::vector<Step> steps;
  AppendTransitions(State(mesh, "S(0)P(sum)R"), 2, Ops({ReduceOp::kSum}), &steps);
  std::vector<std::string> got;
  for (const Step& s : steps) got.push_back(s.ToString());
  EXPECT_THAT(
      got, ElementsAre("S(0)->S(1) all_to_all on mesh dim 0", "S(0)->R all_gather on mesh dim 0",
                       "P(sum)->R all_reduce on mesh dim 1", "R->S(0) chunk on mesh dim 2",
                       "R->S(1) chunk on mesh dim 2", "P(sum)->S(0) reduce_scatter on mesh dim 1",
                       "P(sum)->S(1) reduce_scatter on mesh dim 1",
                       "R->P(sum) partition on mesh dim 2"));
}

// S -> P, P(x) -> P(y) and X -> X are not steps.
TEST(EdgeTest, NoStepFromShardToPartialOrBetweenOps) {
  EXPECT_EQ(StepKindFor(S0, Psum), std::nullopt);
  EXPECT_EQ(StepKindFor(Psum, Placement::Partial(ReduceOp::kMax)), std::nullopt);
  EXPECT_EQ(StepKindFor(R, R), std::nullopt);
  EXPECT_EQ(StepKindFor(Psum, S1), StepKind::kReduceScatter);
}

// --- Cost models (spec §6) --------------------------------------------------

double Cost(const CostModel& model, const DeviceMesh& mesh, std::vector<int64_t> shape,
            absl::string_view state, const Step& step) {
  const CostProblem problem{mesh, shape, 4};
  return model.Bind(problem)->StepCost(State(mesh, state, static_cast<int>(shape.size())), step);
}

TEST(CostModelTest, ConstModelPricesByKind) {
  const DeviceMesh mesh = Mesh({2});
  const std::shared_ptr<const CostModel> m = *MakeCostModel("pytorch-const");
  EXPECT_EQ(Cost(*m, mesh, {8, 8}, "S(0)", On(0, S0, S1)), 1);
  EXPECT_EQ(Cost(*m, mesh, {8, 8}, "S(0)", On(0, S0, R)), 2);
  EXPECT_EQ(Cost(*m, mesh, {8, 8}, "P", On(0, Psum, S0)), 2);
  EXPECT_EQ(Cost(*m, mesh, {8, 8}, "P", On(0, Psum, R)), 4);
  EXPECT_EQ(Cost(*m, mesh, {8, 8}, "R", On(0, R, Psum)), 0);
}

// f32 [2^14, 2^14] is 2^30 bytes. On a mesh of 2 (one host): lat 0.6, bw 87.7.
constexpr int64_t k2To14 = 1 << 14;

// S(0): 2 shards, b = 0.5 GiB; S->R = ag(b*n = 1.0) = 6.6 + 0.6 + (1.0*1/2)/87.7*1e6.
TEST(CostModelTest, AllGatherPricesTheGatheredBytes) {
  const std::shared_ptr<const CostModel> m = *MakeCostModel("pytorch");
  EXPECT_DOUBLE_EQ(Cost(*m, Mesh({2}), {k2To14, k2To14}, "S(0)", On(0, S0, R)),
                   6.6 + 0.6 + 0.5 / 87.7 * 1e6);
}

// S(0)->S(1) = ag(b = 0.5) + 1.0 = 6.6 + 0.6 + (0.5*1/2)/87.7*1e6 + 1.0.
TEST(CostModelTest, AllToAllIsAllGatherOfTheShardPlusOne) {
  const std::shared_ptr<const CostModel> m = *MakeCostModel("pytorch");
  EXPECT_DOUBLE_EQ(Cost(*m, Mesh({2}), {k2To14, k2To14}, "S(0)", On(0, S0, S1)),
                   6.6 + 0.6 + 0.25 / 87.7 * 1e6 + 1.0);
}

// P(sum): no shards, b = 1 GiB; ar(1) = 6.6 + 2*0.6 + (1*2*1/2)/87.7*1e6.
TEST(CostModelTest, AllReduceMovesTwiceTheData) {
  const std::shared_ptr<const CostModel> m = *MakeCostModel("pytorch");
  EXPECT_DOUBLE_EQ(Cost(*m, Mesh({2}), {k2To14, k2To14}, "P", On(0, Psum, R)),
                   6.6 + 1.2 + 1.0 / 87.7 * 1e6);
}

// P(sum)->S(0) = rs(b = 1) = ag's formula: 6.6 + 0.6 + (1*1/2)/87.7*1e6.
TEST(CostModelTest, ReduceScatterUsesTheAllGatherFormula) {
  const std::shared_ptr<const CostModel> m = *MakeCostModel("pytorch");
  EXPECT_DOUBLE_EQ(Cost(*m, Mesh({2}), {k2To14, k2To14}, "P", On(0, Psum, S0)),
                   6.6 + 0.6 + 0.5 / 87.7 * 1e6);
}

// Mesh 2x4, 4 devices per host: from the last dim, 4 is not > 4 (intra-host),
// 2*4 = 8 > 4 makes mesh dim 0 inter-host (lat 2.7, bw 87.7*0.22). S(0)R:
// b = 0.5, ag(1.0) on dim 0 = 6.6 + 2.7 + 0.5/(87.7*0.22)*1e6. With 8 devices
// per host dim 0 is intra-host: 6.6 + 0.6 + 0.5/87.7*1e6.
TEST(CostModelTest, MeshDimsPastDevicesPerHostAreInterHost) {
  const DeviceMesh mesh = Mesh({2, 4});
  const std::vector<int64_t> shape = {k2To14, k2To14};
  EXPECT_DOUBLE_EQ(Cost(**MakeCostModel("pytorch", 4), mesh, shape, "S(0)R", On(0, S0, R)),
                   6.6 + 2.7 + 0.5 / (87.7 * 0.22) * 1e6);
  EXPECT_DOUBLE_EQ(Cost(**MakeCostModel("pytorch", 8), mesh, shape, "S(0)R", On(0, S0, R)),
                   6.6 + 0.6 + 0.5 / 87.7 * 1e6);
  // RS(0) on dim 1 stays intra-host: b = 0.25, n = 4, ag(1.0) = 6.6 + 3*0.6 + 0.75/87.7*1e6.
  EXPECT_DOUBLE_EQ(Cost(**MakeCostModel("pytorch", 4), mesh, shape, "RS(0)", On(1, S0, R)),
                   6.6 + 1.8 + 0.75 / 87.7 * 1e6);
}

TEST(CostModelTest, FingerprintNamesEveryParameter) {
  EXPECT_EQ((*MakeCostModel("pytorch", 4))->fingerprint(), "pytorch devices_per_host=4");
  EXPECT_NE((*MakeCostModel("pytorch", 4))->fingerprint(),
            (*MakeCostModel("pytorch", 8))->fingerprint());
  // pytorch-const has no parameter: devices per host does not change a cost.
  EXPECT_EQ((*MakeCostModel("pytorch-const", 4))->fingerprint(),
            (*MakeCostModel("pytorch-const", 8))->fingerprint());
  EXPECT_EQ(DefaultCostModel()->fingerprint(), (*MakeCostModel("pytorch"))->fingerprint());
  EXPECT_THAT(MakeCostModel("fast").status().message(), HasSubstr("known: pytorch, pytorch-const"));
  EXPECT_THAT(MakeCostModel("pytorch", 0).status().message(), HasSubstr("must be >= 1"));
}

// --- The step model (planner/steps/step.h) ---------------------------------------

// RS(0) then R->S(0) on mesh dim 0: mesh dim 0 splits after mesh dim 1.
TEST(StepTest, ApplyStepAppendsAnEnteringShardLast) {
  const DeviceMesh mesh = Mesh({2, 2});
  EXPECT_EQ(ApplyStep(State(mesh, "RS(0)"), On(0, R, S0)).ToString(), "S(0)[1]S(0)[0]");
}

// S(0)S(0) (order [0, 1]) leaving mesh dim 0, which is not last: legal only
// when the later split (mesh dim 1) has size 1; the state left is RS(0).
TEST(StepTest, LeavingMidOrderIsLegalOnlyPastSizeOneSplits) {
  const Step gather = On(0, S0, R);
  const DeviceMesh size_one = Mesh({2, 1});
  EXPECT_TRUE(CheckStep(State(size_one, "S(0)S(0)"), gather, size_one, 2).ok());
  EXPECT_EQ(ApplyStep(State(size_one, "S(0)S(0)"), gather), State(size_one, "RS(0)"));
  const DeviceMesh real = Mesh({2, 2});
  EXPECT_THAT(CheckStep(State(real, "S(0)S(0)"), gather, real, 2).message(),
              HasSubstr("not the last split"));
}

TEST(StepTest, CheckStepNamesTheBrokenRule) {
  const DeviceMesh mesh = Mesh({2, 2});
  const DistState s = State(mesh, "S(0)R");
  EXPECT_THAT(CheckStep(s, On(1, S0, R), mesh, 2).message(),
              HasSubstr("expects mesh dim 1 to be S(0)"));
  EXPECT_THAT(CheckStep(s, On(1, R, Placement::Shard(2)), mesh, 2).message(),
              HasSubstr("not an executable transition"));
  EXPECT_THAT(CheckStep(s, MakeStep(MeshDimSet::Of({0, 1}), R, S1), mesh, 2).message(),
              HasSubstr("expects mesh dim 0 to be R"));
}

// Mesh 2x3, [13], S(0)[1]S(0)[0]: 13 is split by mesh dim 1 (sizes 5,5,3),
// then by mesh dim 0. The gather on mesh dim 0 sees mesh dim 1's split only:
// at coordinate (1, 2) that is 3.
TEST(StepTest, LogicalShapeSplitsByEveryOtherMeshDimInOrder) {
  const DeviceMesh mesh = Mesh({2, 3});
  const DistState s = State(mesh, "S(0)[1]S(0)[0]", 1);
  EXPECT_THAT(LogicalShape(s, On(0, S0, R), mesh, {13}, {1, 2}), ElementsAre(3));
  EXPECT_THAT(LogicalShape(s, On(0, S0, R), mesh, {13}, {0, 0}), ElementsAre(5));
  // Seen from mesh dim 1: 13 split over mesh dim 0 (7, 6) at coordinate 1.
  EXPECT_THAT(LogicalShape(s, On(1, S0, R), mesh, {13}, {1, 0}), ElementsAre(6));
}

// Mesh of 4, f32, logical [13, 6]: chunks pad 13 to ceil(13/4) = 4 rows.
TEST(StepTest, BytesUsePaddedChunks) {
  const DeviceMesh mesh = Mesh({4});
  const std::vector<int64_t> L = {13, 6};
  auto BytesOf = [&](const Step& step, const DeviceMesh& m) {
    return BytesOfStep(DistState::WithDefaultOrder({step.src}), step, L, m,
                       std::vector<int64_t>(m.ndim(), 0), DType::kF32);
  };
  // all_gather: chunk 4x6 = 24 elements, 3 peers: 3 * 24 * 4 = 288 bytes.
  EXPECT_EQ(BytesOf(On(0, S0, R), mesh).sent, 288);
  // all_to_all S(0)->S(1): chunk 4 x ceil(6/4)=2 = 8 elements: 3 * 8 * 4 = 96.
  EXPECT_EQ(BytesOf(On(0, S0, S1), mesh).received, 96);
  // reduce_scatter P->S(0): 3 * 24 * 4 = 288.
  EXPECT_EQ(BytesOf(On(0, Psum, S0), mesh).sent, 288);
  // all_reduce: 78 elements, 2 * 3 * ceil(78/4)=20 * 4 = 480.
  EXPECT_EQ(BytesOf(On(0, Psum, R), mesh).sent, 480);
  EXPECT_EQ(BytesOf(On(0, R, S0), mesh).sent, 0);
  EXPECT_EQ(BytesOf(On(0, S0, R), Mesh({1})).sent, 0);
}

TEST(StepTest, KindsKeepTheirPrintedNames) {
  std::vector<std::string> names;
  for (StepKind k : kAllStepKinds) names.emplace_back(StepKindName(k));
  EXPECT_THAT(names, ElementsAre("all_to_all", "all_gather", "all_reduce", "reduce_scatter",
                                 "chunk", "partition", "permute", "exchange"));
}

// Spec §8: on a mesh of size-1 dims the greedy plan S(0)S(0)S(0) -> RS(0)S(0)
// gathers mesh dim 0 first. PyTorch's replay pops the *last* mesh dim (2) of
// the order [0, 1, 2], so it prints RS(0)[1]S(0) (mesh dim 2 is no longer in
// its order); the real state keeps mesh dims 1, 2 in order: RS(0)[0]S(0)[1].
TEST(StepTest, GreedyTracePrintsPyTorchsReplayButKeepsRealStates) {
  const DeviceMesh mesh = Mesh({1, 1, 1});
  absl::StatusOr<DistSpec> src = DistSpec::Parse(mesh, "S(0)S(0)S(0)", {4}, DType::kF32);
  absl::StatusOr<DistSpec> dst = DistSpec::Parse(mesh, "RS(0)S(0)", {4}, DType::kF32);
  ASSERT_TRUE(src.ok() && dst.ok());
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGreedy;
  absl::StatusOr<Plan> plan = PlanRedistribution(*src, *dst, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Trace(), "S(0)[0]S(0)[1]S(0)[2]->RS(0)[1]S(0)");
  EXPECT_EQ(plan->states.back(), dst->state());
}

}  // namespace
}  // namespace reshard
