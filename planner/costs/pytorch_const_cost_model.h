// "pytorch-const" (spec §6): PyTorch's constant price per kind of step,
// unitless: all_to_all 1, all_gather 2, reduce_scatter 2, all_reduce 4, local
// steps 0. Made by name through cost_model_registry.h.
#ifndef RESHARD_PLANNER_COSTS_PYTORCH_CONST_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_PYTORCH_CONST_COST_MODEL_H_

#include <memory>

#include "planner/costs/cost_model.h"

namespace reshard {

std::shared_ptr<const CostModel> MakePyTorchConstCostModel();

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_PYTORCH_CONST_COST_MODEL_H_
