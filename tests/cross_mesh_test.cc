// Cross-mesh moves (spec §14; planner/cross_mesh/cross_mesh_plan.h,
// collectives/cross_mesh_executor.h): planned, then run on Gloo with every
// participant a thread holding a source-mesh, a destination-mesh and a
// union communicator; each destination rank's result is compared with its
// shard of the same global tensor. Disjoint, overlapping and equal rank
// sets, uneven shapes, a Partial source, ranks that only send or receive.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/cross_mesh_executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/stores/in_process_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/ground_truth.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

DistSpec Spec(std::vector<int64_t> mesh, const char* layout, std::vector<int64_t> shape,
              DType dtype = DType::kF32) {
  return *DistSpec::Parse(*DeviceMesh::Create(std::move(mesh)), layout, std::move(shape), dtype);
}

int64_t IndexOf(const std::vector<int64_t>& ranks, int64_t rank) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == rank) return static_cast<int64_t>(i);
  }
  return -1;
}

bool HasPartial(const DistSpec& spec) {
  for (const Placement& p : spec.state().placements()) {
    if (p.is_partial()) return true;
  }
  return false;
}

// One participant: connect what it takes part in, run, compare (a Partial
// destination's local values are not unique: `*result` keeps them for
// Reassemble instead).
absl::Status RunParticipant(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                            const LocalTensor& global, int64_t index, std::shared_ptr<Store> store,
                            CrossingStats* stats, LocalTensor* result) {
  const int64_t rank = plan.participants[index];
  GlooOptions options;
  options.prefix = "union";
  const DeviceMesh line = *DeviceMesh::Create({static_cast<int64_t>(plan.participants.size())});
  RESHARD_ASSIGN_OR_RETURN(auto union_comm, GlooCommunicator::Connect(line, index, store, options));
  std::unique_ptr<GlooCommunicator> src_comm, dst_comm;
  const int64_t s = IndexOf(plan.src_ranks, rank), d = IndexOf(plan.dst_ranks, rank);
  LocalTensor t = *LocalTensor::Zeros(r.src.dtype(), {0});
  if (s >= 0) {
    options.prefix = "src";
    RESHARD_ASSIGN_OR_RETURN(src_comm, GlooCommunicator::Connect(r.src.mesh(), s, store, options));
    RESHARD_ASSIGN_OR_RETURN(t, ShardOf(global, r.src, r.src.mesh().Coordinate(s), 5));
  }
  if (d >= 0) {
    options.prefix = "dst";
    RESHARD_ASSIGN_OR_RETURN(dst_comm, GlooCommunicator::Connect(r.dst.mesh(), d, store, options));
  }
  RESHARD_RETURN_IF_ERROR(
      RedistributeAcross(t, r, plan, rank, src_comm.get(), dst_comm.get(), *union_comm, stats));
  if (d < 0) return absl::OkStatus();
  if (HasPartial(r.dst)) {
    *result = std::move(t);
    return absl::OkStatus();
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor want, ShardOf(global, r.dst, r.dst.mesh().Coordinate(d), 5));
  RESHARD_ASSIGN_OR_RETURN(int64_t bad, FirstMismatch(t, want, 0));
  if (bad >= 0) return absl::InternalError(absl::StrCat("rank ", rank, ": element ", bad));
  return absl::OkStatus();
}

