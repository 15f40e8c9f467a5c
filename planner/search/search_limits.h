// The budget of one graph search (issue 19; spec §5.1 item 6, §5.2 item 4).
// Expanded states bound the passes' heap work; generated edges bound what a
// search spends on a state-rich graph: each edge is priced, replayed and
// kept (StateSearch's Edge, 16 bytes, plus a Vertex and a hash slot, about
// 100 bytes, when it reaches a state not met before), so the edge budget
// bounds time and memory together, whatever the mesh.
#ifndef RESHARD_PLANNER_SEARCH_SEARCH_LIMITS_H_
#define RESHARD_PLANNER_SEARCH_SEARCH_LIMITS_H_

#include <cstdint>
#include <limits>

namespace reshard {

// The defaults are PlanOptions' (planner.h); none here, so that a search
// built without limits (tests) is unbounded on purpose.
struct SearchLimits {
  // States one search (all its passes together) may expand.
  int64_t max_expanded_states = 1000000;
  // Edges one search may generate (each state's out-edges once, for every
  // pass of the search); a state whose edges would pass it ends the search.
  int64_t max_search_edges = std::numeric_limits<int64_t>::max();
};

// Which limit a search hit, by the PlanOptions field that sets it.
enum class SearchLimit { kNone, kExpandedStates, kSearchEdges };
const char* SearchLimitField(SearchLimit limit);  // "max_expanded_states", ...

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_SEARCH_LIMITS_H_
