// The "nccl" cost model (spec §6.4): NCCL's formula from NVIDIA/nccl
// src/graph/tuning.cc (commit 5067397c) on worked examples, each derived by
// hand in its comment, and the effect it has on native plans.
//
// Profile "h100-8x400g" unless a test says otherwise: Hopper, NVLink 18 x
// 20.6 = 370.8 GB/s per GPU, 8 NICs of 50 GB/s per 8-GPU host, Intel CPU.
#include "planner/costs/nccl/nccl_cost_model.h"

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/block_bytes.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/costs/host_span.h"
#include "planner/costs/nccl/nccl_profile.h"
#include "planner/costs/nccl/nccl_tuning.h"
#include "planner/layout/dist_spec.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/notation.h"
#include "planner/planner.h"
#include "planner/steps/step.h"
#include "planner/steps/step_memory.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

// Graphs (search.cc). One host: the first sm90 intra speed <= 370.8 is 60;
// 370.8 / 60 = 6 channels; DupChannels (60 >= 25) doubles them at half the
// speed: 12 x 30. Several hosts, 8 GPUs per host: the first sm90 inter speed
// <= min(50, 370.8) is 48, one channel per NIC: 8 x 48, not duplicated
// (Hopper, 48 < 50 and 8 > 4 channels). One GPU per host: one NIC, 1 x 48,
// duplicated to 2 x 24.
TEST(NcclTuningTest, RingGraphsOfADgxH100) {
  const NcclProfile h100 = DefaultNcclProfile();
  NcclGraph g = NcclRingGraph(h100, 8, 1);
  EXPECT_EQ(g.channels, 12);
  EXPECT_DOUBLE_EQ(g.bw_intra, 30);
  g = NcclRingGraph(h100, 8, 8);
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw_inter, 48);
  g = NcclRingGraph(h100, 1, 8);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.bw_inter, 24);
  // NVLS: 8 channels (one per GPU), all on NVLink: 60 x 8 and 50 x 8 exceed
  // 370.8, 40 x 8 = 320 fits.
  g = NcclNvlsGraph(h100, 8, 1);
  EXPECT_EQ(g.channels, 8);
  EXPECT_DOUBLE_EQ(g.bw_intra, 40);
}

// 64 GPUs on 8 hosts, all_gather, ring (these are also the numbers of
// NCCL 2.27.5's tuning log for 8 x 8 H100 that meta-pytorch/autoparallel
// copies, _H100_AGRS_RING: 81.5/20.7, 148.4/298.3, 296.8/390.1):
//   nsteps = 63, inter steps = 7, intra steps 56 at max(hwLat, netOverhead)
//   LL     6.6 + 56 * max(0.6, 1) + 7 * 2.7 = 81.5;
//          min(llMaxBw[Intel][>=3 nodes] = 20.4, 8*48*0.5) * 64/63
//   LL128  14 + 56 * 1.9 + 7 * 4.0 = 148.4; min(384*0.92, 8*36.7) * 64/63
//   Simple 8.4 + 56 * max(3.4, 3*1) + 7 * 14 = 296.8; 384 * 64/63
TEST(NcclTuningTest, MultiNodeRingAllGatherMatchesNcclsTuningLog) {
  const NcclTuning t(DefaultNcclProfile(), 64, 8);
  const NcclFunc ag = NcclFunc::kAllGather;
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kRing, NcclProto::kLL), 81.5, 1e-9);
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kRing, NcclProto::kLL128), 148.4, 1e-9);
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kRing, NcclProto::kSimple), 296.8, 1e-9);
  EXPECT_NEAR(t.bandwidth(ag, NcclAlgo::kRing, NcclProto::kLL), 20.4 * 64 / 63, 1e-9);
  EXPECT_NEAR(t.bandwidth(ag, NcclAlgo::kRing, NcclProto::kLL128), 8 * 36.7 * 64 / 63, 1e-9);
  EXPECT_NEAR(t.bandwidth(ag, NcclAlgo::kRing, NcclProto::kSimple), 384.0 * 64 / 63, 1e-9);
  // No PAT (8 GPUs per host), no NVLS (several hosts, no collnet).
  EXPECT_EQ(t.bandwidth(ag, NcclAlgo::kPat, NcclProto::kSimple), 0);
  EXPECT_EQ(t.bandwidth(ag, NcclAlgo::kNvls, NcclProto::kSimple), 0);
  // 1 GiB gathered: Simple, 296.8 + 2^30 / (1000 * 390.095...) = 3049.3 us.
  const NcclChoice c = t.Time(ag, kGiB);
  EXPECT_EQ(c.algo, NcclAlgo::kRing);
  EXPECT_EQ(c.proto, NcclProto::kSimple);
  EXPECT_NEAR(c.time_us, 296.8 + kGiB / (1000 * 384.0 * 64 / 63), 1e-6);
  // 1 MiB: LL, 81.5 + 2^20 / (1000 * 20.72) = 132.1 us.
  EXPECT_EQ(t.Time(ag, kMiB).proto, NcclProto::kLL);
  EXPECT_NEAR(t.Time(ag, kMiB).time_us, 81.5 + kMiB / (1000 * 20.4 * 64 / 63), 1e-6);
}

// One GPU on each of 8 hosts: latencies use tree's NET latency ("fully
// exposed"); PAT is enabled. Ring Simple 8.4 + 7 * 14 = 106.4 at 2 x 24 =
// 48 GB/s bus, 48 * 8/7 = 54.86 (autoparallel's log: 106.4/54.9).
// PAT: 8 + log2(8) * 14 / 3.5 + 8 * 2.8 = 42.4 at 48 * 0.75 = 36 (no
// bus-to-algorithm conversion for non-ring all_gather).
TEST(NcclTuningTest, OneGpuPerHostGetsPat) {
  const NcclTuning t(DefaultNcclProfile(), 8, 8);
  const NcclFunc ag = NcclFunc::kAllGather;
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kRing, NcclProto::kSimple), 106.4, 1e-9);
  EXPECT_NEAR(t.bandwidth(ag, NcclAlgo::kRing, NcclProto::kSimple), 48.0 * 8 / 7, 1e-9);
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kRing, NcclProto::kLL), 6.6 + 7 * 5.0, 1e-9);  // 41.6
  EXPECT_NEAR(t.latency(ag, NcclAlgo::kPat, NcclProto::kSimple), 42.4, 1e-9);
  EXPECT_NEAR(t.bandwidth(ag, NcclAlgo::kPat, NcclProto::kSimple), 36, 1e-9);
  // 128 KiB gathered: PAT 42.4 + 131072 / 36000 = 46.04 beats LL's
  // 41.6 + 131072 / (1000 * 20.4 * 8/7) = 47.22.
  const NcclChoice c = t.Time(ag, 128 * 1024);
  EXPECT_EQ(c.algo, NcclAlgo::kPat);
  EXPECT_NEAR(c.time_us, 42.4 + 131072.0 / 36000, 1e-9);
  // PAT is off as soon as two GPUs share a host.
  EXPECT_EQ(
      NcclTuning(DefaultNcclProfile(), 16, 8).bandwidth(ag, NcclAlgo::kPat, NcclProto::kSimple), 0);
}

