// StepPrices: a model's StepCost and DeferredCostBound (cost_model.h) of
// each (state, step), and the state the step leads to (ApplyStep), computed
// once, for searches that meet the same steps on many graphs: the native
// graphs of a cost matrix (native_graph_costs.h) differ only in a few goal
// edges, so most of their steps are shared.
//
//   StepPrices prices(model);
//   const StepPrices::Price& p = prices.Of(from, step);   // p.to; a bound while !p.priced
//   double c = prices.PriceOf(from, step);                // StepCost
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
    DistState to;     // ApplyStep(from, step)
    double cost = 0;  // StepCost, or while !priced the model's DeferredCostBound
    bool priced = false;
  };
  // The step from `from`: where it leads and its price, unless the model
  // defers it (spec §5.2 item 7) and it was not priced yet. The reference
  // lasts until the next call.
  const Price& Of(const DistState& from, const Step& step);
  // StepCost(from, step), priced at most once.
  double PriceOf(const DistState& from, const Step& step);

 private:
  // Every field of the step (placements as DistState cells), and `from`.
  struct Key {
    uint64_t from;
    uint8_t group;
    uint8_t kind;
    uint8_t src;
    uint8_t dst;
    uint8_t entries[ShardEntries::kMax + 1];
    friend bool operator==(const Key& a, const Key& b) {
      return a.from == b.from && a.group == b.group && a.kind == b.kind && a.src == b.src &&
             a.dst == b.dst && std::equal(a.entries, a.entries + sizeof(a.entries), b.entries);
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.from, k.group, k.kind, k.src, k.dst,
                        absl::MakeConstSpan(k.entries, sizeof(k.entries)));
    }
  };
  static Key KeyOf(const DistState& from, const Step& step);
  Price& Find(const DistState& from, const Step& step);

  const BoundCostModel& model_;
  absl::flat_hash_map<Key, Price> prices_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STEP_PRICES_H_
