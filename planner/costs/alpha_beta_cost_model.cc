#include "planner/costs/alpha_beta_cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

absl::Status CheckNumber(absl::string_view field, double value, bool zero_ok) {
  if (std::isfinite(value) && (value > 0 || (zero_ok && value == 0))) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("cost profile: ", field, " is ", value, "; must be ",
                                                 zero_ok ? ">= 0" : "> 0", " and finite"));
}

std::string FormatLink(const LinkProfile& link) {
  return absl::StrFormat("alpha_us=%.17g,beta_gbps=%.17g", link.alpha_us, link.beta_gbps);
}

// Spec §6.2, bound to one problem. Everything a price needs but the state is
// precomputed here: StepCost runs once per graph edge and must not allocate.
class AlphaBetaCosts : public BoundCostModel {
 public:
  AlphaBetaCosts(const CostProblem& p, const CostProfile& profile, int64_t devices_per_host)
      : ndim_(std::min<int>(static_cast<int>(p.global_shape.size()), kMaxTensorDims)),
        mesh_ndim_(p.mesh.ndim()),
        itemsize_(p.itemsize),
        memory_bytes_per_us_(profile.memory_gbps * 1e3) {
    for (int d = 0; d < ndim_; ++d) shape_[d] = p.global_shape[d];
    int64_t total = 1;
    // Spec §6's rule: mesh dims from the last; inter-host once the product exceeds a host.
    for (int m = mesh_ndim_ - 1; m >= 0; --m) {
      size_[m] = p.mesh.size(m);
      total *= size_[m];
      link_[m] = total > devices_per_host ? profile.inter_host : profile.intra_host;
    }
  }

  double StepCost(const DistState& current, const Step& step) const override {
    int64_t n = 1;
    LinkProfile link;
    GroupOf(step.group, &n, &link);
    const double bytes = BytesOf(current, step, n);
    if (!IsCommunicating(step.kind)) return bytes / memory_bytes_per_us_;
    return TimeOnLinkUs(CommunicationTerms(step.kind, static_cast<double>(n), bytes), link);
  }

  // The latency part of StepCost on mesh dim m alone (spec §5.2): a ring on
  // a group G has prod(sizes) - 1 >= sum over G of (size - 1) hops, a
  // permute one, each at the group's largest alpha; bytes only add. So a
  // group collective costs at least the sum of its members' bounds and a
  // permute at least their maximum, as cost_model.h asks of native models.
  double LowerBound(StepKind kind, int mesh_dim) const override {
    const AlphaBetaTerms terms =
        CommunicationTerms(kind, static_cast<double>(size_[mesh_dim]), 0.0);
    return terms.hops * link_[mesh_dim].alpha_us;
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

  // The bytes §6.2 counts for the step: the padded local block of rank 0
  // (the largest chunk at every split, as the executor pads), adjusted per kind.
  double BytesOf(const DistState& current, const Step& step, int64_t n) const {
    // ceil(ceil(L / a) / b) == ceil(L / (a * b)): the padded block of a tensor
    // dim depends only on how many ways it is split, not on the order (and
    // finding the orders would cost more than the rest of this, per edge).
    int64_t ways[kMaxTensorDims];
    for (int d = 0; d < ndim_; ++d) ways[d] = 1;
    for (int m = 0; m < mesh_ndim_; ++m) {
      const Placement p = current.placement(m);
      if (p.is_shard() && p.dim() < ndim_) ways[p.dim()] *= size_[m];
    }
    int64_t block[kMaxTensorDims];
    for (int d = 0; d < ndim_; ++d) block[d] = PaddedChunkSize(shape_[d], ways[d]);
    const int to = step.dst.is_shard() ? step.dst.dim() : -1;
    if (to >= 0 && to < ndim_) {
      // Splitting a dim n ways pads it to n equal chunks: the output of a
      // chunk is one of them, the input of reduce_scatter / all_to_all all n.
      const int64_t chunk = PaddedChunkSize(block[to], n);
      if (step.kind == StepKind::kChunk) block[to] = chunk;
      if (step.kind == StepKind::kReduceScatter || step.kind == StepKind::kAllToAll) {
        block[to] = chunk * n;
      }
    }
    double bytes = itemsize_;
    for (int d = 0; d < ndim_; ++d) bytes *= static_cast<double>(block[d]);
    return step.kind == StepKind::kAllGather ? bytes * static_cast<double>(n) : bytes;
  }

  int ndim_;
  int mesh_ndim_;
  double itemsize_;
  double memory_bytes_per_us_;
  int64_t shape_[kMaxTensorDims] = {};
  int64_t size_[kMaxMeshDims] = {};
  LinkProfile link_[kMaxMeshDims] = {};
};

class AlphaBetaCostModel : public CostModel {
 public:
  AlphaBetaCostModel(CostProfile profile, int64_t devices_per_host)
      : CostModel(absl::StrCat("alpha-beta profile=", profile.name,
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
  return CheckNumber("memory_gbps", p.memory_gbps, false);
}

CostProfile DefaultGpuProfile() {
  CostProfile p;
  p.name = "nvlink-ib-8gpu";
  // Bandwidths: NCCL's ring busBw on H100 NVLink (~370 GB/s) and per
  // NDR 400 Gb/s NIC (46-48 GB/s); latencies: PyTorch's (spec §6).
  // Sources: docs/planner-semantics.md §6.2.
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
  // file and this profile have one fingerprint (tests/profile_json_test).
  p.intra_host = {1248.3267832830102, 0.57571640996789};
  p.inter_host = p.intra_host;
  p.memory_gbps = 46.89464563231627;
  return p;
}

absl::StatusOr<std::shared_ptr<const CostModel>> MakeAlphaBetaCostModel(
    const CostProfile& profile, int64_t devices_per_host) {
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
    case StepKind::kAllToAll: return {n - 1, ring};
    case StepKind::kAllReduce: return {2 * (n - 1), 2 * ring};
    // One exchange with each peer at once: an upper bound on the bytes sent
    // (every slice of the local block moves), exact for a pure permutation.
    case StepKind::kPermute: return {1, bytes};
    case StepKind::kChunk:
    case StepKind::kPartition: return {};
  }
  return {};
}

double TimeOnLinkUs(const AlphaBetaTerms& terms, const LinkProfile& link) {
  // GB/s = 1e3 bytes per microsecond.
  return terms.hops * link.alpha_us + terms.link_bytes / (link.beta_gbps * 1e3);
}

}  // namespace reshard