// 8 GPUs in one host, all_reduce (nsteps 14):
//   ring Simple 8.4 + 14 * 3.4 = 56.0 at 12 * 30 * 8/14
//   ring LL 6.6 + 14 * 0.6 = 15.0 at min(141, 180) * 8/14
//   tree LL 6.8 + 2 * (7 * 0.6) = 15.2 at min(min(360 * .92, 12 * 38.7) / 3.8, 141) * .5
//   NVLS (measured on one host, nccl_tuning.cc) 70 at 8 * 40 * .85 * 7/8 * 2
//   * 8/14 = 476 * 8/14
// At 4 KiB ring LL wins (15.0 + 4096 / 80571 = 15.05); at 1 GiB NVLS
// (70 + 2^30 / 272000 = 4017.6) beats ring Simple (56 + 2^30 / 205714 = 5275.7).
TEST(NcclTuningTest, SingleHostAllReduce) {
  const NcclTuning t(DefaultNcclProfile(), 8, 1);
  const NcclFunc ar = NcclFunc::kAllReduce;
  EXPECT_NEAR(t.latency(ar, NcclAlgo::kRing, NcclProto::kSimple), 56.0, 1e-9);
  EXPECT_NEAR(t.latency(ar, NcclAlgo::kTree, NcclProto::kLL), 15.2, 1e-9);
  EXPECT_NEAR(t.latency(ar, NcclAlgo::kNvls, NcclProto::kSimple), 70, 1e-9);
  EXPECT_NEAR(t.bandwidth(ar, NcclAlgo::kNvls, NcclProto::kSimple), 476.0 * 8 / 14, 1e-9);
  EXPECT_EQ(t.bandwidth(ar, NcclAlgo::kNvlsTree, NcclProto::kSimple), 0);  // one host
  NcclChoice c = t.Time(ar, 4096);
  EXPECT_EQ(c.algo, NcclAlgo::kRing);
  EXPECT_EQ(c.proto, NcclProto::kLL);
  EXPECT_NEAR(c.time_us, 15.0 + 4096 / (1000 * 141.0 * 8 / 14), 1e-9);
  c = t.Time(ar, kGiB);
  EXPECT_EQ(c.algo, NcclAlgo::kNvls);
  EXPECT_NEAR(c.time_us, 70.0 + kGiB / (1000 * 476.0 * 8 / 14), 1e-6);
}

// Issue 43 C1: 8 x H200 NVLS in-place all_reduce busbw (NCCL 2.20.5,
// Azure/AI-benchmarking-guide ND_H200_v5_results.md), nccl-tests' busbw =
// nBytes / time * 2 * 7/8. H200 and H100 have the same NVLink (18 x 20.6).
// The model's NVLS within 4% from 32 MB; at 16 MB it prices ring LL128
// (within 8%); below, other algorithms than NVLS.
TEST(NcclTuningTest, OneHostAllReduceMatchesMeasuredNvls) {
  struct Point {
    double bytes, busbw, tolerance;
  };
  constexpr Point kAzure[] = {{16 * kMiB, 240, .08},  {32 * kMiB, 301, .04},  {64 * kMiB, 368, .04},
                              {128 * kMiB, 412, .04}, {256 * kMiB, 432, .04}, {kGiB, 468, .04},
                              {8 * kGiB, 480, .04}};
  for (const char* name : {"h100-8x400g", "h200-8x400g"}) {
    const NcclTuning t(*BuiltinNcclProfile(name), 8, 1);
    for (const Point& pt : kAzure) {
      const NcclChoice c = t.Time(NcclFunc::kAllReduce, pt.bytes);
      const double measured_us = pt.bytes * 2 * 7 / 8 / (1000 * pt.busbw);
      if (pt.bytes >= 32 * kMiB) {
        EXPECT_EQ(c.algo, NcclAlgo::kNvls) << name << " " << pt.bytes;
      }
      EXPECT_NEAR(c.time_us / measured_us, 1, pt.tolerance) << name << " " << pt.bytes;
    }
  }
  // No NVLS without it (Ampere): the ring, as before.
  const NcclTuning a100(*BuiltinNcclProfile("a100-8x200g"), 8, 1);
  EXPECT_EQ(a100.bandwidth(NcclFunc::kAllReduce, NcclAlgo::kNvls, NcclProto::kSimple), 0);
}

// Issue 43 C5: grouped send/recv at 500 MB (524288000 B) on 4 x H100 in one
// host took 1174 us (NVIDIA/nccl #2169); each rank sends 3/4 of it to 3
// peers: 8.4 + 3 * 3.4 + 393216000 / 340000 = 1175.1.
TEST(NcclTuningTest, P2pMatchesMeasuredAllToAll) {
  const NcclP2pLinks links = NcclP2pLinksFor(DefaultNcclProfile());
  const double sent = 524288000.0 * 3 / 4;
  EXPECT_NEAR(NcclP2pTimeUs(links, NcclP2pCall{3, 0, sent, 0}) / 1174, 1, .02);
}

// The exchange that gathers every peer's block moves what a ring
// all_gather moves on the same NVLink: same latency (7 NVLink hops), at
// the measured grouped send/recv bandwidth 340 against the ring's 360, so
// it is never cheaper.
TEST(NcclTuningTest, FullExchangeIsNoCheaperThanTheRingAllGather) {
  const NcclTuning t(DefaultNcclProfile(), 8, 1);
  const NcclP2pLinks links = NcclP2pLinksFor(DefaultNcclProfile());
  for (double bytes : {64 * 1024.0, kMiB, 32 * kMiB, kGiB}) {
    const double gather = t.Time(NcclFunc::kAllGather, bytes).time_us;
    const double exchange = NcclP2pTimeUs(links, NcclP2pCall{7, 0, bytes * 7 / 8, 0});
    EXPECT_GT(exchange, gather) << bytes;
  }
}

