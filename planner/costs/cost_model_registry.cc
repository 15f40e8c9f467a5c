#include "planner/costs/cost_model_registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/nccl/nccl_cost_model.h"
#include "planner/costs/pytorch_const_cost_model.h"
#include "planner/costs/pytorch_cost_model.h"

namespace reshard {
namespace {

using Factory = absl::StatusOr<std::shared_ptr<const CostModel>> (*)(int64_t devices_per_host);

struct Entry {
  const char* name;
  Factory make;
};

// The one list of models by name; devices_per_host is checked before a
// factory runs.
constexpr Entry kModels[] = {
    {"pytorch",
     [](int64_t dph) -> absl::StatusOr<std::shared_ptr<const CostModel>> {
       return MakePyTorchCostModel(dph);
     }},
    {"pytorch-const",
     [](int64_t) -> absl::StatusOr<std::shared_ptr<const CostModel>> {
       return MakePyTorchConstCostModel();
     }},
    {"alpha-beta", [](int64_t dph) { return MakeAlphaBetaCostModel(DefaultGpuProfile(), dph); }},
    {"nccl", [](int64_t dph) { return MakeNcclCostModel(DefaultNcclProfile(), dph); }},
};

}  // namespace

std::vector<std::string> CostModelNames() {
  std::vector<std::string> names;
  for (const Entry& e : kModels) names.push_back(e.name);
  return names;
}

absl::StatusOr<std::shared_ptr<const CostModel>> MakeCostModel(absl::string_view name,
                                                               int64_t devices_per_host) {
  if (devices_per_host < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices per host: ", devices_per_host, "; must be >= 1"));
  }
  for (const Entry& e : kModels) {
    if (name == e.name) return e.make(devices_per_host);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cost model: unknown \"", name, "\"; known: ", absl::StrJoin(CostModelNames(), ", ")));
}

std::shared_ptr<const CostModel> DefaultCostModel() {
  // Immutable and shared by every default PlanOptions.
  static const auto* const model = new std::shared_ptr<const CostModel>(MakePyTorchCostModel(8));
  return *model;
}

// Native mode's default (issue 15): NCCL's model of 8x H100 hosts.
std::shared_ptr<const CostModel> DefaultNativeCostModel() {
  static const auto* const model =
      new std::shared_ptr<const CostModel>(MakeCostModel("nccl", 8).value_or(nullptr));
  return *model;
}

}  // namespace reshard
