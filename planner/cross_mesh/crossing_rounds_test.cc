// Cross-mesh crossings under a memory limit (spec §14 "Memory";
// planner/cross_mesh/crossing_rounds.h): the rounds keep every participant's
// peak within the limit, move every slice exactly once, take the rounds
// derived by hand below, and a limit under the resident blocks is refused
// with the least one that works.
#include "planner/cross_mesh/crossing_rounds.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/cross_mesh_case.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/layout/dtype.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

DistSpec Spec(std::vector<int64_t> mesh, const char* layout, std::vector<int64_t> shape) {
  return *DistSpec::Parse(*DeviceMesh::Create(std::move(mesh)), layout, std::move(shape),
                          DType::kF32);
}

PlanOptions Limit(int64_t bytes) {
  PlanOptions options{PlanMode::kNative};
  options.max_memory = bytes;
  return options;
}

int64_t Largest(const std::vector<int64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Row-major index of `at` in a tensor of `shape`.
int64_t Flat(const std::vector<int64_t>& shape, const std::vector<int64_t>& at) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + at[d];
  return i;
}

// Calls `f` with the global index of every element of `box`.
template <typename F>
void ForEachElement(const Box& box, const std::vector<int64_t>& shape, F f) {
  if (BoxElements(box) == 0) return;
  std::vector<int64_t> at(box.size());
  for (size_t d = 0; d < box.size(); ++d) at[d] = box[d].offset;
  while (true) {
    f(Flat(shape, at));
    size_t d = box.size();
    while (d > 0 && ++at[d - 1] == box[d - 1].offset + box[d - 1].size) {
      at[d - 1] = box[d - 1].offset;
      --d;
    }
    if (d == 0) return;
  }
}

int64_t LowerBound(const CrossMeshPlan& plan, int64_t limit) {
  std::vector<Box> held, wanted;
  plan.CrossingBoxes(&held, &wanted);
  return RoundsLowerBound(held, wanted, plan.routes, ItemSize(plan.crossing_src.dtype()), limit);
}

// "" when every participant receives (or copies) each element of its
// crossing_dst block exactly once and nothing else, each from a participant
// whose crossing_src block holds it; else what is wrong.
std::string EverySliceOnce(const CrossMeshPlan& plan) {
  const std::vector<int64_t>& shape = plan.crossing_src.global_shape();
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  const size_t n = plan.participants.size();
  std::vector<Box> held, wanted;
  plan.CrossingBoxes(&held, &wanted);
  for (size_t j = 0; j < n; ++j) {
    std::vector<int> count(numel, 0), want(numel, 0), has(numel, 0);
    ForEachElement(wanted[j], shape, [&](int64_t i) { want[i] = 1; });
    for (const SliceRoute& route : plan.routes) {
      if (route.receiver != static_cast<int64_t>(j)) continue;
      std::fill(has.begin(), has.end(), 0);
      ForEachElement(held[route.sender], shape, [&](int64_t i) { has[i] = 1; });
      bool held_by_sender = true;
      ForEachElement(route.box, shape, [&](int64_t i) {
        ++count[i];
        held_by_sender = held_by_sender && has[i] == 1;
      });
      if (!held_by_sender) return absl::StrCat("participant ", route.sender, " sends unheld data");
    }
    if (count != want) return absl::StrCat("participant ", j, " receives the wrong elements");
  }
  return "";
}

TEST(CrossingRoundsTest, SplitBoxCutsTheFirstDimWhoseRowsFit) {
  const Box box = {{2, 3}, {0, 4}};  // 3 x 4
  EXPECT_EQ(SplitBox(box, 12).size(), 1u);
  // 8 elements: two rows at a time of dim 0.
  std::vector<Box> pieces = SplitBox(box, 8);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0], (Box{{2, 2}, {0, 4}}));
  EXPECT_EQ(pieces[1], (Box{{4, 1}, {0, 4}}));
  // 3 elements: single rows of dim 0, each cut into runs of 3 and 1 of dim 1.
  pieces = SplitBox(box, 3);
  ASSERT_EQ(pieces.size(), 6u);
  EXPECT_EQ(pieces[1], (Box{{2, 1}, {3, 1}}));
  EXPECT_EQ(pieces[5], (Box{{4, 1}, {3, 1}}));
  for (int64_t max : {1, 2, 3, 5, 8, 11}) {
    pieces = SplitBox(box, max);
    int64_t total = 0;
    for (const Box& p : pieces) {
      EXPECT_LE(BoxElements(p), max);
      total += BoxElements(p);
    }
    EXPECT_EQ(total, 12) << max;
    EXPECT_EQ(SplitBoxCount(box, max), static_cast<int64_t>(pieces.size())) << max;
  }
}

// S(0) on ranks 0, 1 to R on ranks 2, 3, f32 8: each source rank holds 4
// elements (16 bytes) and sends them to both destination ranks; each
// destination rank holds its 32-byte block and receives 32 bytes. Without a
// limit the peak is 64 (a destination rank: 32 + 32); the pytorch model
// prices no exchange, so only the plain layouts are planned.
CrossMeshRequest ScatterToReplicas() {
  return {Spec({2}, "S(0)", {8}), Spec({2}, "R", {8}), {0, 1}, {2, 3}};
}
PlanOptions Pytorch(int64_t bytes = std::numeric_limits<int64_t>::max()) {
  PlanOptions options = Limit(bytes);
  options.mode = PlanMode::kPyTorch;
  options.cost_model = nullptr;
  return options;
}

TEST(CrossingRoundsTest, WithoutALimitTheCrossingIsOneRound) {
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(ScatterToReplicas(), Pytorch());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rounds, 1);
  EXPECT_EQ(plan->peak_bytes, 64);
  EXPECT_EQ(plan->CrossingPeakBytes(), (std::vector<int64_t>{48, 48, 64, 64}));
}