// Across 2 hosts the ring Simple all_reduce pays the plateau factor 1.4:
// 16 ranks, nsteps 30, inter steps 2: (8.4 + 28 * 3.4 + 2 * 14) * 1.4 =
// 183.68 us, at 8 * 48 * 16/30 (2 hosts: bwIntra, equal to bwInter here).
TEST(NcclTuningTest, MultiNodeRingAllReducePlateau) {
  const NcclTuning t(DefaultNcclProfile(), 16, 2);
  const NcclFunc ar = NcclFunc::kAllReduce;
  EXPECT_NEAR(t.latency(ar, NcclAlgo::kRing, NcclProto::kSimple), 131.6, 1e-9);
  EXPECT_NEAR(t.AlgoTimeUs(ar, NcclAlgo::kRing, NcclProto::kSimple, kGiB),
              131.6 * 1.4 + kGiB / (1000 * 384.0 * 16 / 30), 1e-6);
}

// A100 (Ampere speeds, NVLink 12 x 20): 240 / 40 = 6 channels, doubled to
// 12 x 20; the LL cap on one host is Ampere's 87.7.
TEST(NcclTuningTest, A100Profile) {
  const NcclProfile a100 = *BuiltinNcclProfile("a100-8x200g");
  const NcclGraph g = NcclRingGraph(a100, 8, 1);
  EXPECT_EQ(g.channels, 12);
  EXPECT_DOUBLE_EQ(g.bw_intra, 20);
  const NcclTuning t(a100, 8, 1);
  EXPECT_NEAR(t.bandwidth(NcclFunc::kAllGather, NcclAlgo::kRing, NcclProto::kLL), 87.7 * 8 / 7,
              1e-9);
  EXPECT_EQ(t.bandwidth(NcclFunc::kAllGather, NcclAlgo::kNvls, NcclProto::kSimple), 0);
}

// Send/recv: 15 peers on 2 hosts, 8 of them remote: one network round and
// an NVLink hop per local peer: 8.4 + 14 + 7 * 3.4; 1 MiB to each remote
// peer over 48 GB/s (8 NICs x 48 / 8 GPUs), 1 MiB to each local one over
// 340 GB/s (the ring's 360 at grouped send/recv's measured share).
TEST(NcclTuningTest, P2pPerPeerMessage) {
  const NcclP2pLinks links = NcclP2pLinksFor(DefaultNcclProfile());
  EXPECT_DOUBLE_EQ(links.nvlink_gbps, 340);
  EXPECT_DOUBLE_EQ(links.net_gbps, 48);
  NcclP2pCall call{7, 8, 7 * kMiB, 8 * kMiB};
  EXPECT_NEAR(NcclP2pTimeUs(links, call), 46.2 + 8 * kMiB / 48000, 1e-9);
  // 7 local peers of 16 KiB or less: LL, one NVLink round; more: 7 hops.
  EXPECT_NEAR(NcclP2pTimeUs(links, NcclP2pCall{7, 0, 7 * 16384.0, 0}),
              8.4 + 3.4 + 7 * 16384.0 / 340000, 1e-12);
  EXPECT_NEAR(NcclP2pTimeUs(links, NcclP2pCall{7, 0, 7 * 16385.0, 0}),
              8.4 + 7 * 3.4 + 7 * 16385.0 / 340000, 1e-12);
}

// NcclTuning::Time lists its enabled pairs once and takes the log2 of
// nBytes once; it must still pick, over every (algorithm, protocol) in
// tuning.cc's order, the first with the smallest AlgoTimeUs, bit for bit.
TEST(NcclTuningTest, TimeIsTheFirstCheapestPairOfAlgoTimeUs) {
  const int64_t shapes[][2] = {{2, 1}, {8, 1}, {4, 4}, {16, 2}, {64, 8}, {64, 64}, {512, 64}};
  const double sizes[] = {0, 1, 63, 64, 4096, 1e5, 1 << 20, 3.3e7, 1e9, 7.5e10};
  for (const NcclProfile& profile : {DefaultNcclProfile(), *BuiltinNcclProfile("a100-8x200g"),
                                     *BuiltinNcclProfile("b200-8x400g")}) {
    for (const auto& [ranks, nodes] : shapes) {
      const NcclTuning t(profile, ranks, nodes);
      for (NcclFunc f : {NcclFunc::kAllGather, NcclFunc::kReduceScatter, NcclFunc::kAllReduce}) {
        for (double bytes : sizes) {
          NcclChoice best;
          best.time_us = -1;
          for (int a = 0; a < kNumNcclAlgos; ++a) {
            for (int p = 0; p < kNumNcclProtos; ++p) {
              const double x =
                  t.AlgoTimeUs(f, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p), bytes);
              if (x >= 0 && (best.time_us < 0 || x < best.time_us)) {
                best = {x, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p)};
              }
            }
          }
          const NcclChoice got = t.Time(f, bytes);
          EXPECT_EQ(got.time_us, best.time_us) << profile.name << " " << ranks << "/" << nodes;
          EXPECT_EQ(got.algo, best.algo) << profile.name << " " << ranks << "/" << nodes;
          EXPECT_EQ(got.proto, best.proto) << profile.name << " " << ranks << "/" << nodes;
        }
      }
    }
  }
}

// BlockBytes keeps the last state's block per thread; two problems priced
// in turn, on states in turn, must each price as a fresh BlockBytes does.
TEST(BlockBytesTest, InterleavedProblemsAndStatesPriceAsFresh) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 3});
  const CostProblem a{mesh, {7, 5}, 4};
  const CostProblem b{mesh, {30, 2, 9}, 2};
  const BlockBytes bytes_a(a);
  const BlockBytes bytes_b(b);
  const DistState s1 = DistState::WithDefaultOrder({Placement::Shard(0), Placement::Shard(1)});
  const DistState s2 = DistState::WithDefaultOrder({Placement::Shard(1), Placement::Shard(0)});
  const Step gather = MakeStep(MeshDimSet::Single(1), Placement::Shard(1), Placement::Replicate());
  const Step to_all = MakeStep(MeshDimSet::Single(0), Placement::Shard(1), Placement::Shard(0));
  const Step gather0 = MakeStep(MeshDimSet::Single(0), Placement::Shard(0), Placement::Replicate());
  const struct {
    const BlockBytes* bytes;
    const CostProblem* problem;
    const DistState* state;
    const Step* step;
  } calls[] = {{&bytes_a, &a, &s1, &gather}, {&bytes_b, &b, &s1, &gather},
               {&bytes_a, &a, &s2, &to_all}, {&bytes_a, &a, &s1, &gather0},
               {&bytes_b, &b, &s2, &to_all}, {&bytes_b, &b, &s2, &to_all},
               {&bytes_a, &a, &s2, &to_all}};
  for (const auto& c : calls) {
    const int64_t n = mesh.size(c.step->mesh_dim());
    EXPECT_EQ((*c.bytes)(*c.state, *c.step, n), BlockBytes(*c.problem)(*c.state, *c.step, n))
        << c.state->ToString() << " " << c.step->ToString();
  }
}

