// A plan: the steps (TransformInfos) that turn one DistState into another
// (spec §10), with the states it passes through and its cost.
#ifndef RESHARD_PLANNER_STEPS_PLAN_H_
#define RESHARD_PLANNER_STEPS_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// One step of a plan (step.h) with what the planner reports about it.
struct TransformInfo {
  Step step;
  // Spec §10 for the rank the plan was made for. Greedy plans report
  // PyTorch's shapes instead (spec §8: from the source placements only); the
  // executor computes its own with LogicalShape (step_bytes.h).
  std::vector<int64_t> logical_shape;
  double cost = 0;  // in the cost model's unit
};

enum class Algorithm : uint8_t { kAuto, kGraph, kGreedy };
// "auto", "graph", "greedy".
absl::string_view AlgorithmName(Algorithm a);
// The inverse of AlgorithmName; nullopt for any other name.
std::optional<Algorithm> ParseAlgorithm(absl::string_view name);

// pytorch: PyTorch's edges and tie-breaks, exactly (spec §4, §5); native:
// reshard's own graph, with group steps and permutes (spec §4.2, §5.2).
enum class PlanMode : uint8_t { kAuto, kPyTorch, kNative };
// "auto", "pytorch", "native".
absl::string_view PlanModeName(PlanMode m);
// The inverse of PlanModeName; nullopt for any other name.
std::optional<PlanMode> ParsePlanMode(absl::string_view name);

struct Plan {
  PlanMode mode = PlanMode::kPyTorch;       // the mode actually used (never kAuto)
  Algorithm algorithm = Algorithm::kGraph;  // the planner actually used (never kAuto)
  // Every state from source to destination (steps.size() + 1):
  // states[i + 1] == ApplyStep(states[i], steps[i].step).
  std::vector<DistState> states;
  std::vector<TransformInfo> steps;
  double cost = 0;  // sum of the steps' costs
  // Graph planner only: how many states the search expanded.
  int64_t expanded_states = 0;
  // Empty for a cheapest plan. Otherwise why this one may not be: a native
  // search stopped by a limit returns the cheapest plan it knew, at worst
  // pytorch mode's (spec §5.2 item 9), and this says which limit to raise.
  std::string not_optimal;
  // The most bytes any rank holds at once while the plan runs (step_memory.h).
  int64_t peak_bytes = 0;
  // The fingerprint of the cost model that priced it (cost_model.h: its name
  // and profile, e.g. "pytorch devices_per_host=8"); empty until
  // PlanRedistribution sets it.
  std::string cost_model;

  // The states in notation (spec §3), as PyTorch prints them. For greedy
  // plans that is not always states[i].ToString(): PyTorch replays a greedy
  // plan's steps on the source's shard order by popping the *last* mesh dim
  // of the order a step leaves (spec §8), which on size-1 mesh dims can pop
  // another mesh dim than the one leaving and so name an order no DistState
  // has. Those texts are a printing rule only; `states` holds the real
  // states the data goes through.
  std::vector<std::string> StateTexts() const;
  // StateTexts() joined by "->" (spec §3), e.g. "S(0)R->RR->RS(0)".
  std::string Trace() const;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_PLAN_H_
