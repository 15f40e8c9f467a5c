// The naive baseline of a cross-mesh move (planner/cross_mesh/naive_plan.h,
// spec §14 "Naive baseline"): its three hops' routes and bytes, its price,
// and the baseline run next to the native plan on Gloo threads
// (harness/cross_mesh_bench.h), both verified against the ground truth.
#include "planner/cross_mesh/naive_plan.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "harness/cross_mesh_bench.h"
#include "harness/ground_truth.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {
namespace {

DistSpec Spec(std::vector<int64_t> mesh, const char* layout, std::vector<int64_t> shape,
              DType dtype = DType::kF32) {
  return *DistSpec::Parse(*DeviceMesh::Create(std::move(mesh)), layout, std::move(shape), dtype);
}

int64_t Bytes(const Box& box) { return 4 * BoxElements(box); }  // f32

// The routes of one hop between different participants: (sender, receiver).
std::vector<std::pair<int64_t, int64_t>> Pairs(const std::vector<SliceRoute>& routes) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const SliceRoute& r : routes) {
    if (r.sender != r.receiver) out.emplace_back(r.sender, r.receiver);
  }
  return out;
}

// Trainer 4x2 (ranks 0-7) to inference 2 (ranks 8, 9), f32 16 x 12 (768
// bytes): ranks 1-7 send their 4 x 6 block (96 bytes) to rank 0, rank 0 sends
// all 768 bytes to rank 8, rank 8 sends rank 9 its half (384 bytes).
TEST(NaivePlanTest, GatherSendScatterOnDisjointRanks) {
  const CrossMeshRequest r{
      Spec({4, 2}, "S(0)S(1)", {16, 12}), Spec({2}, "S(1)", {16, 12}), {}, {8, 9}};
  absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(naive.ok()) << naive.status();
  EXPECT_EQ(naive->src_root, 0);
  EXPECT_EQ(naive->dst_root, 8);
  std::vector<std::pair<int64_t, int64_t>> gather;
  for (int64_t s = 1; s < 8; ++s) gather.emplace_back(s, 0);
  EXPECT_EQ(Pairs(naive->hops[0]), gather);
  EXPECT_EQ(Pairs(naive->hops[1]), (std::vector<std::pair<int64_t, int64_t>>{{0, 8}}));
  EXPECT_EQ(Pairs(naive->hops[2]), (std::vector<std::pair<int64_t, int64_t>>{{8, 9}}));
  const int64_t whole = 16 * 12 * 4, block = whole / 8, half = whole / 2;
  std::vector<int64_t> sent(10, block);
  sent[0] = whole;
  sent[8] = half;
  sent[9] = 0;
  EXPECT_EQ(naive->BytesSent(), sent);
  std::vector<int64_t> received(10, 0);
  received[0] = whole - block;
  received[8] = whole;
  received[9] = half;
  EXPECT_EQ(naive->BytesReceived(), received);
}

// Rank 0 is both roots: the send hop is a local copy; destination replicas
// (R on 2 ranks) each get the whole tensor from the root.
TEST(NaivePlanTest, SharedRootCopiesLocallyAndReplicasEachGetACopy) {
  const CrossMeshRequest r{Spec({2}, "S(0)", {6, 4}), Spec({2}, "R", {6, 4}), {0, 1}, {0, 2}};
  absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(naive.ok()) << naive.status();
  EXPECT_EQ(naive->src_root, naive->dst_root);
  EXPECT_TRUE(Pairs(naive->hops[1]).empty());
  ASSERT_EQ(naive->hops[1].size(), 1u);  // the local copy
  EXPECT_EQ(Pairs(naive->hops[2]), (std::vector<std::pair<int64_t, int64_t>>{{0, 2}}));
  EXPECT_EQ(Bytes(naive->hops[2].back().box), 6 * 4 * 4);
}

// The plain plan's steps are the baseline's: a Partial source all_reduces
// before, whatever the hops.
TEST(NaivePlanTest, PartialsAreReducedAsInThePlainPlan) {
  const CrossMeshRequest r{Spec({2}, "P(sum)", {8, 4}), Spec({2}, "S(0)", {8, 4}), {0, 1}, {2, 3}};
  absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, PlanOptions{PlanMode::kNative});
  absl::StatusOr<CrossMeshPlan> plain = PlanPlainCrossMesh(r, PlanOptions{PlanMode::kNative});
  ASSERT_TRUE(naive.ok() && plain.ok());
  EXPECT_EQ(naive->plain.before.Trace(), plain->before.Trace());
  EXPECT_FALSE(naive->plain.before.steps.empty());
}

// Priced hop by hop where the model prices an exchange; the baseline sends
// the whole tensor through two ranks, so it costs more than native's plan.
TEST(NaivePlanTest, PricedLikeTheCrossingAndDearerThanNative) {
  const CrossMeshRequest r{
      Spec({4, 2}, "S(0)S(1)", {1024, 1024}), Spec({2}, "S(1)", {1024, 1024}), {}, {8, 9}};
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *MakeAlphaBetaCostModel(DefaultGpuProfile(), 8);
  absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, options);
  absl::StatusOr<CrossMeshPlan> native = PlanCrossMesh(r, options);
  ASSERT_TRUE(naive.ok() && native.ok());
  ASSERT_TRUE(naive->cost.has_value() && native->cost.has_value());
  EXPECT_GT(*naive->cost, *native->cost);
  options.mode = PlanMode::kPyTorch;
  options.cost_model = *MakeCostModel("pytorch", 8);
  naive = PlanNaiveCrossMesh(r, options);
  ASSERT_TRUE(naive.ok()) << naive.status();
  EXPECT_FALSE(naive->cost.has_value());
}

// Both modes run on Gloo threads on the same data and are verified
// (CheckAcross, which also holds every participant's counters to its plan's:
// naive's hops). The naive source root sends the whole tensor; native's
// busiest sender sends less.
TEST(NaivePlanTest, NativeAndNaiveRunAndVerifyOnThreads) {
  const CrossMeshRequest r{
      Spec({2, 2}, "S(0)R", {9, 5}), Spec({3}, "S(1)", {9, 5}), {0, 1, 2, 3}, {2, 4, 5}};
  const PlanOptions options{PlanMode::kNative};
  absl::StatusOr<CrossMeshPlan> native = PlanCrossMesh(r, options);
  absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, options);
  ASSERT_TRUE(native.ok() && naive.ok());
  const std::vector<AcrossMode> modes = {{"native", *native, std::nullopt},
                                         {"naive", naive->plain, *naive}};
  const LocalTensor global = *TestTensor(DType::kF32, {9, 5}, 3, 4);
  const std::vector<AcrossMeasurement> got =
      RunAcrossBench(r, modes, global, 3, /*repeat=*/2, GlooOptions());
  ASSERT_EQ(got.size(), 2u);
  for (const AcrossMeasurement& m : got) {
    EXPECT_TRUE(m.verified) << m.detail;
    EXPECT_EQ(m.run_us.size(), 2u);
  }
  const std::vector<int64_t> sent = naive->BytesSent();
  EXPECT_EQ(got[1].crossing_bytes_sent_max, *std::max_element(sent.begin(), sent.end()));
  EXPECT_GE(got[1].crossing_bytes_sent_max, 9 * 5 * 4);  // the source root sends it all
  EXPECT_LT(got[0].crossing_bytes_sent_max, got[1].crossing_bytes_sent_max);
}

}  // namespace
}  // namespace reshard
