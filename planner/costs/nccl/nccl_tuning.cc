#include "planner/costs/nccl/nccl_tuning.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace reshard {
namespace {

// Every constant below is NVIDIA/nccl at commit 5067397c (2.30):
// src/graph/tuning.cc (ncclTunerConstantsDefaults, nvlsEfficiency,
// treeCorrectionFactor) and src/graph/search.cc (speed arrays).
// Indices: [algo: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree,
// PAT][proto: LL, LL128, Simple]; [arch: Volta, Ampere, Hopper, Blackwell]
// [node bucket: 1, 2, >= 3 nodes].
constexpr double kBaseLat[kNumNcclAlgos][kNumNcclProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
    {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
constexpr double kNvlinkLat[kNumNcclAlgos][kNumNcclProtos] = {
    {0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8},
    {0, 0, 25},       {0, 0, 25},      {0, 0, 4.0}};
constexpr double kNetLat[kNumNcclAlgos][kNumNcclProtos] = {
    {5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}};
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChMaxRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChMaxTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChMaxNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
constexpr double kTreeCorrection[kNumNcclProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// search.cc's speed arrays (GB/s per channel), tried from the first.
constexpr double kIntraSpeeds[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                   9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr double kInterSpeeds[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                   7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm90IntraSpeeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                       15.0, 12.0, 11.0, 6.0,  3.0};
constexpr double kSm90InterSpeeds[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm100IntraSpeeds[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                        40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kSm100InterSpeeds[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                        20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr int kMaxRingChannels = 32;  // MAXCHANNELS / 2 (src/init.cc)

// Measured, not NCCL's model (docs/cost-models.md, "Where it departs from
// NCCL's own model"; spec §6.4): 8 x
// H200 NVLS in-place all_reduce busbw 301-480 GB/s at 32 MB-8 GB
// (Azure/AI-benchmarking-guide, Azure_Results/ND_H200_v5_results.md; peak
// ~480 also NVIDIA/nccl-tests #212, 476 #290). On one host tuning.cc's NVLS
// bandwidth without its bwInter cap is 476 busbw on Hopper, the measured
// peak; with the cap 320, below the ring's 360, which no run shows. The
// latency is fitted to those runs at that bandwidth (within 3% from 32 MB).
constexpr double kNvlsOneHostAllReduceLat = 70.0;
// Grouped send/recv over NVLink reaches this share of the ring's NVLink
// bandwidth: 4 x H100 alltoall, 500 MB (524288000 B) in 1174 us, each rank
// sending 3/4 of it (NVIDIA/nccl issue #2169), at 3 peers' latency
// (NcclP2pTimeUs): 393216000 B / (1174 - 18.6) us = 340 GB/s of the 360.
constexpr double kP2pNvlinkEfficiency = 340.0 / 360.0;
constexpr int kMaxNvlsArity = 32;  // NCCL_MAX_NVLS_ARITY

// The first speed of the arch's array (intra: one host; inter: several) that
// is at most `max_bw` and, times `min_channels`, at most `total_bw`
// (ncclTopoCompute's starting speed; the search then keeps it when the
// channels fit, which they do on the uniform hosts profiles describe).
double StartSpeed(GpuArch arch, bool inter, double max_bw, double total_bw, int min_channels) {
  const double* speeds;
  int n;
  if (arch == GpuArch::kBlackwell) {
    speeds = inter ? kSm100InterSpeeds : kSm100IntraSpeeds;
    n = inter ? std::size(kSm100InterSpeeds) : std::size(kSm100IntraSpeeds);
  } else if (arch == GpuArch::kHopper) {
    speeds = inter ? kSm90InterSpeeds : kSm90IntraSpeeds;
    n = inter ? std::size(kSm90InterSpeeds) : std::size(kSm90IntraSpeeds);
  } else {
    speeds = inter ? kInterSpeeds : kIntraSpeeds;
    n = inter ? std::size(kInterSpeeds) : std::size(kIntraSpeeds);
  }
  int i = 0;
  while ((speeds[i] > max_bw || speeds[i] * min_channels > total_bw) && i < n - 1) ++i;
  return speeds[i];
}

// ncclTopoDupChannels: fast graphs run twice the channels at half the speed.
void DupChannels(GpuArch arch, NcclGraph* g) {
  if (g->channels == 0 || g->bw_intra < 25.0) return;
  if (arch >= GpuArch::kHopper && g->bw_intra < 50.0 && g->channels > 4) return;
  const int dup = std::min(g->channels * 2, kMaxRingChannels);
  const int div = (dup + g->channels - 1) / g->channels;
  g->bw_intra /= div;
  g->bw_inter /= div;
  g->channels = dup;
}

// NICs a group of `ppn` GPUs per host reaches: its share, at least one.
int64_t NetsFor(const NcclProfile& p, int64_t ppn) {
  const int64_t share = (ppn * p.nics_per_host + p.gpus_per_host - 1) / p.gpus_per_host;
  return std::clamp<int64_t>(share, 1, p.nics_per_host);
}

int Log2i(double n) { return n < 1 ? -1 : static_cast<int>(std::floor(std::log2(n))); }

}  // namespace

absl::string_view NcclAlgoName(NcclAlgo algo) {
  static constexpr absl::string_view kNames[] = {
      "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return kNames[static_cast<int>(algo)];
}

absl::string_view NcclProtoName(NcclProto proto) {
  static constexpr absl::string_view kNames[] = {"LL", "LL128", "Simple"};
  return kNames[static_cast<int>(proto)];
}

// One host: as many channels at the starting speed as the GPU's NVLink
// carries (every ring channel crosses every GPU). Several: one channel per
// NIC the group reaches, at the network speed (what NCCL's tuning logs show
// for DGX H100: 8 x 48 GB/s at 8 GPUs per node, 2 x 24 at one, §6.4).
NcclGraph NcclRingGraph(const NcclProfile& p, int64_t ppn, int64_t nodes) {
  NcclGraph g;
  if (nodes <= 1) {
    const double speed = StartSpeed(p.arch, false, p.nvlink_gbps, p.nvlink_gbps, 1);
    g.channels = std::clamp(static_cast<int>(p.nvlink_gbps / speed), 1, kMaxRingChannels);
    g.bw_intra = g.bw_inter = speed;
  } else {
    const double max_bw = std::min(p.nic_gbps, p.nvlink_gbps);
    const double speed = StartSpeed(p.arch, true, max_bw, max_bw * NetsFor(p, ppn), 1);
    const int per_nic = std::max(1, static_cast<int>(p.nic_gbps / speed));
    g.channels = std::min<int64_t>(kMaxRingChannels, NetsFor(p, ppn) * per_nic);
    g.bw_intra = g.bw_inter = speed;
  }
  DupChannels(p.arch, &g);
  return g;
}

// NVLS needs Hopper or later, NVSwitches and two GPUs per host; one
// channel per GPU (maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)), all of
// them on one host (minChannels = maxChannels), so the speed is the
// fastest at which they all fit on NVLink. Never duplicated.
NcclGraph NcclNvlsGraph(const NcclProfile& p, int64_t ppn, int64_t nodes) {
  NcclGraph g;
  if (p.arch < GpuArch::kHopper || !p.nvswitch || ppn < 2) return g;
  const int max_channels = static_cast<int>(std::min<int64_t>(kMaxNvlsArity, ppn));
  if (nodes <= 1) {
    g.bw_intra = StartSpeed(p.arch, false, p.nvlink_gbps, p.nvlink_gbps, max_channels);
    g.channels = max_channels;
  } else {
    const double max_bw = std::min(p.nic_gbps, p.nvlink_gbps);
    g.bw_intra = StartSpeed(p.arch, true, max_bw, max_bw * NetsFor(p, ppn), 1);
    g.channels = static_cast<int>(std::min<int64_t>(max_channels, NetsFor(p, ppn)));
  }
  g.bw_inter = g.bw_intra;
  return g;
}

NcclTuning::NcclTuning(const NcclProfile& profile, int64_t ranks, int64_t nodes)
    : ranks_(ranks), nodes_(std::max<int64_t>(1, nodes)), arch_(static_cast<int>(profile.arch)) {
  if (ranks_ <= 1) return;
  ring_ = NcclRingGraph(profile, ranks_ / nodes_, nodes_);
  // The tree graph has the ring's channels; across hosts its search raises
  // the intra-host speed as far as NVLink allows (pass 2 of
  // ncclTopoCompute), which only matters where tuning.cc reads bwIntra: up
  // to 2 hosts. NCCL 2.27.5's DGX H100 tuning log shows the tree at its
  // per-channel cap there (§6.4).
  tree_ = ring_;
  if (nodes_ > 1) tree_.bw_intra = std::max(ring_.bw_intra, profile.nvlink_gbps / ring_.channels);
  nvls_ = NcclNvlsGraph(profile, ranks_ / nodes_, nodes_);
  for (int f = 0; f < kNumNcclFuncs; ++f) {
    for (int a = 0; a < kNumNcclAlgos; ++a) {
      for (int p = 0; p < kNumNcclProtos; ++p) {
        Tune(profile, static_cast<NcclFunc>(f), static_cast<NcclAlgo>(a),
             static_cast<NcclProto>(p));
        if (bw_[f][a][p] != 0) {
          Enabled& enabled = enabled_[f];
          enabled.pairs[enabled.count++] = static_cast<uint8_t>(a * kNumNcclProtos + p);
        }
      }
    }
  }
}

// ncclTopoTuneModel for one (func, algo, proto): which pairs exist, then the
// bus bandwidth with its refinements, converted to the bandwidth of nBytes,
// then the latency. Enable rules from the end of ncclTopoTuneModel.
void NcclTuning::Tune(const NcclProfile& profile, NcclFunc f, NcclAlgo a, NcclProto p) {
  const bool gather = f != NcclFunc::kAllReduce;  // all_gather or reduce_scatter
  const bool simple = p == NcclProto::kSimple;
  const bool nvls = a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree;
  if (a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain) return;  // collnet off
  if (gather && a != NcclAlgo::kPat && a != NcclAlgo::kRing && a != NcclAlgo::kNvls) return;
  if (!gather && a == NcclAlgo::kPat) return;
  if (nvls && !simple) return;
  if (a == NcclAlgo::kPat && (!simple || nodes_ != ranks_)) return;  // ncclPatEnable
  if (a == NcclAlgo::kNvlsTree && nodes_ == 1) return;
  if (a == NcclAlgo::kNvls && nodes_ > 1) return;  // multi-node NVLS is collnet
  const NcclGraph& g = nvls ? nvls_ : a == NcclAlgo::kTree ? tree_ : ring_;
  if (g.channels == 0 || (nvls && g.channels < 2)) return;

  const double n = static_cast<double>(ranks_);
  const double ppn = n / static_cast<double>(nodes_);
  const int node_bucket = nodes_ <= 2 ? static_cast<int>(nodes_) - 1 : 2;
  const int ll_row = nodes_ == 1 ? arch_ : profile.amd_cpu ? 1 : 0;
  const double ll_max_bw = kLlMaxBw[ll_row][node_bucket];
  const double nch = g.channels;
  const double nsteps = gather ? n - 1 : 2 * (n - 1);

  double bw = nodes_ <= 2 ? g.bw_intra : g.bw_inter;
  if (nvls) {
    double intra = g.bw_intra * kNvlsEfficiency[arch_] * (nch - 1) / nch;
    intra *= gather ? (ppn - 1) / ppn : 2.0;
    // One host's NVLS all_reduce: uncapped, as measured (kNvlsOneHostAllReduceLat).
    const double inter = nodes_ == 1 && !gather
                             ? intra
                             : g.bw_inter * (nodes_ <= 2 && a == NcclAlgo::kNvlsTree ? 2 : 1);
    bw = std::min({intra, inter,
                   a == NcclAlgo::kNvlsTree ? kPerChMaxNvlsTreeBw[arch_][node_bucket]
                                            : std::numeric_limits<double>::max()});
  }
  double bus = nch * bw;
  if (a == NcclAlgo::kRing && p == NcclProto::kLL) bus = std::min(ll_max_bw, bus * .5);
  if (a == NcclAlgo::kRing && p == NcclProto::kLL128) {
    bus = std::min(bus * 0.92, nch * kPerChMaxRingLL128Bw[arch_][node_bucket]);
  }
  if (a == NcclAlgo::kTree) bus = std::min(bus * .92, nch * kPerChMaxTreeBw[arch_][node_bucket]);
  if (a == NcclAlgo::kTree && p == NcclProto::kLL) bus = std::min(bus / 3.8, ll_max_bw);
  if (a == NcclAlgo::kTree && p == NcclProto::kLL128) {
    bus = std::min(bus * (nodes_ == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   nch * kPerChMaxTreeLL128Bw[arch_][node_bucket]);
  }
  // Hopper and later fall back from the balanced tree to the simple tree
  // pattern (search.cc, "Try a simpler tree"), which tuning.cc slows by .85;
  // NCCL 2.27.5's tuning log for DGX H100 shows it (§6.4).
  if (a == NcclAlgo::kTree && arch_ >= I(GpuArch::kHopper)) bus *= .85;
  if (a == NcclAlgo::kPat) bus *= .75;
  // Bus bandwidth to the bandwidth of nBytes; all_gather and reduce_scatter
  // by anything but ring keep their bus bandwidth.
  if (!(a != NcclAlgo::kRing && gather)) bus *= a == NcclAlgo::kTree ? .5 : n / nsteps;
  bw_[I(f)][I(a)][I(p)] = bus;
  lat_[I(f)][I(a)][I(p)] = Latency(profile, f, a, p);
}

// The latency part of ncclTopoTuneModel. latencyInter (the network's own
// latency, from the net plugin) is taken as 0: NCCL's tuning logs for DGX
// H100 match the formula with it at 0 (§6.4).
double NcclTuning::Latency(const NcclProfile& profile, NcclFunc f, NcclAlgo a, NcclProto p) const {
  const bool all_reduce = f == NcclFunc::kAllReduce;
  const double n = static_cast<double>(ranks_);
  const double nodes = static_cast<double>(nodes_);
  const double nsteps = all_reduce ? 2 * (n - 1) : n - 1;
  const int64_t ppn = ranks_ / nodes_;  // integer, as tuning.cc's nRanks / nNodes
  double lat = kBaseLat[I(a)][I(p)];
  double intra = kNvlinkLat[I(a)][I(p)];  // NVLink hosts (profiles have NVLink)
  // With one GPU per host every network latency is exposed: tree's.
  const double inter = ppn == 1 ? kNetLat[I(NcclAlgo::kTree)][I(p)] : kNetLat[I(a)][I(p)];
  switch (a) {
    case NcclAlgo::kRing: {
      double overhead = 0;
      if (nodes_ > 1) overhead = (profile.amd_cpu ? 2.0 : 1.0) * (p == NcclProto::kSimple ? 3 : 1);
      intra = std::max(intra, overhead);
      const double inter_steps = nodes_ == 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
      return lat + (nsteps - inter_steps) * intra + inter_steps * inter;
    }
    case NcclAlgo::kTree:
      return lat + 2 * (static_cast<double>(ppn - 1) * intra + Log2i(nodes) * inter);
    case NcclAlgo::kNvls:
      if (nodes_ == 1 && all_reduce) return kNvlsOneHostAllReduceLat;
      return intra + (nodes_ > 1 ? inter : 0);
    case NcclAlgo::kNvlsTree:
      return lat + intra + 2 * Log2i(nodes) * inter;
    case NcclAlgo::kPat:
      return lat + Log2i(nodes) * (inter / 3.5) + n * 2.8;
    default:
      return lat;
  }
}

double NcclTuning::AlgoTimeUs(NcclFunc f, NcclAlgo a, NcclProto p, double bytes) const {
  if (bandwidth(f, a, p) == 0) return -1;
  return AlgoTime(I(f), I(a), I(p), bytes, Log2i(std::floor(bytes / 64)));  // log2i(nBytes >> 6)
}

double NcclTuning::AlgoTime(int f, int a, int p, double bytes, int log_size) const {
  double bw = bw_[f][a][p];
  double lat = lat_[f][a][p];
  const bool all_reduce = f == I(NcclFunc::kAllReduce);
  if (a == I(NcclAlgo::kTree) && all_reduce && log_size >= 0 && log_size < 23) {
    bw *= kTreeCorrection[p][log_size];
  }
  if (a == I(NcclAlgo::kNvlsTree) && all_reduce && log_size >= 0 && log_size < 24 &&
      arch_ >= I(GpuArch::kBlackwell)) {
    bw *= kTreeCorrection[p][log_size];
  }
  // The ring's plateau effect (sm80 and later: 1.4, before: 1.9).
  if (a == I(NcclAlgo::kRing) && p == I(NcclProto::kSimple) && nodes_ > 1 && all_reduce &&
      bytes / (static_cast<double>(ring_.channels) * static_cast<double>(ranks_)) >= 64) {
    lat *= arch_ < I(GpuArch::kAmpere) ? 1.9 : 1.4;
  }
  return lat + bytes / (1000 * bw);
}

// The search prices every edge here (spec §5.2): the enabled pairs are
// listed once (enabled_) and nBytes's log2 is taken once, not per pair.
NcclChoice NcclTuning::Time(NcclFunc f, double bytes) const {
  NcclChoice best;
  if (ranks_ <= 1) return best;
  best.time_us = -1;
  // Only all_reduce reads it (AlgoTime's tree correction).
  const int log_size = f == NcclFunc::kAllReduce ? Log2i(std::floor(bytes / 64)) : -1;
  const Enabled& enabled = enabled_[I(f)];
  for (int i = 0; i < enabled.count; ++i) {
    const int a = enabled.pairs[i] / kNumNcclProtos;
    const int p = enabled.pairs[i] % kNumNcclProtos;
    const double t = AlgoTime(I(f), a, p, bytes, log_size);
    if (best.time_us < 0 || t < best.time_us) {
      best = {t, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p)};
    }
  }
  return best;
}

double NcclTuning::MinLatency(NcclFunc f) const {
  double least = -1;
  for (int a = 0; a < kNumNcclAlgos; ++a) {
    for (int p = 0; p < kNumNcclProtos; ++p) {
      if (bw_[I(f)][a][p] == 0) continue;
      const double lat = lat_[I(f)][a][p];
      if (least < 0 || lat < least) least = lat;
    }
  }
  return std::max(least, 0.0);
}

double NcclTuning::TimeLowerBound(NcclFunc f, double bytes) const {
  if (ranks_ <= 1) return 0;
  double least = -1;
  const Enabled& enabled = enabled_[I(f)];
  for (int i = 0; i < enabled.count; ++i) {
    const int a = enabled.pairs[i] / kNumNcclProtos;
    const int p = enabled.pairs[i] % kNumNcclProtos;
    // AlgoTime's sum, on the uncorrected latency and bandwidth.
    const double t = lat_[I(f)][a][p] + bytes / (1000 * bw_[I(f)][a][p]);
    if (least < 0 || t < least) least = t;
  }
  return std::max(least, 0.0);
}

NcclP2pLinks NcclP2pLinksFor(const NcclProfile& profile) {
  const NcclGraph g = NcclRingGraph(profile, profile.gpus_per_host, 1);
  const double speed = StartSpeed(
      profile.arch, true, std::min(profile.nic_gbps, profile.nvlink_gbps), profile.nic_gbps, 1);
  return {g.channels * g.bw_intra * kP2pNvlinkEfficiency,
          speed * profile.nics_per_host / profile.gpus_per_host};
}

// nccl's deferred exchange bound (nccl_cost_model.cc, spec §5.2 item 7)
// takes the latency to grow with the peers: a round over the network must
// cost at least one over NVLink.
static_assert(
    kNetLat[static_cast<int>(NcclAlgo::kRing)][static_cast<int>(NcclProto::kSimple)] >=
        kNvlinkLat[static_cast<int>(NcclAlgo::kRing)][static_cast<int>(NcclProto::kSimple)],
    "a network round must cost at least an NVLink round");

double NcclP2pTimeUs(const NcclP2pLinks& links, const NcclP2pCall& call) {
  const int64_t peers = call.intra_peers + call.inter_peers;
  if (peers == 0) return 0;
  constexpr int64_t kPeersPerRound = 8;      // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
  constexpr double kP2pLlThreshold = 16384;  // NCCL_P2P_LL_THRESHOLD's default
  const int64_t rounds = (peers + kPeersPerRound - 1) / kPeersPerRound;
  const int64_t net_rounds = (call.inter_peers + kPeersPerRound - 1) / kPeersPerRound;
  // Messages over LL's threshold run Simple, where each NVLink peer costs a
  // hop as each of a ring's NVLink steps does: a send/recv to every peer
  // moves what a ring all_gather moves and is not faster (NVIDIA/nccl
  // #2169). Small ones cost an NVLink round per 8 peers (8 x H20 alltoall
  // of 4 B-4 KiB: 10.3-11.1 us, deepseek-ai/DeepEP #303).
  const bool simple_intra =
      call.intra_peers > 0 &&
      call.intra_bytes > kP2pLlThreshold * static_cast<double>(call.intra_peers);
  const int64_t nvlink_hops = simple_intra ? call.intra_peers : rounds - net_rounds;
  const int ring = static_cast<int>(NcclAlgo::kRing);
  const int simple = static_cast<int>(NcclProto::kSimple);
  const double lat = kBaseLat[ring][simple] +
                     static_cast<double>(net_rounds) * kNetLat[ring][simple] +
                     static_cast<double>(nvlink_hops) * kNvlinkLat[ring][simple];
  const double nvlink = call.intra_bytes / (1000 * links.nvlink_gbps);
  const double net = call.inter_bytes / (1000 * links.net_gbps);
  return lat + std::max(nvlink, net);
}

}  // namespace reshard
