// "pytorch" (spec §6): PyTorch's alpha-beta model, microseconds, with one
// parameter, devices per host (which mesh dims cross hosts). Costs match
// PyTorch's to the last bit (ties, spec §5). Made by name through
// cost_model_registry.h.
#ifndef RESHARD_PLANNER_COSTS_PYTORCH_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_PYTORCH_COST_MODEL_H_

#include <cstdint>
#include <memory>

#include "planner/costs/cost_model.h"

namespace reshard {

// Requires devices_per_host >= 1 (MakeCostModel checks it).
std::shared_ptr<const CostModel> MakePyTorchCostModel(int64_t devices_per_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_PYTORCH_COST_MODEL_H_