// Each thread keeps its NcclTunings by profile, ranks and hosts
// (nccl_cost_model.cc, TuningFor): prices under profiles that differ in one
// field each, bound in turn on one thread, must equal those of a thread
// that bound that profile alone.
// A gather on one, then two mesh dims, and a reduce, from S(0)S(1)P(sum) on
// 8x4x2: what the per-thread caches below must price as a fresh thread does.
std::vector<Step> GathersAndAReduce() {
  return {
      MakeStep(MeshDimSet::Single(0), Placement::Shard(0), Placement::Replicate()),
      MakeStep(MeshDimSet::Single(1), Placement::Shard(1), Placement::Replicate()),
      MakeGroupStep({0, 1}, Placement::Shard(0), Placement::Replicate()),
      MakeStep(MeshDimSet::Single(2), Placement::Partial(ReduceOp::kSum), Placement::Replicate())};
}

// The model's prices of GathersAndAReduce, then its LowerBound of each kind
// on each mesh dim.
std::vector<double> PricesAndBounds(const BoundCostModel& model) {
  const DeviceMesh mesh = *DeviceMesh::Create({8, 4, 2});
  const DistState state = ParseDistState("S(0)S(1)P(sum)", mesh, 2)->state;
  std::vector<double> out;
  for (const Step& step : GathersAndAReduce()) out.push_back(model.StepCost(state, step));
  for (int m = 0; m < mesh.ndim(); ++m) {
    for (StepKind kind : kAllStepKinds) out.push_back(model.LowerBound(kind, m));
  }
  return out;
}

std::unique_ptr<const BoundCostModel> BindOn8x4x2(const NcclProfile& profile,
                                                  int64_t devices_per_host) {
  return (*MakeNcclCostModel(profile, devices_per_host))
      ->Bind(CostProblem{*DeviceMesh::Create({8, 4, 2}), {4096, 1000}, 4});
}

TEST(NcclCostModelTest, TuningsKeptPerThreadPriceAsAFreshThreadDoes) {
  std::vector<NcclProfile> profiles(5, DefaultNcclProfile());
  profiles[1].nic_gbps = 25;
  profiles[2].amd_cpu = true;
  profiles[3].nvlink_gbps = 200;
  profiles[4] = *BuiltinNcclProfile("a100-8x200g");
  auto prices = [&](const NcclProfile& profile) {
    return PricesAndBounds(*BindOn8x4x2(profile, 4));
  };
  std::vector<std::vector<double>> alone(profiles.size());
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::thread([&] { alone[i] = prices(profiles[i]); }).join();
  }
  EXPECT_NE(alone[0], alone[1]);  // each field changes some price
  EXPECT_NE(alone[0], alone[2]);
  EXPECT_NE(alone[0], alone[3]);
  EXPECT_NE(alone[0], alone[4]);
  for (int i : {0, 1, 0, 2, 2, 0, 3, 0, 4, 1, 4}) {
    EXPECT_EQ(prices(profiles[i]), alone[i]) << profiles[i].name << " " << i;
  }
}

// Each thread keeps recent call prices by model (nccl_cost_model.cc,
// CallTimeMemo): two models bound at once, on the same mesh, problem and
// steps, priced in turn, must each price as on a thread of its own.
TEST(NcclCostModelTest, CallPricesKeptPerThreadStayWithTheirModel) {
  NcclProfile slow_nics = DefaultNcclProfile();
  slow_nics.nic_gbps = 25;
  std::vector<double> fast_alone, slow_alone;
  std::thread([&] { fast_alone = PricesAndBounds(*BindOn8x4x2(DefaultNcclProfile(), 4)); }).join();
  std::thread([&] { slow_alone = PricesAndBounds(*BindOn8x4x2(slow_nics, 4)); }).join();
  ASSERT_NE(fast_alone, slow_alone);
  const std::unique_ptr<const BoundCostModel> fast = BindOn8x4x2(DefaultNcclProfile(), 4);
  const std::unique_ptr<const BoundCostModel> slow = BindOn8x4x2(slow_nics, 4);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(PricesAndBounds(*fast), fast_alone) << "round " << round;
    EXPECT_EQ(PricesAndBounds(*slow), slow_alone) << "round " << round;
  }
}

// A mesh's tables are kept per thread by (mesh, ranks per host) and emptied
// when the profile changes: a model bound before keeps its own.
TEST(NcclCostModelTest, ModelsKeepTheirMeshTablesWhenTheCacheEmpties) {
  NcclProfile slow_nics = DefaultNcclProfile();
  slow_nics.nic_gbps = 25;
  std::vector<double> fresh[3];
  std::thread([&] {
    fresh[0] = PricesAndBounds(*BindOn8x4x2(DefaultNcclProfile(), 4));
    fresh[1] = PricesAndBounds(*BindOn8x4x2(DefaultNcclProfile(), 8));
    fresh[2] = PricesAndBounds(*BindOn8x4x2(slow_nics, 4));
  }).join();
  EXPECT_NE(fresh[0], fresh[1]);  // the ranks per host are part of the key
  EXPECT_NE(fresh[0], fresh[2]);
  const auto four = BindOn8x4x2(DefaultNcclProfile(), 4);
  const auto eight = BindOn8x4x2(DefaultNcclProfile(), 8);
  const auto slow = BindOn8x4x2(slow_nics, 4);  // another profile: the cache empties
  EXPECT_EQ(PricesAndBounds(*four), fresh[0]);
  EXPECT_EQ(PricesAndBounds(*eight), fresh[1]);
  EXPECT_EQ(PricesAndBounds(*slow), fresh[2]);
}

