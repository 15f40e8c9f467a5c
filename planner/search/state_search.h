// StateSearch: the engine of the graph planner (spec §5) and of CostMatrix.
// Best-first passes over DistStates, generated on demand from an EdgeSource
// (the spec §4 or §4.2 edges); the states reached stay interned across passes. Each pass is Boost
// Graph's dijkstra_shortest_paths_no_color_map_no_init on the implicit graph
// of the states (an IncidenceGraph whose out-edges are generated and priced
// once per state per search).
//
// A pass pops states by (priority, sequence): priority is g, the cost from
// the source (Dijkstra, spec §5), or g + bound (A*); every edge relaxed
// towards a not-yet-expanded state takes the next sequence number, so
// Dijkstra breaks ties exactly as PyTorch's heap does. With a budget, a pass
// never relaxes an edge whose g + bound exceeds it (spec §5.1). Boost's heap
// only decreases keys, so an A* pass relaxes an edge when g + bound drops,
// not merely g: where g drops by less than g + bound's rounding, A* keeps the
// first parent (the optimal cost it finds is the same up to that rounding,
// which §5.1's slack absorbs).
//
//   StateSearch search(CompatEdges(tensor_ndim, partial_ops), model, &bound);
//   search.Run(src, {dst}, StateSearch::Pass::Astar(), max_expanded);   // C*
//   search.Run(src, {dst}, StateSearch::Pass::Pruned(c_star), ...);     // PyTorch's path
//   search.PathTo(dst)
#ifndef RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_
#define RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/search/edge_source.h"
#include "planner/costs/remaining_cost_bound.h"
#include "planner/steps/step.h"

namespace reshard {

class StateSearch {
 public:
  struct Pass {
    bool astar = false;  // pop by g + bound instead of g
    double budget = std::numeric_limits<double>::infinity();  // prune g + bound > budget

    static Pass Dijkstra() { return Pass{}; }
    static Pass Astar() { return Pass{true}; }
    // Dijkstra keeping only what can lie on a path of cost `c_star`, with a
    // tiny relative slack for rounding (spec §5.1).
    static Pass Pruned(double c_star);
  };
  enum class Outcome {
    kReached,    // every goal was popped
    kExhausted,  // the heap ran empty first
    kBound,      // the pass would have expanded more than allowed
  };

  // `bound` may be null (0 everywhere); edges, model and bound must outlive
  // the search.
  StateSearch(const EdgeSource& edges, const BoundCostModel& model,
              const RemainingCostBound* bound);

  // Another bound (or null) for the passes that follow, e.g. towards another
  // destination on the same graph: the states and edges generated stay, each
  // state's bound is recomputed when a pass first meets it. A pass gives the
  // same result as on a fresh search with that bound (states are popped by
  // (priority, seq), never by their ids).
  void SetBound(const RemainingCostBound* bound);

  // One pass from `src`, until every state of `goals` has been popped. The
  // last goal popped is not expanded (a single goal: spec §5's "first time
  // the destination is popped"). `max_expanded` bounds this pass's expansions.
  Outcome Run(const DistState& src, absl::Span<const DistState> goals, const Pass& pass,
              int64_t max_expanded);

  // After Run: states expanded by it, and whether / at what cost it popped `s`.
  int64_t expanded() const { return expanded_; }
  bool Popped(const DistState& s) const;
  double CostTo(const DistState& s) const;
  // The states from the pass's source to `s` (Popped(s)), source first.
  std::vector<DistState> PathTo(const DistState& s) const;

 private:
  using VertexId = uint32_t;
  static constexpr VertexId kNone = std::numeric_limits<VertexId>::max();
  // A state's place in the pass's heap: (priority, seq) orders it; g rides along.
  struct Key {
    double priority = std::numeric_limits<double>::infinity();
    uint64_t seq = std::numeric_limits<uint64_t>::max();
    double g = std::numeric_limits<double>::infinity();
  };
  struct Vertex {
    DistState state;
    double h;            // the bound, computed once per state and bound
    uint32_t h_version;  // the bound_version_ h was computed with
    Key key;   // infinite until reached in this pass
    VertexId parent;
    bool popped;
    // Its out-edges in edges_ once expanded in any pass (generation order).
    bool has_edges;
    uint32_t first_edge;
    uint32_t num_edges;
  };
  struct Edge {
    VertexId from;
    VertexId to;
    double cost;
  };
  // The Boost.Graph adaptors (state_search.cc).
  struct Graph;
  template <typename T, typename Of>
  struct FieldMap;
  struct Combine;
  struct KeyLess;
  class Visitor;

  VertexId Find(const DistState& s) const;
  // The vertex's bound under the current bound_.
  double H(VertexId v);
  VertexId Intern(const DistState& s);
  void Reset();
  void GenerateEdges(VertexId u);
  // The visitor's halves of one pass: a state popped (expanded, or the pass
  // ends), an edge examined (priced into candidate_, or left unrelaxed).
  void Pop(VertexId u, const std::vector<VertexId>& goals, size_t* goals_left,
           int64_t max_expanded);
  void Price(const Edge& e, const Pass& pass);

  const EdgeSource& edge_source_;
  const BoundCostModel& model_;
  const RemainingCostBound* bound_;
  uint32_t bound_version_ = 0;  // incremented by SetBound

  // Keyed by the packed state: every state of one search has the same ndim.
  absl::flat_hash_map<uint64_t, VertexId> ids_;
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  std::vector<Step> steps_;  // scratch for GenerateEdges
  uint64_t seq_ = 0;
  Key candidate_;  // the key the edge being examined would give its target
  Outcome outcome_ = Outcome::kExhausted;
  int64_t expanded_ = 0;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_
