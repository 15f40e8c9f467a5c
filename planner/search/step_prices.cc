#include "planner/search/step_prices.h"

#include <optional>

namespace reshard {

StepPrices::Key StepPrices::KeyOf(const DistState& from, const Step& step, const DistState& to) {
  Key key{from.bits(), to.bits(), step.group.bits(), static_cast<uint8_t>(step.kind), {}};
  key.entries[0] = static_cast<uint8_t>(step.entries.size());
  for (int i = 0; i < step.entries.size(); ++i) {
    key.entries[i + 1] =
        static_cast<uint8_t>(step.entries.mesh_dim(i) | (step.entries.tensor_dim(i) << 4));
  }
  return key;
}

StepPrices::Price StepPrices::Of(const DistState& from, const Step& step, const DistState& to) {
  auto [it, inserted] = prices_.try_emplace(KeyOf(from, step, to), Price{0, true});
  if (inserted) {
    const std::optional<double> bound = model_.DeferredCostBound(from, step);
    it->second =
        bound.has_value() ? Price{*bound, false} : Price{model_.StepCost(from, step), true};
  }
  return it->second;
}

double StepPrices::PriceOf(const DistState& from, const Step& step, const DistState& to) {
  Price& price = prices_[KeyOf(from, step, to)];
  if (!price.priced) price = {model_.StepCost(from, step), true};
  return price.cost;
}

}  // namespace reshard
