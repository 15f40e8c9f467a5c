// The compat graph planner (spec §5): Dijkstra over DistStates with
// Boost.Graph on an implicit graph whose vertices are generated as the search
// reaches them. Priority is (cost, push sequence), so equal-cost ties break
// exactly as PyTorch's heap does.
#ifndef RESHARD_PLANNER_GRAPH_PLANNER_H_
#define RESHARD_PLANNER_GRAPH_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/cost_model.h"
#include "planner/dist_state.h"
#include "planner/step.h"

namespace reshard {

struct GraphPath {
  std::vector<DistState> states;  // source first, destination last
  // Step i goes from states[i] to states[i + 1] and costs costs[i].
  std::vector<Step> steps;
  std::vector<double> costs;
  double cost = 0;  // as the search summed it (bit-identical to PyTorch's)
  int64_t expanded = 0;
};

// ResourceExhausted after `max_expanded` expansions without reaching `dst`;
// NotFound ("no_path: ...") when dst is unreachable.
absl::StatusOr<GraphPath> FindGraphPath(const DistState& src, const DistState& dst,
                                        int tensor_ndim, const BoundCostModel& model,
                                        int64_t max_expanded);

}  // namespace reshard

#endif  // RESHARD_PLANNER_GRAPH_PLANNER_H_
