#include "planner/cost_model.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {
namespace {

// Spec §6 "pytorch-const".
class PyTorchConstCostModel : public CostModel {
 public:
  absl::string_view name() const override { return "pytorch-const"; }
  double StepCost(const DistState&, int, Placement src, Placement dst) const override {
    if (src.is_shard() && dst.is_shard()) return 1;
    if (src.is_shard() && dst.is_replicate()) return 2;
    if (src.is_partial() && dst.is_replicate()) return 4;
    if (src.is_partial() && dst.is_shard()) return 2;
    return 0;
  }
};

// Spec §6 "pytorch": PyTorch's alpha-beta model in microseconds. The
// arithmetic is written in the same order as PyTorch's so that costs, and
// therefore tie-breaks, agree to the last bit (the build disables FMA
// contraction for this file).
class PyTorchCostModel : public CostModel {
 public:
  explicit PyTorchCostModel(const CostProblem& p) : mesh_(p.mesh) {
    bytes_ = static_cast<double>(p.itemsize);
    for (int64_t s : p.global_shape) bytes_ *= static_cast<double>(s);  // exact below 2^53
    int64_t total = 1;
    for (int d = mesh_.ndim() - 1; d >= 0; --d) {
      total *= mesh_.size(d);
      bool inter_host = total > p.devices_per_host;
      bandwidth_[d] = inter_host ? 87.7 * 0.22 : 87.7;
      latency_[d] = inter_host ? 2.7 : 0.6;
    }
  }

  absl::string_view name() const override { return "pytorch"; }

  double StepCost(const DistState& current, int m, Placement src, Placement dst) const override {
    const double b = bytes_ / static_cast<double>(current.NumShards(mesh_)) / 1073741824.0;
    const double n = static_cast<double>(mesh_.size(m));
    if (src.is_shard() && dst.is_replicate()) return AllGather(b * n, m, n);
    if (src.is_shard() && dst.is_shard()) return AllGather(b, m, n) + 1.0;
    if (src.is_partial() && dst.is_replicate()) return AllReduce(b, m, n);
    if (src.is_partial() && dst.is_shard()) return AllGather(b, m, n);  // reduce_scatter: same formula
    return 0.0;
  }

 private:
  double AllGather(double x, int m, double n) const {
    return 6.6 + (n - 1) * latency_[m] + (x * (n - 1) / n) / bandwidth_[m] * 1e6;
  }
  double AllReduce(double x, int m, double n) const {
    return 6.6 + 2 * (n - 1) * latency_[m] + (x * 2 * (n - 1) / n) / bandwidth_[m] * 1e6;
  }

  DeviceMesh mesh_;
  double bytes_;
  double bandwidth_[kMaxMeshDims];  // GB/s
  double latency_[kMaxMeshDims];    // us
};

}  // namespace

std::vector<std::string> CostModelNames() { return {"pytorch", "pytorch-const"}; }

absl::StatusOr<std::unique_ptr<CostModel>> MakeCostModel(absl::string_view name,
                                                         const CostProblem& problem) {
  if (problem.devices_per_host < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices per host: ", problem.devices_per_host, "; must be >= 1"));
  }
  if (name == "pytorch") return std::make_unique<PyTorchCostModel>(problem);
  if (name == "pytorch-const") return std::make_unique<PyTorchConstCostModel>();
  return absl::InvalidArgumentError(absl::StrCat("cost model: unknown \"", name,
                                                 "\"; known: ", absl::StrJoin(CostModelNames(), ", ")));
}

}  // namespace reshard
