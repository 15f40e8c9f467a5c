// NCCL's own cost model for one communicator (docs/planner-semantics.md
// §6.4), restated from NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel,
// ncclTopoGetAlgoTime) at commit 5067397c (2.30). NCCL prices a collective
// call as
//
//   time_us = latency[func][algo][proto] + nBytes / (1000 * bw[func][algo][proto])
//
// and runs the (algorithm, protocol) pair with the smallest time. nBytes is
// the whole buffer (all_gather / reduce_scatter: ranks x per-rank count).
//
//   NcclTuning t(DefaultNcclProfile(), /*ranks=*/64, /*nodes=*/8);
//   NcclChoice c = t.Time(NcclFunc::kAllGather, 1 << 30);   // c.time_us, c.algo, c.proto
//
// NCCL has no model for send/recv; NcclP2pTimeUs is this library's, built
// from NCCL's constants and its p2p schedule (§6.4).
#ifndef RESHARD_PLANNER_COSTS_NCCL_NCCL_TUNING_H_
#define RESHARD_PLANNER_COSTS_NCCL_NCCL_TUNING_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "planner/costs/nccl/nccl_profile.h"

namespace reshard {

enum class NcclFunc { kAllGather = 0, kReduceScatter = 1, kAllReduce = 2 };
inline constexpr int kNumNcclFuncs = 3;
// tuning.cc's order (NCCL_ALGO_*). CollNet needs a SHARP-capable network
// and is off by default (collnetEnable = 0); it is never considered here.
enum class NcclAlgo { kTree = 0, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
inline constexpr int kNumNcclAlgos = 7;
enum class NcclProto { kLL = 0, kLL128 = 1, kSimple = 2 };
inline constexpr int kNumNcclProtos = 3;

absl::string_view NcclAlgoName(NcclAlgo algo);     // "tree", "ring", ..., "pat"
absl::string_view NcclProtoName(NcclProto proto);  // "LL", "LL128", "Simple"

// What NCCL's graph search (src/graph/search.cc) finds for one pattern:
// channels and per-channel speeds, GB/s. channels == 0: no such graph.
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0;
  double bw_inter = 0;
};
// The ring graph (tree uses the same channels) and the NVLS graph for a
// group of `ppn` GPUs on each of `nodes` hosts (§6.4 "graphs").
NcclGraph NcclRingGraph(const NcclProfile& profile, int64_t ppn, int64_t nodes);
NcclGraph NcclNvlsGraph(const NcclProfile& profile, int64_t ppn, int64_t nodes);

struct NcclChoice {
  double time_us = 0;
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
};

// The latency and bandwidth tables of ncclTopoTuneModel for a communicator
// of `ranks` GPUs on `nodes` hosts (ranks / nodes per host), with the
// enable rules of tuning.cc: NVLS only on one host (Hopper+, NVSwitch),
// NVLS-Tree only across hosts, PAT only at one GPU per host, tree for
// all_reduce only. One departure: one host's NVLS all_reduce is priced as
// measured (uncapped bandwidth, a fitted latency; nccl_tuning.cc).
class NcclTuning {
 public:
  NcclTuning(const NcclProfile& profile, int64_t ranks, int64_t nodes);

  // Microseconds, and GB/s of nBytes; a bandwidth of 0 means NCCL does not
  // consider the pair.
  double latency(NcclFunc f, NcclAlgo a, NcclProto p) const { return lat_[I(f)][I(a)][I(p)]; }
  double bandwidth(NcclFunc f, NcclAlgo a, NcclProto p) const { return bw_[I(f)][I(a)][I(p)]; }
  // ncclTopoGetAlgoTime for one pair (numPipeOps 1); negative when disabled.
  double AlgoTimeUs(NcclFunc f, NcclAlgo a, NcclProto p, double bytes) const;
  // The pair NCCL picks for `bytes` (nBytes, above) and its time. A
  // communicator of one rank costs 0.
  NcclChoice Time(NcclFunc f, double bytes) const;
  // The smallest latency of any enabled pair: Time(f, b) >= it for every b.
  double MinLatency(NcclFunc f) const;
  // A lower bound on Time(f, b) for every b >= `bytes`: each enabled pair's
  // latency plus `bytes` at its bandwidth, without the corrections that only
  // raise a time (the tree correction lowers a bandwidth, the ring plateau
  // raises a latency), the smallest over the pairs; 0 for one rank.
  double TimeLowerBound(NcclFunc f, double bytes) const;

  int64_t ranks() const { return ranks_; }
  int64_t nodes() const { return nodes_; }

 private:
  template <typename E>
  static int I(E e) {
    return static_cast<int>(e);
  }
  void Tune(const NcclProfile& profile, NcclFunc f, NcclAlgo a, NcclProto p);
  // AlgoTimeUs of an enabled pair, with nBytes's log2i(nBytes >> 6) given.
  double AlgoTime(int f, int a, int p, double bytes, int log_size) const;
  double Latency(const NcclProfile& profile, NcclFunc f, NcclAlgo a, NcclProto p) const;

  int64_t ranks_;
  int64_t nodes_;
  int arch_;
  NcclGraph ring_;
  NcclGraph tree_;
  NcclGraph nvls_;
  double lat_[kNumNcclFuncs][kNumNcclAlgos][kNumNcclProtos] = {};
  double bw_[kNumNcclFuncs][kNumNcclAlgos][kNumNcclProtos] = {};
  // Per func, the pairs with a bandwidth (a * kNumNcclProtos + p), in
  // tuning.cc's order: Time's candidates, ties to the first as NCCL's.
  struct Enabled {
    int count = 0;
    uint8_t pairs[kNumNcclAlgos * kNumNcclProtos] = {};
  };
  Enabled enabled_[kNumNcclFuncs];
};

// Grouped send/recv (all_to_all, permute), priced per peer message (§6.4):
// NCCL runs at most 8 peers per round (NCCL_MAX_DEV_WORK_P2P_PER_BATCH,
// ncclP2pSchedule), so
//   time = 8.4 + rounds_net * 14 + nvlink_hops * 3.4
//        + max(intra_bytes / nvlink_bw, inter_bytes / nic_bw_per_gpu)
// with 8.4, 14 and 3.4 NCCL's Ring/Simple base, NET and NVLink latencies,
// rounds_net = ceil(inter_peers / 8), nvlink_hops one per NVLink peer when
// its messages exceed 16 KiB (Simple; as a ring pays per step: a send/recv
// to every peer is no faster than the ring all_gather moving the same
// bytes), else the rounds of 8 peers that do not cross hosts (LL), the
// NVLink bandwidth the single-host ring graph's (channels x speed) times
// the measured grouped send/recv share of it (340 of 360 GB/s, NVIDIA/nccl
// #2169) and the network bandwidth this GPU's share of its host's NICs.
// Sends and receives overlap (full duplex), as do NVLink and network.
struct NcclP2pCall {
  int64_t intra_peers = 0;  // peers on this GPU's host
  int64_t inter_peers = 0;  // peers on other hosts
  double intra_bytes = 0;   // bytes this GPU sends to them
  double inter_bytes = 0;
};
// The bandwidths NcclP2pTimeUs divides by, GB/s, for one profile.
struct NcclP2pLinks {
  double nvlink_gbps = 1;
  double net_gbps = 1;
};
NcclP2pLinks NcclP2pLinksFor(const NcclProfile& profile);
double NcclP2pTimeUs(const NcclP2pLinks& links, const NcclP2pCall& call);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_NCCL_NCCL_TUNING_H_