TEST(NcclCostModelTest, HostSpanOfGroups) {
  const DeviceMesh mesh = *DeviceMesh::Create({8, 8});
  HostSpan s = HostSpanOf(mesh, MeshDimSet::Of({0, 1}), 8);
  EXPECT_EQ(s.ranks, 64);
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.local, 8);
  s = HostSpanOf(mesh, MeshDimSet::Single(0), 8);
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.local, 1);
  s = HostSpanOf(mesh, MeshDimSet::Single(1), 8);
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.local, 8);
  // 4 x 4 with 8 per host: mesh dim 0 (stride 4) has 2 members per host.
  s = HostSpanOf(*DeviceMesh::Create({4, 4}), MeshDimSet::Single(0), 8);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.local, 2);
}

// HostSpanOf counts hosts without listing the members: against every
// member of rank 0's group listed, on random meshes, groups and host sizes.
TEST(NcclCostModelTest, HostSpanOfCountsTheHostsOfEveryMember) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<int64_t> sizes(1 + rng() % 4);
    for (int64_t& n : sizes) n = 1 + rng() % 9;
    const DeviceMesh mesh = *DeviceMesh::Create(sizes);
    const int64_t per_host = 1 + rng() % 20;
    for (unsigned bits = 0; bits < (1u << mesh.ndim()); ++bits) {
      const MeshDimSet group = MeshDimSet::FromBits(static_cast<uint8_t>(bits));
      std::set<int64_t> hosts;
      int64_t local = 0;
      for (int64_t r = 0; r < mesh.num_ranks(); ++r) {
        bool member = true;  // rank 0's group: coordinate 0 outside it
        for (int m = mesh.ndim() - 1, rest = static_cast<int>(r); m >= 0; --m) {
          member = member && (group.Contains(m) || rest % mesh.size(m) == 0);
          rest /= static_cast<int>(mesh.size(m));
        }
        if (!member) continue;
        hosts.insert(r / per_host);
        local += r / per_host == 0;
      }
      const HostSpan span = HostSpanOf(mesh, group, per_host);
      EXPECT_EQ(span.nodes, static_cast<int64_t>(hosts.size())) << mesh.ToString() << " " << bits;
      EXPECT_EQ(span.local, local) << mesh.ToString() << " " << bits;
      EXPECT_EQ(span.ranks, mesh.GroupSize(group));
    }
  }
}

double StepCostOf(const std::string& mesh_and_state, std::vector<int64_t> mesh,
                  std::vector<int64_t> shape, const Step& step) {
  const std::shared_ptr<const CostModel> model = *MakeNcclCostModel(DefaultNcclProfile(), 8);
  const DeviceMesh m = *DeviceMesh::Create(std::move(mesh));
  const DistState state = ParseDistState(mesh_and_state, m, static_cast<int>(shape.size()))->state;
  return model->Bind(CostProblem{m, std::move(shape), 4})->StepCost(state, step);
}

// A flat all_gather over both dims of an 8 x 8 mesh of 1 GiB (2^28 f32):
// NCCL's 64-rank, 8-host ring, as above.
TEST(NcclCostModelTest, FlatGroupAllGatherIsOneMultiNodeRing) {
  const Step flat = MakeGroupStep({0, 1}, Placement::Shard(0), Placement::Replicate());
  EXPECT_NEAR(StepCostOf("S(0)S(0)", {8, 8}, {1 << 28}, flat),
              296.8 + kGiB / (1000 * 384.0 * 64 / 63), 1e-6);
}

// all_to_all on mesh dim 0 of 8 x 8 (one GPU per host, 8 hosts): a 4 MiB
// local block (2^20 f32 of 2^26 over 64... here 2^22 x 1 over dim 1), 7
// remote peers of 1/8 each: one network round, 8.4 + 14, then
// 7/8 * 4 MiB over 48 GB/s.
TEST(NcclCostModelTest, AllToAllIsPerPeerSendRecv) {
  const Step a2a = MakeStep(MeshDimSet::Single(0), Placement::Shard(0), Placement::Shard(1));
  // Shape 64 x 2^20 f32; state S(0)S(0): local block 1 x 2^20 (4 MiB).
  EXPECT_NEAR(StepCostOf("S(0)R", {8, 8}, {8, 1 << 20}, a2a), 8.4 + 14 + 7.0 / 8 * 4 * kMiB / 48000,
              1e-9);
}

TEST(NcclCostModelTest, FingerprintNamesEveryParameter) {
  const std::shared_ptr<const CostModel> model = *MakeNcclCostModel(DefaultNcclProfile(), 4);
  EXPECT_THAT(model->fingerprint(), HasSubstr("nccl profile=h100-8x400g arch=hopper"));
  EXPECT_THAT(model->fingerprint(), HasSubstr("nic_gbps=50"));
  EXPECT_THAT(model->fingerprint(), HasSubstr("devices_per_host=4"));
  EXPECT_TRUE(model->prices_native_steps());
  NcclProfile bad = DefaultNcclProfile();
  bad.nic_gbps = 0;
  EXPECT_THAT(MakeNcclCostModel(bad, 8).status().message(), HasSubstr("nic_gbps"));
  EXPECT_THAT(BuiltinNcclProfile("x").status().message(), HasSubstr("h100-8x400g"));
}

// The effect (issue 15): on 8 hosts x 8 GPUs, S(0)S(0) -> RR is one flat
// all_gather over both mesh dims at 1 GiB (3.05 ms, against 20 ms for the
// two calls the shard order allows: mesh dim 1 in the host first, then 1
// GiB over one NIC per GPU) and two nested calls at 1 MiB (11.6 us in the
// host with LL, then 71.5 us PAT across hosts: 83.1 us, against 132.1 us).
Plan NativePlan(int64_t elements, const std::string& src) {
  const DeviceMesh mesh = *DeviceMesh::Create({8, 8});
  PlanOptions options;
  options.mode = PlanMode::kNative;
  options.cost_model = *MakeNcclCostModel(DefaultNcclProfile(), 8);
  const DistSpec from = *DistSpec::Parse(mesh, src, {elements}, DType::kF32);
  const DistSpec to = *DistSpec::Parse(mesh, "RR", {elements}, DType::kF32);
  return *PlanRedistribution(from, to, options);
}

