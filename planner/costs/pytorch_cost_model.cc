#include "planner/costs/pytorch_cost_model.h"

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

// Spec §6 "pytorch": PyTorch's alpha-beta model in microseconds. The
// arithmetic is written in the same order as PyTorch's so that costs, and
// therefore tie-breaks, agree to the last bit (the build disables FMA
// contraction for this file). A group of several mesh dims (not planned
// yet) would be priced on its lowest mesh dim's link, the slowest.
class PyTorchCosts : public BoundCostModel {
 public:
  PyTorchCosts(const CostProblem& p, int64_t devices_per_host) : mesh_(p.mesh) {
    bytes_ = static_cast<double>(p.itemsize);
    for (int64_t s : p.global_shape) bytes_ *= static_cast<double>(s);  // exact below 2^53
    int64_t total = 1;
    for (int d = 0; d < mesh_.ndim(); ++d) max_shards_ *= static_cast<double>(mesh_.size(d));
    for (int d = mesh_.ndim() - 1; d >= 0; --d) {
      size_[d] = static_cast<double>(mesh_.size(d));
      total *= mesh_.size(d);
      bool inter_host = total > devices_per_host;
      bandwidth_[d] = inter_host ? 87.7 * 0.22 : 87.7;
      latency_[d] = inter_host ? 2.7 : 0.6;
    }
    // Each set's product in ascending mesh dims, its highest mesh dim last.
    shards_[0] = 1;
    for (unsigned set = 1; set < (1u << mesh_.ndim()); ++set) {
      const int highest = 31 - __builtin_clz(set);
      shards_[set] = shards_[set & ~(1u << highest)] * size_[highest];
    }
  }

  double StepCost(const DistState& current, const Step& step) const override {
    const double b = bytes_ / Shards(current) / 1073741824.0;
    return Price(b, step.kind, step.mesh_dim(), GroupSize(step.group));
  }

  // StepCost itself: b depends on the shard set alone, and it is computed
  // from the set the same way (the same product of the same doubles).
  double LowerBoundAt(unsigned shard_set, StepKind kind, int mesh_dim) const override {
    return Price(bytes_ / shards_[shard_set] / 1073741824.0, kind, mesh_dim, size_[mesh_dim]);
  }

  // StepCost grows with b, which is smallest when every mesh dim shards (but
  // a Partial mesh dim, which cannot). Rounding is monotone, so the same
  // arithmetic on the smallest b is a bound bit for bit.
  double LowerBound(StepKind kind, int mesh_dim) const override {
    const double n = size_[mesh_dim];
    const double b_min = bytes_ / max_shards_ / 1073741824.0;
    const double b_min_partial = bytes_ / (max_shards_ / n) / 1073741824.0;
    switch (kind) {
      case StepKind::kAllGather:
        return AllGather(b_min * n, mesh_dim, n);
      case StepKind::kAllToAll:
      case StepKind::kPermute:
        return AllGather(b_min, mesh_dim, n) + 1.0;
      // At most every communicating step's price on mesh_dim (cost_model.h):
      // the reduce_scatter formula at the smallest b, without the + 1.
      case StepKind::kExchange:
        return AllGather(b_min, mesh_dim, n);
      case StepKind::kAllReduce:
        return AllReduce(b_min_partial, mesh_dim, n);
      case StepKind::kReduceScatter:
        return AllGather(b_min_partial, mesh_dim, n);
      case StepKind::kChunk:
      case StepKind::kPartition:
        return 0.0;
    }
    return 0.0;
  }

