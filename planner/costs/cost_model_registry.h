// Cost models by name (spec §6, §6.2): the one table of {name, factory}, so
// a model's name is written once.
//
//   "pytorch-const"  all_to_all 1, all_gather 2, reduce_scatter 2, all_reduce 4,
//                    local steps 0 (unitless)
//   "pytorch"        PyTorch's alpha-beta model, microseconds; parameter:
//                    devices per host (which mesh dims cross hosts)
//   "alpha-beta"     the native model (spec §6.2) with DefaultGpuProfile();
//                    another profile: alpha_beta_cost_model.h
//   "nccl"           NCCL's own model (spec §6.4) with DefaultNcclProfile()
//                    (8x H100, 8x 400 Gb/s NICs per host); another profile:
//                    nccl_cost_model.h, nccl_profile.h
//
//   absl::StatusOr<std::shared_ptr<const CostModel>> model = MakeCostModel("pytorch", 4);
//   PlanOptions options;
//   options.cost_model = *model;
#ifndef RESHARD_PLANNER_COSTS_COST_MODEL_REGISTRY_H_
#define RESHARD_PLANNER_COSTS_COST_MODEL_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/costs/cost_model.h"

namespace reshard {

// The names MakeCostModel accepts, in the table's order, for help texts and
// error messages.
std::vector<std::string> CostModelNames();

// A model by name with its default parameters. InvalidArgument for an
// unknown name (listing the known ones) or devices_per_host < 1.
absl::StatusOr<std::shared_ptr<const CostModel>> MakeCostModel(absl::string_view name,
                                                               int64_t devices_per_host = 8);

// "pytorch" with 8 devices per host: pytorch mode's default.
std::shared_ptr<const CostModel> DefaultCostModel();
// "nccl" with its default profile (h100-8x400g) and 8 devices per host:
// native mode's default.
std::shared_ptr<const CostModel> DefaultNativeCostModel();

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_COST_MODEL_REGISTRY_H_
