#include "planner/steps/plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {

absl::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kGraph:
      return "graph";
    case Algorithm::kGreedy:
      return "greedy";
  }
  return "?";
}

std::optional<Algorithm> ParseAlgorithm(absl::string_view name) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kGraph, Algorithm::kGreedy}) {
    if (name == AlgorithmName(a)) return a;
  }
  return std::nullopt;
}

absl::string_view PlanModeName(PlanMode m) {
  switch (m) {
    case PlanMode::kAuto:
      return "auto";
    case PlanMode::kPyTorch:
      return "pytorch";
    case PlanMode::kNative:
      return "native";
  }
  return "?";
}

std::optional<PlanMode> ParsePlanMode(absl::string_view name) {
  for (PlanMode m : {PlanMode::kAuto, PlanMode::kPyTorch, PlanMode::kNative}) {
    if (name == PlanModeName(m)) return m;
  }
  return std::nullopt;
}

namespace {

// Spec §8: how PyTorch prints a greedy plan's states. It replays the steps on
// the source's shard order (leaving S(a) pops a's last mesh dim, entering
// S(b) appends); where that order names a mesh dim no longer sharding the
// tensor dim, PyTorch fails to print the state and we print the token
// without its [k].
class PyTorchGreedyReplay {
 public:
  explicit PyTorchGreedyReplay(const DistState& src) : placements_(src.placements()) {
    for (int d = 0; d < kMaxTensorDims; ++d) {
      MeshDimList dims = src.OrderOf(d);
      order_[d].assign(dims.begin(), dims.end());
    }
  }
  void Apply(const Step& step) {
    for (int m : step.group.ToVector()) {
      if (step.src.is_shard() && !order_[step.src.dim()].empty()) order_[step.src.dim()].pop_back();
      if (step.dst.is_shard()) order_[step.dst.dim()].push_back(m);
      placements_[m] = step.dst;
    }
  }
  std::string ToString() const {
    std::string out;
    for (int m = 0; m < static_cast<int>(placements_.size()); ++m) {
      Placement p = placements_[m];
      absl::StrAppend(&out, p.ToString());
      if (!p.is_shard() || order_[p.dim()].size() < 2) continue;
      const std::vector<int>& order = order_[p.dim()];
      auto it = std::find(order.begin(), order.end(), m);
      if (it != order.end()) absl::StrAppend(&out, "[", it - order.begin(), "]");
    }
    return out;
  }

 private:
  std::vector<Placement> placements_;
  std::vector<int> order_[kMaxTensorDims];
};

}  // namespace

std::vector<std::string> Plan::StateTexts() const {
  std::vector<std::string> texts;
  if (states.empty()) return texts;
  if (algorithm != Algorithm::kGreedy) {
    for (const DistState& s : states) texts.push_back(s.ToString());
    return texts;
  }
  PyTorchGreedyReplay replay(states.front());
  texts.push_back(replay.ToString());
  for (const TransformInfo& info : steps) {
    replay.Apply(info.step);
    texts.push_back(replay.ToString());
  }
  return texts;
}

std::string Plan::Trace() const { return absl::StrJoin(StateTexts(), "->"); }

}  // namespace reshard