TEST(NcclCostModelTest, EightByEightGathersFlatAtOneGibAndNestedAtOneMib) {
  const Plan big = NativePlan(int64_t{1} << 28, "S(0)S(0)");
  ASSERT_EQ(big.steps.size(), 1u) << big.Trace();
  EXPECT_EQ(big.steps[0].step.group, MeshDimSet::Of({0, 1}));
  EXPECT_EQ(big.steps[0].step.kind, StepKind::kAllGather);
  EXPECT_NEAR(big.cost, 296.8 + kGiB / (1000 * 384.0 * 64 / 63), 1e-6);

  // At 1 MiB the hosts' step is an exchange (issue 16): grouped send/recv
  // of 128 KiB to each of the 7 other hosts, cheaper in NCCL's p2p model
  // than PAT's all_gather (42.4 + 1 MiB / 36000 = 71.5 us). LL in the host
  // first: 6.6 + 7 * 0.6 + 128 KiB / (1000 * 141 * 8/7).
  const Plan small = NativePlan(int64_t{1} << 18, "S(0)S(0)");
  ASSERT_EQ(small.steps.size(), 2u) << small.Trace();
  EXPECT_EQ(small.steps[0].step.group, MeshDimSet::Single(1));
  EXPECT_EQ(small.steps[0].step.kind, StepKind::kAllGather);
  EXPECT_EQ(small.steps[1].step.group, MeshDimSet::Single(0));
  EXPECT_EQ(small.steps[1].step.kind, StepKind::kExchange);
  EXPECT_NEAR(small.steps[0].cost, 10.8 + 131072 / (1000 * 141.0 * 8 / 7), 1e-9);
  EXPECT_LT(small.steps[1].cost, 42.4 + kMiB / 36000);
  EXPECT_NEAR(small.cost, 53.128056737588658, 1e-6);

  // With the other shard order the hosts gather first (PAT, 128 KiB:
  // 46.04 us), then the host gathers 1 MiB with LL (17.31 us): an exchange
  // of it is 7 Simple messages of 128 KiB, 8.4 + 7 * 3.4 + 917504 / 340000
  // = 34.9 us (NcclP2pTimeUs).
  const Plan other = NativePlan(int64_t{1} << 18, "S(0)[1]S(0)[0]");
  ASSERT_EQ(other.steps.size(), 2u) << other.Trace();
  EXPECT_EQ(other.steps[0].step.group, MeshDimSet::Single(0));
  EXPECT_NEAR(other.steps[0].cost, 42.4 + 131072.0 / 36000, 1e-9);
  EXPECT_EQ(other.steps[1].step.kind, StepKind::kAllGather);
  EXPECT_NEAR(other.steps[1].cost, 10.8 + kMiB / (1000 * 141.0 * 8 / 7), 1e-9);
  EXPECT_NEAR(other.cost, 63.348009456264776, 1e-6);
}

}  // namespace
}  // namespace reshard

