#include "planner/costs/alpha_beta_cost_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/costs/block_bytes.h"
#include "planner/costs/bounds/shard_set_blocks.h"
#include "planner/costs/host_span.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

// Ranges that keep every price finite (spec §6.2, "Profiles"): a step has
// at most 2 * 2^24 hops and moves at most 2 * 2^53 bytes, so with alpha <=
// 1e12 us and bandwidths >= 1e-6 GB/s a price stays below 1e23 us, and a
// plan's sum of prices far below a double's 1.8e308.
constexpr double kMaxAlphaUs = 1e12;
constexpr double kMinGbps = 1e-6;

absl::Status CheckNumber(absl::string_view field, double value, bool zero_ok) {
  if (!std::isfinite(value) || !(value > 0 || (zero_ok && value == 0))) {
    return absl::InvalidArgumentError(absl::StrCat("cost profile: ", field, " is ", value,
                                                   "; must be ", zero_ok ? ">= 0" : "> 0",
                                                   " and finite"));
  }
  if (zero_ok && value > kMaxAlphaUs) {
    return absl::InvalidArgumentError(absl::StrCat("cost profile: ", field, " is ", value,
                                                   "; must be at most ", kMaxAlphaUs,
                                                   " us, so that every plan's cost is finite"));
  }
  if (!zero_ok && value < kMinGbps) {
    return absl::InvalidArgumentError(absl::StrCat("cost profile: ", field, " is ", value,
                                                   "; must be at least ", kMinGbps,
                                                   " GB/s, so that every plan's cost is finite"));
  }
  return absl::OkStatus();
}

// Spec §6.2: an exchange is one call of its busiest member's messages (at
// least one: every member takes part in the AllToAllV) and bytes (the more
// of sent and received) on `link`. The one rule for exchange steps and
// cross-mesh crossings (spec §14).
double ExchangeTimeUs(const RouteLoad& load, double itemsize, const LinkProfile& link,
                      double call_us) {
  const AlphaBetaTerms terms{
      std::max<double>(1.0, static_cast<double>(load.max_messages)),
      itemsize * static_cast<double>(std::max(load.max_sent, load.max_received))};
  return call_us + TimeOnLinkUs(terms, link);
}

std::string FormatLink(const LinkProfile& link) {
  return absl::StrFormat("alpha_us=%.17g,beta_gbps=%.17g", link.alpha_us, link.beta_gbps);
}

// Spec §6.2, bound to one problem. Everything a price needs but the state is
// precomputed here: StepCost runs once per graph edge and must not allocate.
class AlphaBetaCosts : public BoundCostModel {
 public:
  AlphaBetaCosts(const CostProblem& p, const CostProfile& profile, int64_t devices_per_host)
      : bytes_(p),
        mesh_(p.mesh),
        global_shape_(p.global_shape),
        itemsize_(p.itemsize),
        mesh_ndim_(p.mesh.ndim()),
        memory_bytes_per_us_(profile.memory_gbps * 1e3),
        call_us_(profile.call_us) {
    int64_t total = 1;
    // Spec §6's rule: mesh dims from the last; inter-host once the product exceeds a host.
    for (int m = mesh_ndim_ - 1; m >= 0; --m) {
      size_[m] = p.mesh.size(m);
      total *= size_[m];
      link_[m] = total > devices_per_host ? profile.inter_host : profile.intra_host;
      sharing_ += size_[m] > 1;
    }
    sharing_ = std::max(sharing_, 1);
    if (mesh_ndim_ <= ShardSetBlocks::kMaxDims) blocks_.emplace(p);
  }

  double StepCost(const DistState& current, const Step& step) const override {
    int64_t n = 1;
    LinkProfile link;
    GroupOf(step.group, &n, &link);
    if (step.kind == StepKind::kExchange) return ExchangeCost(current, step, n, link);
    const double bytes = bytes_(current, step, n);
    if (!IsCommunicating(step.kind)) return bytes / memory_bytes_per_us_;
    if (n <= 1) return 0;
    return call_us_ +
           TimeOnLinkUs(CommunicationTerms(step.kind, static_cast<double>(n), bytes), link);
  }

