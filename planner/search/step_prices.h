// StepPrices: a model's StepCost and DeferredCostBound (cost_model.h) of
// each (state, step) computed once, for searches that meet the same steps on
// many graphs: the native graphs of a cost matrix (native_graph_costs.h)
// differ only in a few goal edges, so most of their steps are shared.
//
//   StepPrices prices(model);
//   StepPrices::Price p = prices.Of(from, step, to);   // a bound while !p.priced
//   double c = prices.PriceOf(from, step, to);          // StepCost
#ifndef RESHARD_PLANNER_SEARCH_STEP_PRICES_H_
#define RESHARD_PLANNER_SEARCH_STEP_PRICES_H_

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

class StepPrices {
 public:
  // `model` must outlive this.
  explicit StepPrices(const BoundCostModel& model) : model_(model) {}

  struct Price {
    double cost = 0;  // StepCost, or while !priced the model's DeferredCostBound
    bool priced = false;
  };
  // The step from `from` (leading to `to`): its price, unless the model
  // defers it (spec §5.2 item 7) and it was not priced yet.
  Price Of(const DistState& from, const Step& step, const DistState& to);
  // StepCost(from, step), priced at most once.
  double PriceOf(const DistState& from, const Step& step, const DistState& to);

 private:
  // (from, to) fixes every mesh dim's placements before and after, so with
  // the group, kind and entries it fixes the step.
  struct Key {
    uint64_t from;
    uint64_t to;
    uint8_t group;
    uint8_t kind;
    uint8_t entries[ShardEntries::kMax + 1];
    friend bool operator==(const Key& a, const Key& b) {
      return a.from == b.from && a.to == b.to && a.group == b.group && a.kind == b.kind &&
             std::equal(a.entries, a.entries + sizeof(a.entries), b.entries);
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.from, k.to, k.group, k.kind,
                        absl::MakeConstSpan(k.entries, sizeof(k.entries)));
    }
  };
  static Key KeyOf(const DistState& from, const Step& step, const DistState& to);

  const BoundCostModel& model_;
  absl::flat_hash_map<Key, Price> prices_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STEP_PRICES_H_
