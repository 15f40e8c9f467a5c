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

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
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
  // Of and StepCost without keeping them, for steps met once per (state,
  // target): a cost matrix's goal edges, whose table would grow too large to
  // look up faster than the step is priced.
  Price OfOnce(const DistState& from, const Step& step) const;
  double PriceOnce(const DistState& from, const Step& step) const {
    return model_.StepCost(from, step);
  }

 private:
  // `from`, and every field of the step (placements as DistState cells)
  // packed into two words: group, kind, src, dst and the entries' count in
  // `head`'s low 5 bytes, then up to 3 entries; the other 5 in `tail`.
  // Words hash and compare faster than the fields (pricing looks a key up
  // per edge of every target, spec §5.2 item 6).
  struct Key {
    uint64_t from;
    uint64_t head;
    uint64_t tail;
    friend bool operator==(const Key& a, const Key& b) {
      return a.from == b.from && a.head == b.head && a.tail == b.tail;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.from, k.head, k.tail);
    }
  };
  static Key KeyOf(const DistState& from, const Step& step);
  Price& Find(const DistState& from, const Step& step);

  const BoundCostModel& model_;
  absl::flat_hash_map<Key, Price> prices_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STEP_PRICES_H_