// Under 48 bytes a destination rank has room for one 16-byte block beside
// its own 32: its two blocks take 2 rounds, the lower bound, each route whole.
// Under 40 it has room for 2 elements: each block is cut in two, four pieces
// per destination rank, 4 rounds.
TEST(CrossingRoundsTest, RoundsDerivedByHand) {
  for (const auto& [limit, rounds, slices] :
       std::vector<std::tuple<int64_t, int64_t, size_t>>{{48, 2, 4}, {40, 4, 8}, {36, 8, 16}}) {
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(ScatterToReplicas(), Pytorch(limit));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->rounds, rounds) << limit;
    EXPECT_EQ(plan->rounds, LowerBound(*plan, limit)) << limit;  // first fit is optimal here
    EXPECT_EQ(plan->routes.size(), slices) << limit;
    EXPECT_LE(Largest(plan->CrossingPeakBytes()), limit);
    EXPECT_EQ(plan->peak_bytes, limit);
    EXPECT_EQ(EverySliceOnce(*plan), "") << limit;
    // Byte counts do not change with rounds.
    EXPECT_EQ(plan->BytesSent(), (std::vector<int64_t>{32, 32, 0, 0}));
  }
}

// S(0) to S(0) on two other ranks: every participant holds one 16-byte
// block, so one f32 in flight needs 20 bytes; 19 is refused naming it.
TEST(CrossingRoundsTest, ALimitUnderTheResidentBlocksNamesTheLeastThatWorks) {
  CrossMeshRequest r{Spec({2}, "S(0)", {8}), Spec({2}, "S(0)", {8}), {0, 1}, {2, 3}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, Limit(19));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(plan.status()));
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxMemory);
  EXPECT_THAT(plan.status().message(), HasSubstr("max_memory: "));
  EXPECT_THAT(plan.status().message(), HasSubstr("needs at least 20"));
  plan = PlanCrossMesh(r, Limit(20));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rounds, 4);  // one element per round
  EXPECT_EQ(plan->peak_bytes, 20);
}

// The steps after the crossing are planned under the limit too: S(1) on 2
// ranks of a 16 x 12 f32 tensor is 384 bytes per rank, over 100, and the
// error says which part of the move it comes from.
TEST(CrossingRoundsTest, MemoryErrorsOfTheStepsAfterNameThatPart) {
  CrossMeshRequest r{Spec({4, 2}, "S(0)S(1)", {16, 12}), Spec({2}, "S(1)", {16, 12}), {}, {8, 9}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, Limit(100));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxMemory);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("max_memory: the steps after the crossing (destination mesh): the source "
                        "shard alone takes 384 bytes"));
}

// R on ranks 2-5 (2 x 2) wants the whole 32-byte tensor on every rank: 36
// bytes at least. Under 35 the plain layout is refused, but the destination
// can receive S(0) blocks and all_gather after (in place under the default
// nccl model: 32 bytes), so the candidates (spec §14) give a plan.
TEST(CrossingRoundsTest, AnotherCrossingLayoutFitsWhereThePlainOneDoesNot) {
  CrossMeshRequest r{Spec({2}, "S(0)", {8}), Spec({2, 2}, "RR", {8}), {0, 1}, {2, 3, 4, 5}};
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, Limit(35));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(plan->crossing_dst.state().ToString(), "RR");
  EXPECT_LE(plan->peak_bytes, 35);
  EXPECT_EQ(EverySliceOnce(*plan), "");
  EXPECT_FALSE(PlanCrossMesh(r, Pytorch(35)).ok());  // plain only: refused
}

// Random moves (as verify --random --cross-mesh draws them), each planned
// under a limit halfway between the least its crossing needs and its peak:
// every participant's peak is within the limit, no schedule has fewer
// rounds than RoundsLowerBound, every slice moves once.
TEST(CrossingRoundsTest, RandomMovesStayWithinTheirLimits) {
  int split = 0, at_bound = 0;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    const CrossMeshCase c = RandomCrossMeshCase(seed, 8, 12);
    absl::StatusOr<CrossMeshRequest> r = RequestOf(c);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<CrossMeshPlan> unlimited = PlanCrossMesh(*r, PlanOptions{PlanMode::kNative});
    if (!unlimited.ok()) continue;
    const int64_t least = unlimited->LeastCrossingBytes();
    const int64_t limit =
        std::max({unlimited->before.peak_bytes, unlimited->after.peak_bytes,
                  least + (Largest(unlimited->CrossingPeakBytes()) - least) / 2, int64_t{1}});
    PlanOptions options{PlanMode::kNative};
    options.max_memory = limit;
    absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(*r, options);
    ASSERT_TRUE(plan.ok()) << c.CommandLine() << ": " << plan.status();
    EXPECT_LE(plan->peak_bytes, limit) << c.CommandLine();
    EXPECT_LE(Largest(plan->CrossingPeakBytes()), limit) << c.CommandLine();
    EXPECT_EQ(EverySliceOnce(*plan), "") << c.CommandLine();
    EXPECT_EQ(plan->route_rounds.size(), plan->routes.size());
    const int64_t bound = LowerBound(*plan, limit);
    EXPECT_GE(plan->rounds, bound) << c.CommandLine();
    split += plan->rounds > 1;
    at_bound += plan->rounds > 1 && plan->rounds == bound;
  }
  EXPECT_GT(split, 20);  // the limits did split crossings
  RecordProperty("split", split);
  RecordProperty("split_at_the_lower_bound", at_bound);
}

}  // namespace
}  // namespace reshard