// Plans and runs `r`; every participant's status and crossing counters.
std::vector<CrossingStats> RunAcross(const CrossMeshRequest& r) {
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions{PlanMode::kNative});
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  const LocalTensor global =
      *TestTensor(r.src.dtype(), r.src.global_shape(), 5, r.src.mesh().num_ranks());
  std::shared_ptr<Store> store = NewInProcessStore();
  const size_t n = plan->participants.size();
  std::vector<absl::Status> results(n);
  std::vector<CrossingStats> stats(n);
  std::vector<LocalTensor> tensors(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      results[i] =
          RunParticipant(r, *plan, global, static_cast<int64_t>(i), store, &stats[i], &tensors[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(results[i].ok()) << results[i] << plan->Summary();
  if (HasPartial(r.dst)) {
    // The destination ranks' values, in their mesh's rank order, reduce to the tensor.
    std::vector<LocalTensor> shards;
    for (int64_t rank : plan->dst_ranks) {
      const size_t i =
          std::lower_bound(plan->participants.begin(), plan->participants.end(), rank) -
          plan->participants.begin();
      shards.push_back(std::move(tensors[i]));
    }
    absl::StatusOr<LocalTensor> back = Reassemble(shards, r.dst);
    EXPECT_TRUE(back.ok()) << back.status();
    if (back.ok()) EXPECT_EQ(*FirstMismatch(*back, global, 0), -1) << plan->Summary();
  }
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

// Random moves: meshes of 1-3 dims (sizes 1-3, at most 8 ranks), tensors of
// 1-2 dims with extents 1-9 (uneven and empty shards), Shard, Replicate and
// Partial(sum) on either side (i32: exact), and the destination's global
// ranks a random ordered subset of the first src + dst ranks, so that rank
// sets are disjoint, overlapping or equal and meshes land in any order.
std::vector<int64_t> RandomMesh(std::mt19937_64& rng) {
  std::vector<int64_t> mesh;
  int64_t ranks = 1;
  const int ndim = 1 + static_cast<int>(rng() % 3);
  for (int m = 0; m < ndim; ++m) {
    int64_t size = 1 + static_cast<int64_t>(rng() % 3);
    while (ranks * size > 8) --size;
    ranks *= size;
    mesh.push_back(size);
  }
  return mesh;
}

std::string RandomLayout(std::mt19937_64& rng, size_t mesh_ndim, int tensor_ndim) {
  std::string out;
  for (size_t m = 0; m < mesh_ndim; ++m) {
    const int kind = static_cast<int>(rng() % 6);
    out += kind < 3 ? absl::StrCat("S(", rng() % tensor_ndim, ")") : kind < 5 ? "R" : "P";
  }
  return out;
}

TEST(CrossMeshTest, RandomMovesOnThreads) {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 40; ++i) {
    const std::vector<int64_t> src_mesh = RandomMesh(rng), dst_mesh = RandomMesh(rng);
    const int tensor_ndim = 1 + static_cast<int>(rng() % 2);
    std::vector<int64_t> shape;
    for (int d = 0; d < tensor_ndim; ++d) shape.push_back(1 + static_cast<int64_t>(rng() % 9));
    CrossMeshRequest r{
        Spec(src_mesh, RandomLayout(rng, src_mesh.size(), tensor_ndim).c_str(), shape, DType::kI32),
        Spec(dst_mesh, RandomLayout(rng, dst_mesh.size(), tensor_ndim).c_str(), shape, DType::kI32),
        {},
        {}};
    const int64_t n = r.src.mesh().num_ranks(), m = r.dst.mesh().num_ranks();
    std::vector<int64_t> pool(n + m);
    for (int64_t k = 0; k < n + m; ++k) pool[k] = k;
    std::shuffle(pool.begin(), pool.end(), rng);
    r.dst_ranks.assign(pool.begin(), pool.begin() + m);
    SCOPED_TRACE(absl::StrCat("case ", i, ": ", r.src.state().ToString(), " on ",
                              r.src.mesh().ToString(), " -> ", r.dst.state().ToString(), " on ",
                              r.dst.mesh().ToString(), " ranks ", absl::StrJoin(r.dst_ranks, ",")));
    RunAcross(r);
  }
}

TEST(CrossMeshTest, RankListsMustFitTheirMeshes) {
  CrossMeshRequest r{Spec({2}, "S(0)", {4}), Spec({2}, "R", {4}), {0, 0}, {}};
  EXPECT_THAT(PlanCrossMesh(r, PlanOptions()).status().message(),
              HasSubstr("src_ranks: rank 0 appears twice"));
  r.src_ranks = {0, 1, 2};
  EXPECT_THAT(PlanCrossMesh(r, PlanOptions()).status().message(),
              HasSubstr("src_ranks: 3 ranks for a mesh of 2"));
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

}  // namespace
}  // namespace reshard
