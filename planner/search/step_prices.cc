#include "planner/search/step_prices.h"

#include <cstring>
#include <optional>

namespace reshard {
namespace {

uint8_t ByteOf(Placement p) {
  const unsigned arg = p.is_shard() ? p.dim() : p.is_partial() ? static_cast<unsigned>(p.op()) : 0u;
  return static_cast<uint8_t>(static_cast<unsigned>(p.kind()) | (arg << 2));
}

}  // namespace

StepPrices::Key StepPrices::KeyOf(const DistState& from, const Step& step) {
  static_assert(ShardEntries::kMax <= 8, "head and tail hold 8 entries");
  uint8_t bytes[16] = {step.group.bits(), static_cast<uint8_t>(step.kind), ByteOf(step.src),
                       ByteOf(step.dst), static_cast<uint8_t>(step.entries.size())};
  for (int i = 0; i < step.entries.size(); ++i) {
    bytes[5 + i] =
        static_cast<uint8_t>(step.entries.mesh_dim(i) | (step.entries.tensor_dim(i) << 4));
  }
  Key key{from.bits(), 0, 0};
  std::memcpy(&key.head, bytes, 8);
  std::memcpy(&key.tail, bytes + 8, 8);
  return key;
}

StepPrices::Price StepPrices::OfOnce(const DistState& from, const Step& step) const {
  Price price;
  price.to = ApplyStep(from, step);
  const std::optional<double> bound = model_.DeferredCostBound(from, step);
  price.priced = !bound.has_value();
  price.cost = price.priced ? model_.StepCost(from, step) : *bound;
  return price;
}

StepPrices::Price& StepPrices::Find(const DistState& from, const Step& step) {
  auto [it, inserted] = prices_.try_emplace(KeyOf(from, step));
  if (inserted) it->second = OfOnce(from, step);
  return it->second;
}

const StepPrices::Price& StepPrices::Of(const DistState& from, const Step& step) {
  return Find(from, step);
}

double StepPrices::PriceOf(const DistState& from, const Step& step) {
  Price& price = Find(from, step);
  if (!price.priced) {
    price.cost = model_.StepCost(from, step);
    price.priced = true;
  }
  return price.cost;
}

}  // namespace reshard
