#include "planner/costs/pytorch_const_cost_model.h"

namespace reshard {
namespace {

// Spec §6 "pytorch-const": a price per kind of step, whatever the problem.
class PyTorchConstCosts : public BoundCostModel {
 public:
  double StepCost(const DistState&, const Step& step) const override { return Price(step.kind); }
  double LowerBound(StepKind kind, int) const override { return Price(kind); }

 private:
  static double Price(StepKind kind) {
    switch (kind) {
      case StepKind::kAllToAll:
      case StepKind::kPermute:
      case StepKind::kExchange:
        return 1;  // native only; priced as an all_to_all
      case StepKind::kAllGather:
        return 2;
      case StepKind::kAllReduce:
        return 4;
      case StepKind::kReduceScatter:
        return 2;
      case StepKind::kChunk:
      case StepKind::kPartition:
        return 0;
    }
    return 0;
  }
};

class PyTorchConstCostModel : public CostModel {
 public:
  PyTorchConstCostModel() : CostModel("pytorch-const") {}
  std::unique_ptr<const BoundCostModel> Bind(const CostProblem&) const override {
    return std::make_unique<PyTorchConstCosts>();
  }
};

}  // namespace

std::shared_ptr<const CostModel> MakePyTorchConstCostModel() {
  return std::make_shared<const PyTorchConstCostModel>();
}

}  // namespace reshard