  // StepCost's all_gather bytes term, on the same doubles: b from the
  // number of shards, x = b * n. Only an all_gather removes a mesh dim from
  // the shard set, and it pays exactly this besides its latency terms
  // (PotentialLowerBound); chunk and reduce_scatter add one, the rest keep
  // the set. So every step pays its bound plus its abstract path (cost_model.h).
  bool has_potential() const override { return true; }
  double GatherBytes(unsigned shard_set, int mesh_dim) const override {
    int64_t shards = 1;
    for (int d = 0; d < mesh_.ndim(); ++d) {
      if (shard_set & (1u << d)) shards *= mesh_.size(d);
    }
    const double n = size_[mesh_dim];
    const double x = bytes_ / static_cast<double>(shards) / 1073741824.0 * n;
    return (x * (n - 1) / n) / bandwidth_[mesh_dim] * 1e6;
  }
  double PotentialLowerBound(StepKind kind, int mesh_dim) const override {
    const double n = size_[mesh_dim];
    switch (kind) {
      case StepKind::kAllGather:
      case StepKind::kReduceScatter:
        return AllGather(0.0, mesh_dim, n);
      case StepKind::kAllToAll:
      case StepKind::kPermute:
        return AllGather(0.0, mesh_dim, n) + 1.0;
      case StepKind::kAllReduce:
        return AllReduce(0.0, mesh_dim, n);
      case StepKind::kExchange:  // native only: this compat model never prices it in a search
      case StepKind::kChunk:
      case StepKind::kPartition:
        return 0.0;
    }
    return 0.0;
  }

 private:
  // Spec §6: the price of a `kind` step on mesh dim m among n ranks when each
  // holds b GiB.
  double Price(double b, StepKind kind, int m, double n) const {
    switch (kind) {
      case StepKind::kAllGather:
        return AllGather(b * n, m, n);
      case StepKind::kAllToAll:
      case StepKind::kPermute:
      case StepKind::kExchange:
        return AllGather(b, m, n) + 1.0;  // native only
      case StepKind::kAllReduce:
        return AllReduce(b, m, n);
      case StepKind::kReduceScatter:
        return AllGather(b, m, n);  // same formula
      case StepKind::kChunk:
      case StepKind::kPartition:
        return 0.0;
    }
    return 0.0;
  }
  double AllGather(double x, int m, double n) const {
    return 6.6 + (n - 1) * latency_[m] + (x * (n - 1) / n) / bandwidth_[m] * 1e6;
  }
  double AllReduce(double x, int m, double n) const {
    return 6.6 + 2 * (n - 1) * latency_[m] + (x * 2 * (n - 1) / n) / bandwidth_[m] * 1e6;
  }

  // current.NumShards(mesh_), by shard set: this runs once per edge. The same
  // value (a mesh has at most 2^24 ranks: exact as a double).
  double Shards(const DistState& current) const { return shards_[current.ShardSet()]; }

  // mesh_.GroupSize without allocating: this runs once per edge.
  double GroupSize(MeshDimSet group) const {
    const unsigned bits = group.bits();
    if ((bits & (bits - 1)) == 0) return size_[group.First()];
    int64_t size = 1;
    for (int d = 0; d < mesh_.ndim(); ++d) {
      if (group.Contains(d)) size *= mesh_.size(d);
    }
    return static_cast<double>(size);
  }

  DeviceMesh mesh_;
  double bytes_;
  double max_shards_ = 1;             // the number of devices
  double shards_[1 << kMaxMeshDims];  // by shard set: the product of its mesh dims' sizes
  double size_[kMaxMeshDims];
  double bandwidth_[kMaxMeshDims];  // GB/s
  double latency_[kMaxMeshDims];    // us
};

class PyTorchCostModel : public CostModel {
 public:
  explicit PyTorchCostModel(int64_t devices_per_host)
      : CostModel(absl::StrCat("pytorch devices_per_host=", devices_per_host)),
        devices_per_host_(devices_per_host) {}
  std::unique_ptr<const BoundCostModel> Bind(const CostProblem& problem) const override {
    return std::make_unique<PyTorchCosts>(problem, devices_per_host_);
  }

 private:
  int64_t devices_per_host_;
};

}  // namespace

std::shared_ptr<const CostModel> MakePyTorchCostModel(int64_t devices_per_host) {
  return std::make_shared<const PyTorchCostModel>(devices_per_host);
}

}  // namespace reshard
