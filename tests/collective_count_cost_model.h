// A test-only cost model that prices native steps: every communicating step
// on a group of more than one rank costs 1, whatever its group, kind or
// bytes; local steps and groups of one rank cost 0. The cheapest plan is the
// one with the fewest collectives, which makes the native plans of small
// cases derivable by hand (a group step does in 1 what single steps do in
// several) and is a second model, unlike alpha-beta (spec §6.2), for the
// property tests.
#ifndef RESHARD_TESTS_COLLECTIVE_COUNT_COST_MODEL_H_
#define RESHARD_TESTS_COLLECTIVE_COUNT_COST_MODEL_H_

#include <memory>

#include "planner/costs/cost_model.h"

namespace reshard::test_util {

class CollectiveCountCostModel : public CostModel {
 public:
  CollectiveCountCostModel() : CostModel("test-collective-count") {}
  bool prices_native_steps() const override { return true; }
  std::unique_ptr<const BoundCostModel> Bind(const CostProblem& problem) const override {
    return std::make_unique<Costs>(problem.mesh);
  }

 private:
  class Costs : public BoundCostModel {
   public:
    explicit Costs(DeviceMesh mesh) : mesh_(std::move(mesh)) {}
    double StepCost(const DistState&, const Step& step) const override {
      return IsCommunicating(step.kind) && mesh_.GroupSize(step.group) > 1 ? 1.0 : 0.0;
    }

   private:
    DeviceMesh mesh_;
  };
};

inline std::shared_ptr<const CostModel> MakeCollectiveCountCostModel() {
  return std::make_shared<const CollectiveCountCostModel>();
}

}  // namespace reshard::test_util

#endif  // RESHARD_TESTS_COLLECTIVE_COUNT_COST_MODEL_H_