namespace reshard {
namespace {

// NCCL 2.27.5's own tuning log on DGX H100 (8 x 400 Gb/s NICs), as
// meta-pytorch/autoparallel copies it (autoparallel/cost_models/
// nccl_cost_model.py @0288b2ca, _H100_AGRS_RING, _H100_AR_RING,
// _H100_AR_TREE): (latency us, bandwidth GB/s) for LL, LL128, Simple per
// (hosts, GPUs per host). The model must print the same table (one decimal,
// as the log). Every entry of the log is checked, for every (hosts, GPUs per
// host) it lists.
struct LogRow {
  int nodes, ppn;
  double lat[3], bw[3];
};
constexpr LogRow kAgRing[] = {
    {2, 1, {11.6, 22.5, 22.4}, {48.0, 88.3, 96.0}},
    {2, 2, {11.3, 21.8, 29.2}, {52.0, 117.8, 128.0}},
    {2, 4, {15.3, 29.4, 42.8}, {44.6, 201.9, 219.4}},
    {2, 8, {23.3, 44.6, 70.0}, {41.6, 313.2, 409.6}},
    {4, 1, {21.6, 39.5, 50.4}, {27.2, 58.9, 64.0}},
    {4, 2, {18.7, 33.6, 64.0}, {23.3, 100.9, 109.7}},
    {4, 4, {26.7, 48.8, 91.2}, {21.8, 188.4, 204.8}},
    {4, 8, {42.7, 79.2, 145.6}, {21.1, 303.1, 396.4}},
    {8, 1, {41.6, 73.5, 106.4}, {23.3, 50.5, 54.9}},
    {8, 2, {33.5, 57.2, 133.6}, {21.8, 94.2, 102.4}},
    {8, 4, {49.5, 87.6, 188.0}, {21.1, 182.3, 198.2}},
    {8, 8, {81.5, 148.4, 296.8}, {20.7, 298.3, 390.1}},
    {16, 8, {159.1, 286.8, 599.2}, {20.6, 295.9, 387.0}},
    {32, 8, {314.3, 563.6, 1204.0}, {20.5, 294.8, 385.5}},
};
constexpr LogRow kArRing[] = {
    {2, 1, {16.6, 31.0, 36.4}, {24.0, 44.2, 48.0}},
    {2, 8, {40.0, 75.2, 131.6}, {20.8, 156.6, 204.8}},
    {4, 2, {30.8, 53.2, 119.6}, {11.7, 50.5, 54.9}},
    {8, 8, {156.4, 282.8, 585.2}, {10.4, 149.1, 195.0}},
    {32, 4, {366.0, 626.8, 1529.2}, {10.3, 89.0, 96.8}},
};
constexpr LogRow kArTree[] = {
    {2, 1, {16.8, 31.0, 36.4}, {9.3, 31.2, 35.2}},
    {2, 2, {18.0, 33.5, 44.4}, {16.6, 62.4, 70.4}},
    {2, 8, {25.2, 48.5, 92.4}, {16.6, 124.8, 140.8}},
    {4, 1, {26.8, 48.0, 64.4}, {4.9, 17.6, 18.8}},
    {8, 4, {40.4, 72.5, 116.4}, {8.7, 70.4, 75.1}},
    {8, 8, {45.2, 82.5, 148.4}, {8.7, 98.6, 122.4}},
    {32, 8, {65.2, 116.5, 204.4}, {8.7, 98.6, 122.4}},
};

void ExpectLog(NcclFunc f, NcclAlgo a, const LogRow& row) {
  const NcclTuning t(DefaultNcclProfile(), row.nodes * row.ppn, row.nodes);
  for (int p = 0; p < 3; ++p) {
    const NcclProto proto = static_cast<NcclProto>(p);
    SCOPED_TRACE(testing::Message() << NcclAlgoName(a) << "/" << NcclProtoName(proto) << " at "
                                    << row.nodes << " hosts x " << row.ppn);
    EXPECT_NEAR(t.latency(f, a, proto), row.lat[p], 0.05 + 1e-9);
    EXPECT_NEAR(t.bandwidth(f, a, proto), row.bw[p], 0.05 + 1e-9);
  }
}

// A native bf16 plan on 8-GPU hosts.
Plan Bf16Plan(std::vector<int64_t> mesh_sizes, std::vector<int64_t> shape, const std::string& src,
              const std::string& dst) {
  const DeviceMesh mesh = *DeviceMesh::Create(mesh_sizes);
  PlanOptions options;
  options.mode = PlanMode::kNative;
  options.cost_model = *MakeNcclCostModel(DefaultNcclProfile(), 8);
  const DistSpec from = *DistSpec::Parse(mesh, src, shape, DType::kBF16);
  const DistSpec to = *DistSpec::Parse(mesh, dst, shape, DType::kBF16);
  return *PlanRedistribution(from, to, options);
}

// Issue 43's repros on one 8-GPU host, bf16: the 256 MiB all_reduce is one
// NVLS all_reduce (not reduce_scatter + exchange), the FSDP gather one
// all_gather (not an exchange); a shard-order swap stays one permute.
TEST(NcclCostModelTest, IssueReprosPlanOneCollective) {
  const Plan ar = Bf16Plan({8}, {16384, 8192}, "P", "R");
  ASSERT_EQ(ar.steps.size(), 1u) << ar.Trace();
  EXPECT_EQ(ar.steps[0].step.kind, StepKind::kAllReduce);
  // 70 + 2^28 / (476 * 8/14 * 1000): NVLS.
  EXPECT_NEAR(ar.cost, 70 + 268435456.0 / (1000 * 476.0 * 8 / 14), 1e-6);
  const Plan ag = Bf16Plan({8}, {4096, 4096}, "S(0)", "R");
  ASSERT_EQ(ag.steps.size(), 1u) << ag.Trace();
  EXPECT_EQ(ag.steps[0].step.kind, StepKind::kAllGather);
  const Plan swap = Bf16Plan({2, 4}, {4096, 4096}, "S(0)[1]S(0)[0]", "S(0)S(0)");
  ASSERT_EQ(swap.steps.size(), 1u) << swap.Trace();
  EXPECT_EQ(swap.steps[0].step.kind, StepKind::kPermute);
}

// Issue 43's send/recv repros across 8-GPU hosts, bf16: a permute or an
// exchange is priced by each rank's real peers per link (spec §6.4
// "Send/recv": NVLink to its host's peers, its NIC to other hosts').

// The price of `step` from `src` on `mesh` and a bf16 `shape`.
double StepPrice(std::vector<int64_t> mesh_sizes, std::vector<int64_t> shape,
                 const std::string& src, const Step& step) {
  const DeviceMesh mesh = *DeviceMesh::Create(mesh_sizes);
  const auto bound =
      (*MakeNcclCostModel(DefaultNcclProfile(), 8))->Bind(CostProblem{mesh, shape, /*itemsize=*/2});
  return bound->StepCost(ParseDistState(src, mesh, static_cast<int>(shape.size()))->state, step);
}

// C2 and C6: on 8 x 8 (mesh dim 1 in a host), S(0)[1]S(0)[0] -> S(0)S(0)
// and S(0)S(1) -> S(1)S(0) are the same permutation: rank (i, j) sends its
// whole block to rank (j, i) on host j, one message over the network. Not
// every peer (63 messages, 7 network rounds, as before), but through PXN
// (link_load.h): every remote peer of host i's ranks has local rank i, so
// host i's 7 sending ranks share NIC i: 8.4 + 14 (one network round) +
// 7 x block / 48000 (one NIC: 8 x 48 GB/s per 8 GPUs). Staged over rails
// (spec §11.2) every NIC sends and receives one block, and a stager passes
// it on over NVLink a round later: at least two rounds' latency (2 x 12.4)
// and one block through a NIC, far below the funnel, and below the plan
// without staging (an all_to_all across hosts, then a permute spread over
// the rails: 87.7 us for C2, 221.5 us for C6).
TEST(NcclCostModelTest, PermuteWhoseRemotePeersShareARailFunnelsThroughOneNic) {
  const Step swap = MakePermute({{0, 0}, {1, 0}});
  const double one_message = 8.4 + 14 + 7 * 524288.0 / 48000;  // 512 KiB blocks: 98.9 us
  EXPECT_NEAR(StepPrice({8, 8}, {4096, 4096}, "S(0)[1]S(0)[0]", swap), one_message, 1e-9);
  const Plan small = Bf16Plan({8, 8}, {4096, 4096}, "S(0)[1]S(0)[0]", "S(0)S(0)");
  ASSERT_EQ(small.steps.size(), 1u) << small.Trace();
  EXPECT_EQ(small.steps[0].step.kind, StepKind::kPermute) << small.Trace();
  EXPECT_TRUE(small.steps[0].step.staging.staged());
  EXPECT_GT(small.cost, 2 * 12.4 + 524288.0 / 48000);
  EXPECT_LT(small.cost, 87.7 * 0.6);

  const Step transpose = MakePermute({{1, 0}, {0, 1}});
  const double funnel = 8.4 + 14 + 7 * 4194304.0 / 48000;  // 4 MiB blocks: 634.1 us
  EXPECT_NEAR(StepPrice({8, 8}, {16384, 8192}, "S(0)S(1)", transpose), funnel, 1e-9);
  const Plan big = Bf16Plan({8, 8}, {16384, 8192}, "S(0)S(1)", "S(1)S(0)");
  ASSERT_EQ(big.steps.size(), 1u) << big.Trace();
  EXPECT_EQ(big.steps[0].step.kind, StepKind::kPermute) << big.Trace();
  EXPECT_TRUE(big.steps[0].step.staging.staged());
  EXPECT_GT(big.cost, 2 * 12.4 + 4194304.0 / 48000);
  EXPECT_LT(big.cost, 221.5 * 0.65);
}

// C3: on 2 x 8, S(0)S(1) -> RS(0) (rows by host, columns by GPU, to rows by
// GPU): rank (h, j) wants row block j of 8 (16 MiB), which host j / 4 holds
// as 8 pieces of 2 MiB, one per GPU. The ranks of the other host receive
// all 8 over their NIC (16 MiB); those of the same host 7 over NVLink
// (14 MiB); every rank sends 4 pieces to the other host, through PXN's
// rails 0-3 (rank (1, j) has local rank j): each carries 8 x 2 MiB, as much
// as a receiving NIC. So 8 network peers
// (one round), 7 NVLink peers (Simple: a hop each), and the NIC's 16 MiB
// dominate: 8.4 + 14 + 7 x 3.4 + 16777216 / 48000 = 395.7 us. In the
// group's proportion (8 of 15 peers remote) it was 251.1 us, and the plan
// chunk + this exchange (256.1 us) won. Direct, an all_gather across hosts
// and an all_to_all within them (277.5 us) beat it; staged over rails
// (spec §11.2) the 64 MiB entering each host spread over its 8 NICs, 8 MiB
// each (at least 174.8 us and two rounds), instead of 16 MiB into 4.
TEST(NcclCostModelTest, ExchangePricesItsBusiestRanksRemotePeers) {
  const Step exchange = MakeExchange(MeshDimSet::Of({0, 1}), {{1, 0}});
  const double price = 8.4 + 14 + 7 * 3.4 + 16777216.0 / 48000;
  EXPECT_NEAR(StepPrice({2, 8}, {8192, 8192}, "S(0)S(1)", exchange), price, 1e-9);

  const Plan plan = Bf16Plan({2, 8}, {8192, 8192}, "S(0)R", "RS(0)");
  ASSERT_EQ(plan.steps.size(), 2u) << plan.Trace();
  EXPECT_EQ(plan.steps[0].step.kind, StepKind::kChunk) << plan.Trace();
  EXPECT_EQ(plan.steps[1].step.kind, StepKind::kExchange) << plan.Trace();
  EXPECT_TRUE(plan.steps[1].step.staging.staged());
  EXPECT_GT(plan.steps[1].cost, 2 * 12.4 + 8388608.0 / 48000);
  EXPECT_LT(plan.cost, 277.5);
}

TEST(NcclTuningTest, ReproducesNcclsTuningLogForDgxH100) {
  for (const LogRow& row : kAgRing) ExpectLog(NcclFunc::kAllGather, NcclAlgo::kRing, row);
  for (const LogRow& row : kAgRing) ExpectLog(NcclFunc::kReduceScatter, NcclAlgo::kRing, row);
  for (const LogRow& row : kArRing) ExpectLog(NcclFunc::kAllReduce, NcclAlgo::kRing, row);
  for (const LogRow& row : kArTree) ExpectLog(NcclFunc::kAllReduce, NcclAlgo::kTree, row);
}

}  // namespace
}  // namespace reshard