  // The latency part of StepCost on mesh dim m alone (spec §5.2): a ring on
  // a group G has prod(sizes) - 1 >= sum over G of (size - 1) hops, each at
  // the group's largest alpha; bytes only add. An all_to_all or a permute
  // has one hop whatever the group, and every call one call_us: those are
  // shared among the mesh dims that can be in a group (size > 1), so that a
  // group's members sum to at most one of each. A group collective then
  // costs at least the sum of its members' bounds and a permute at least
  // their maximum, as cost_model.h asks of native models. The exchange
  // bound is one call's share and one message at m's alpha: every
  // communicating step whose group holds m pays at least call_us and one
  // hop at the group's largest alpha (cost_model.h).
  double LowerBound(StepKind kind, int mesh_dim) const override {
    if (!IsCommunicating(kind) || size_[mesh_dim] <= 1) return 0;
    const double share = call_us_ / sharing_;
    if (kind == StepKind::kExchange) return share + link_[mesh_dim].alpha_us;
    if (kind == StepKind::kAllToAll) return share + link_[mesh_dim].alpha_us / sharing_;
    const AlphaBetaTerms terms =
        CommunicationTerms(kind, static_cast<double>(size_[mesh_dim]), 0.0);
    return share + terms.hops * link_[mesh_dim].alpha_us;
  }

  // Group bounds (cost_model.h, spec §5.2 item 2): StepCost's formula on the
  // group's own link and size at the fewest bytes of the shard set
  // (ShardSetBlocks), monotone in the bytes.
  const ShardSetBlocks* group_blocks() const override {
    return blocks_.has_value() ? &*blocks_ : nullptr;
  }
  double GroupLowerBoundAt(unsigned shard_set, StepKind kind, MeshDimSet group) const override {
    int64_t n = 1;
    LinkProfile link;
    GroupOf(group, &n, &link);
    if (!IsCommunicating(kind) || n <= 1) return 0;
    const double block = blocks_->MinBytes(shard_set);
    const double bytes = kind == StepKind::kAllGather ? block * static_cast<double>(n) : block;
    return call_us_ + TimeOnLinkUs(CommunicationTerms(kind, static_cast<double>(n), bytes), link);
  }
  // A local step writes its output block (the input, for a partition),
  // which holds at least MinBytes of the shard set after it.
  double LocalLowerBoundAt(unsigned shard_set) const override {
    return blocks_->MinBytes(shard_set) / memory_bytes_per_us_;
  }
  // One message carrying `received` elements (ExchangeTimeUs grows with them).
  double ExchangeLowerBoundAt(MeshDimSet group, int64_t received) const override {
    int64_t n = 1;
    LinkProfile link;
    GroupOf(group, &n, &link);
    RouteLoad load;
    load.max_received = received;
    return n <= 1 ? 0 : ExchangeTimeUs(load, itemsize_, link, call_us_);
  }

 private:
  // The group's size and its slowest link: max alpha, min bandwidth (§6.2).
  void GroupOf(MeshDimSet group, int64_t* n, LinkProfile* link) const {
    *link = LinkProfile{0, HUGE_VAL};
    for (int m = 0; m < mesh_ndim_; ++m) {
      if (!group.Contains(m)) continue;
      *n *= size_[m];
      link->alpha_us = std::max(link->alpha_us, link_[m].alpha_us);
      link->beta_gbps = std::min(link->beta_gbps, link_[m].beta_gbps);
    }
  }

  // Spec §6.2: the busiest member of the group at coordinate 0 (the largest
  // logical shape): its messages, at least one (every member takes part in
  // the AllToAllV), and its bytes, the more of sent and received. Exchanges
  // are the goal's edge only, one per state the search expands, so the
  // routes (which allocate) are computed here rather than precomputed. One
  // call: call_us on top, as every communicating step.
  double ExchangeCost(const DistState& current, const Step& step, int64_t n,
                      const LinkProfile& link) const {
    if (n <= 1) return 0;
    const RouteLoad load = ExchangeLoadAtOrigin(current, step, mesh_, global_shape_);
    return ExchangeTimeUs(load, itemsize_, link, call_us_);
  }

  BlockBytes bytes_;  // spec §6.2's bytes, one rule with the nccl model
  DeviceMesh mesh_;
  std::vector<int64_t> global_shape_;
  double itemsize_;
  int mesh_ndim_;
  double memory_bytes_per_us_;
  double call_us_;
  int sharing_ = 0;  // mesh dims of size > 1
  int64_t size_[kMaxMeshDims] = {};
  LinkProfile link_[kMaxMeshDims] = {};
  std::optional<ShardSetBlocks> blocks_;  // meshes of up to ShardSetBlocks::kMaxDims dims
};

class AlphaBetaCostModel : public CostModel {
 public:
  AlphaBetaCostModel(CostProfile profile, int64_t devices_per_host)
      : CostModel(absl::StrCat("alpha-beta profile=", profile.name,
                               absl::StrFormat(" call_us=%.17g", profile.call_us),
                               " intra_host=", FormatLink(profile.intra_host),
                               " inter_host=", FormatLink(profile.inter_host),
                               absl::StrFormat(" memory_gbps=%.17g", profile.memory_gbps),
                               " devices_per_host=", devices_per_host)),
        profile_(std::move(profile)),
        devices_per_host_(devices_per_host) {}

