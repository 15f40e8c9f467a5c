// The compat graph planner (spec §5): the plan PyTorch's Dijkstra finds, with
// its tie-breaks, found by a pruned search (spec §5.1): an A* pass with
// RemainingCostBound finds the optimal cost C*, then a Dijkstra pass that
// drops every edge that cannot lie on a path of cost C* pops the same
// destination entry as the unpruned search.
#ifndef RESHARD_PLANNER_SEARCH_GRAPH_PLANNER_H_
#define RESHARD_PLANNER_SEARCH_GRAPH_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/costs/bounds/remaining_cost_bound.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/search/edge_source.h"
#include "planner/search/search_limits.h"
#include "planner/search/state_search.h"
#include "planner/steps/step.h"

namespace reshard {

struct GraphPath {
  std::vector<DistState> states;  // source first, destination last
  // Step i goes from states[i] to states[i + 1] and costs costs[i].
  std::vector<Step> steps;
  std::vector<double> costs;
  double cost = 0;       // as the search summed it (bit-identical to PyTorch's)
  int64_t expanded = 0;  // by all passes together
  // kNone: a cheapest path. Otherwise the limit that stopped the search
  // before it proved one: the path is the cheapest found (spec §5.2 item 9).
  SearchLimit stopped = SearchLimit::kNone;
};

enum class GraphSearch {
  kPruned,    // A* for C*, then the pruned Dijkstra (spec §5.1)
  kDijkstra,  // spec §5 as written: the reference the pruned search must match
};

// The compat graph (spec §4, §5). ResourceExhausted, with the limit's field
// as its payload (PlanLimitOf, planner/steps/plan_limit.h), when the search would pass `limits`
// (expansions of all passes together, edges generated) without reaching
// `dst`; NotFound ("no_path: ...") when dst is unreachable.
absl::StatusOr<GraphPath> FindGraphPath(const DistState& src, const DistState& dst, int tensor_ndim,
                                        const BoundCostModel& model, const SearchLimits& limits,
                                        GraphSearch search = GraphSearch::kPruned);

// The error of a search that ended with `outcome` (not kReached) from src to dst.
absl::Status SearchFailure(const StateSearch& search, StateSearch::Outcome outcome,
                           const DistState& src, const DistState& dst, const SearchLimits& limits);

// One pass of `search` from src until it pops dst (spec §5.2): A* with
// `bound` when it is useful, Dijkstra otherwise (the bound is set on the
// search). FindPathOn and CostMatrix's native rows run exactly this.
StateSearch::Outcome SearchToward(StateSearch* search, const DistState& src, const DistState& dst,
                                  const RemainingCostBound* bound, const SearchLimits& limits);

// A cheapest path on any graph (native mode, spec §5.2): A* with `bound`
// (consistent on `edges`; RemainingCostBound::Graph::kNative for the native
// edges), or Dijkstra when it is null or not useful. Between parallel edges,
// the cheapest (the first of equals).
//
// `incumbent`, when it has states, is a path known before the search (spec
// §5.2 item 9): where each of its states leads to the next by an edge, its
// cost bounds the search (StateSearch::SetIncumbent; the same path is found
// where the search completes), and when a limit stops the search the
// cheapest path known is returned, `stopped` set, instead of an error.
absl::StatusOr<GraphPath> FindPathOn(const EdgeSource& edges, const DistState& src,
                                     const DistState& dst, const BoundCostModel& model,
                                     const SearchLimits& limits,
                                     const RemainingCostBound* bound = nullptr,
                                     absl::Span<const DistState> incumbent = {});

// Spec §5.2: a cheapest path from src to dst on the native graph (NativeEdges
// towards dst, without the steps over `max_memory` bytes per rank), by A*
// with RemainingCostBound's native form; `incumbent` as FindPathOn's. Errors
// as FindGraphPath's.
absl::StatusOr<GraphPath> FindNativePath(const DeviceMesh& mesh,
                                         absl::Span<const int64_t> global_shape, DType dtype,
                                         const DistState& src, const DistState& dst,
                                         const BoundCostModel& model, const SearchLimits& limits,
                                         int64_t max_memory,
                                         absl::Span<const DistState> incumbent = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_GRAPH_PLANNER_H_