namespace reshard {
namespace {

// Spec §12: under the nccl model memory is NCCL's, whose all_gather and
// reduce_scatter run in place. A 16 MiB FSDP gather over 8 ranks (4096 x
// 1024 f32, 2 MiB shards): the 16 MiB buffer is the output as it is, so the
// peak is 16 MiB and --max-memory 17M plans it; Gloo's accounting (the
// alpha-beta model) needs 2 + 2 + 16 + 16 = 36 MiB and refuses.
TEST(NcclMemoryTest, FsdpAllGatherFitsIn17MiBWithNccl) {
  const DeviceMesh mesh = *DeviceMesh::Create({8});
  const DistSpec src = *DistSpec::Parse(mesh, "S(0)", {4096, 1024}, DType::kF32);
  const DistSpec dst = *DistSpec::Parse(mesh, "R", {4096, 1024}, DType::kF32);
  PlanOptions options;
  options.mode = PlanMode::kNative;
  options.max_memory = 17 * (int64_t{1} << 20);
  options.cost_model = *MakeNcclCostModel(DefaultNcclProfile(), 8);
  const absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, 16 << 20);
  options.cost_model = *MakeCostModel("alpha-beta", 8);
  EXPECT_EQ(PlanRedistribution(src, dst, options).status().code(),
            absl::StatusCode::kResourceExhausted);
}

int64_t Peak(std::vector<int64_t> mesh_sizes, std::vector<int64_t> shape, const std::string& state,
             const Step& step, MemoryBackend backend) {
  const DeviceMesh mesh = *DeviceMesh::Create(std::move(mesh_sizes));
  const DistState s = ParseDistState(state, mesh, static_cast<int>(shape.size()))->state;
  return StepPeakBytes(s, step, mesh, shape, DType::kF32, backend);
}

// Per kind (MiB below; 4096 x 1024 f32 is 16 MiB, 8 ranks):
//   all_gather of dim 0: the buffer is the output: 16; Gloo 2 + 2 + 16 + 16
//   all_gather of dim 1 (1024 x 4096): the pieces are not contiguous, the
//     buffer is rearranged into the output: 16 + 16
//   reduce_scatter onto dim 0: the input is the buffer, the slot the output: 16;
//     Gloo 16 + 16 + 2 + 2
//   all_reduce: in place for both: 16
TEST(NcclMemoryTest, InPlaceGatherAndScatterPerKind) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  const Placement S0 = Placement::Shard(0), S1 = Placement::Shard(1), R = Placement::Replicate();
  const Placement P = Placement::Partial(ReduceOp::kSum);
  const Step gather0 = MakeStep(MeshDimSet::Single(0), S0, R);
  EXPECT_EQ(Peak({8}, {4096, 1024}, "S(0)", gather0, MemoryBackend::kNccl), 16 * kMiB);
  EXPECT_EQ(Peak({8}, {4096, 1024}, "S(0)", gather0, MemoryBackend::kGloo), 36 * kMiB);
  const Step gather1 = MakeStep(MeshDimSet::Single(0), S1, R);
  EXPECT_EQ(Peak({8}, {1024, 4096}, "S(1)", gather1, MemoryBackend::kNccl), 32 * kMiB);
  const Step scatter = MakeStep(MeshDimSet::Single(0), P, S0);
  EXPECT_EQ(Peak({8}, {4096, 1024}, "P", scatter, MemoryBackend::kNccl), 16 * kMiB);
  EXPECT_EQ(Peak({8}, {4096, 1024}, "P", scatter, MemoryBackend::kGloo), 36 * kMiB);
  const Step reduce = MakeStep(MeshDimSet::Single(0), P, R);
  EXPECT_EQ(Peak({8}, {4096, 1024}, "P", reduce, MemoryBackend::kNccl), 16 * kMiB);
  // A group gather nested in descending mesh-dim order is rearranged: the
  // member order (ascending) is not the nesting order.
  const Step group = MakeStep(MeshDimSet::Of({0, 1}), S0, R);
  EXPECT_EQ(Peak({2, 4}, {4096, 1024}, "S(0)S(0)", group, MemoryBackend::kNccl), 16 * kMiB);
  EXPECT_EQ(Peak({2, 4}, {4096, 1024}, "S(0)[1]S(0)[0]", group, MemoryBackend::kNccl), 32 * kMiB);
}

}  // namespace
}  // namespace reshard