  std::unique_ptr<const BoundCostModel> Bind(const CostProblem& problem) const override {
    return std::make_unique<AlphaBetaCosts>(problem, profile_, devices_per_host_);
  }
  bool prices_native_steps() const override { return true; }
  // Spec §14: the crossing's link is the inter-host one when its ranks span
  // several hosts (§6's rule for a group), the intra-host one otherwise.
  std::optional<double> ExchangeAmongRanksUs(absl::Span<const int64_t> ranks,
                                             absl::Span<const SliceRoute> routes,
                                             int itemsize) const override {
    if (ranks.size() <= 1) return 0.0;
    const HostSpan span = HostSpanOfRanks(ranks, devices_per_host_);
    return ExchangeTimeUs(LoadOfRoutes(routes, static_cast<int64_t>(ranks.size())), itemsize,
                          span.nodes > 1 ? profile_.inter_host : profile_.intra_host,
                          profile_.call_us);
  }

 private:
  CostProfile profile_;
  int64_t devices_per_host_;
};

}  // namespace

absl::Status ValidateCostProfile(const CostProfile& p) {
  const std::pair<const char*, const LinkProfile*> links[] = {{"intra_host", &p.intra_host},
                                                              {"inter_host", &p.inter_host}};
  for (const auto& [name, link] : links) {
    if (absl::Status s = CheckNumber(absl::StrCat(name, ".alpha_us"), link->alpha_us, true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckNumber(absl::StrCat(name, ".beta_gbps"), link->beta_gbps, false);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckNumber("call_us", p.call_us, true); !s.ok()) return s;
  return CheckNumber("memory_gbps", p.memory_gbps, false);
}

CostProfile DefaultGpuProfile() {
  CostProfile p;
  p.name = "nvlink-ib-8gpu";
  // Bandwidths: NCCL's ring busBw on H100 NVLink (~370 GB/s) and per
  // NDR 400 Gb/s NIC (46-48 GB/s); latencies: PyTorch's (spec §6).
  // Sources: docs/planner-semantics.md §6.2.
  // One call: PyTorch's (and NCCL's ring LL) base latency, 6.6 us.
  p.call_us = 6.6;
  p.intra_host = {0.6, 370};
  p.inter_host = {2.7, 46};
  // A copy reads and writes every byte: half of H100 SXM's 3.35 TB/s HBM3.
  p.memory_gbps = 1675;
  return p;
}

CostProfile GlooLoopbackProfile() {
  CostProfile p;
  p.name = "gloo-loopback";
  // bench/profiles/gloo-loopback.json (`reshard calibrate --mesh 2,4`, -c
  // opt, 8 ranks as threads on the 2-core development VM): one fit for the
  // whole machine, so both links are the same. Every digit, so that the
  // file and this profile have one fingerprint (formats/profile_json_test).
  p.intra_host = {1248.3267832830102, 0.57571640996789};
  p.inter_host = p.intra_host;
  p.memory_gbps = 46.89464563231627;
  return p;
}

absl::StatusOr<std::shared_ptr<const CostModel>> MakeAlphaBetaCostModel(const CostProfile& profile,
                                                                        int64_t devices_per_host) {
  if (absl::Status s = ValidateCostProfile(profile); !s.ok()) return s;
  if (devices_per_host < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices per host: ", devices_per_host, "; must be >= 1"));
  }
  return std::make_shared<const AlphaBetaCostModel>(profile, devices_per_host);
}

AlphaBetaTerms CommunicationTerms(StepKind kind, double n, double bytes) {
  if (n <= 1) return {};
  const double ring = (n - 1) / n * bytes;
  switch (kind) {
    case StepKind::kAllGather:
    case StepKind::kReduceScatter:
      return {n - 1, ring};
    case StepKind::kAllReduce:
      return {2 * (n - 1), 2 * ring};
    // Concurrent sends to every peer: one hop. all_to_all keeps 1/n of its
    // block; a permute sends at most all of it (an upper bound, exact for a
    // pure permutation).
    case StepKind::kAllToAll:
      return {1, ring};
    case StepKind::kPermute:
      return {1, bytes};
    // The least an exchange costs: one message of `bytes`. StepCost prices
    // each exchange by its routes (its busiest member's messages and bytes).
    case StepKind::kExchange:
      return {1, bytes};
    case StepKind::kChunk:
    case StepKind::kPartition:
      return {};
  }
  return {};
}

double TimeOnLinkUs(const AlphaBetaTerms& terms, const LinkProfile& link) {
  // GB/s = 1e3 bytes per microsecond.
  return terms.hops * link.alpha_us + terms.link_bytes / (link.beta_gbps * 1e3);
}

}  // namespace reshard
