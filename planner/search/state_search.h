// StateSearch: the engine of the graph planner (spec §5) and of CostMatrix.
// Best-first passes over DistStates, generated on demand from an EdgeSource
// (the spec §4 or §4.2 edges); the states reached stay interned across passes. Each pass is Boost
// Graph's dijkstra_shortest_paths_no_color_map_no_init on the implicit graph
// of the states (an IncidenceGraph whose out-edges are generated and priced
// once per state per search); Boost is shown only the out-edges that the pass
// relaxes, the others are counted (seq) and skipped before it (NextRelaxed,
// ListRelaxed).
//
// A pass pops states by (priority, sequence): priority is g, the cost from
// the source (Dijkstra, spec §5), or g + bound (A*); every edge relaxed
// towards a not-yet-expanded state takes the next sequence number, so
// Dijkstra breaks ties exactly as PyTorch's heap does (Pass::Distances, for
// costs alone, does not, and skips Boost). With a budget, a pass
// never relaxes an edge whose g + bound exceeds it (spec §5.1). An A* pass
// pops by (g + bound, g, seq): where g drops by less than g + bound's
// rounding, the smaller g still wins, so every state pops at its exact
// minimum sum whatever the bound (spec §5.2 item 2, "Exact sums").
//
// Deferred pricing (spec §5.2 item 7): an edge whose model offers a cheap
// lower bound (BoundCostModel::DeferredCostBound) is not priced when its
// source is expanded. It leads instead to a stand-in vertex keyed by that
// bound, as if the edge were split in two (bound, then the rest of the
// price); only when the stand-in is popped, before any state keyed beyond
// the bound, is the step priced, and the edge relaxes its real target at
// exactly g + StepCost. Stand-ins are no states: not expanded, counted, nor
// on a path.
//
//   StateSearch search(CompatEdges(tensor_ndim, partial_ops), model, &bound);
//   search.Run(src, {dst}, StateSearch::Pass::Astar(), max_expanded);   // C*
//   search.Run(src, {dst}, StateSearch::Pass::Pruned(c_star), ...);     // PyTorch's path
//   search.PathTo(dst)
#ifndef RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_
#define RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "planner/costs/bounds/remaining_cost_bound.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/search/distance_heap.h"
#include "planner/search/edge_source.h"
#include "planner/search/search_limits.h"
#include "planner/steps/step.h"

namespace reshard {

class StateSearch {
 public:
  struct Pass {
    bool astar = false;                                       // pop by g + bound instead of g
    double budget = std::numeric_limits<double>::infinity();  // prune g + bound > budget

    // Costs alone (CostMatrix's rows): a Dijkstra that pops equal keys in
    // any order, so its parents may differ from §5's, never its costs (spec
    // §5.2 item 2, "Exact sums"); a plain heap of g instead of Boost's.
    bool distances_only = false;

    static Pass Dijkstra() { return Pass{}; }
    static Pass Astar() { return Pass{true}; }
    static Pass Distances() { return Pass{false, std::numeric_limits<double>::infinity(), true}; }
    // Dijkstra keeping only what can lie on a path of cost `c_star`, with a
    // tiny relative slack for rounding (spec §5.1).
    static Pass Pruned(double c_star);
  };
  enum class Outcome {
    kReached,    // every goal was popped
    kExhausted,  // the heap ran empty first
    kBound,      // the pass would have passed a limit (limit_hit() says which)
  };

  // `bound` may be null (0 everywhere); edges, model and bound must outlive
  // the search.
  StateSearch(const EdgeSource& edges, const BoundCostModel& model,
              const RemainingCostBound* bound);

  // For a search that runs one pass (Run called once: FindPathOn): a state's
  // edges to states already popped are neither priced nor kept, since that
  // pass never relaxes them (spec §5.2 item 2); a second pass would miss
  // them. About a third of a native search's edges (docs/design/planner-speed.md). With
  // one goal, once an edge has reached it (at g_goal, a path's cost: at
  // least what the pass returns), neither is an edge out of u (popped at g)
  // whose g + a lower bound on its price (the bound's StepLowerBound) +
  // h(target) exceeds g_goal, nor is its target interned: its key would
  // exceed the goal's, so it could neither pop before the goal nor keep a
  // state that does from its key, and the states popped, their order and
  // parents are the same without it (spec §5.2 item 8).
  void KeepOnlyOpenEdges() { open_edges_only_ = true; }
  // With KeepOnlyOpenEdges and one goal: the cost of a path to it known
  // before the pass (native mode's incumbent, spec §5.2 item 9), which bounds
  // it as the goal's g so far does. Exact: that path's forward sum is at
  // least the goal's, and only keys above it are left out.
  void SetIncumbent(double cost) { incumbent_ = cost; }

  // Another bound (or null) for the passes that follow, e.g. towards another
  // destination on the same graph: the states and edges generated stay, each
  // state's bound is recomputed when a pass first meets it. A pass gives the
  // same result as on a fresh search with that bound (states are popped by
  // (priority, seq), never by their ids).
  void SetBound(const RemainingCostBound* bound);

  // One pass from `src`, until every state of `goals` has been popped. The
  // last goal popped is not expanded (a single goal: spec §5's "first time
  // the destination is popped"). `max_expanded` bounds this pass's
  // expansions; `max_edges` the edges this search holds after it (edges
  // generated by earlier passes count: they are memory this search keeps).
  Outcome Run(const DistState& src, absl::Span<const DistState> goals, const Pass& pass,
              int64_t max_expanded, int64_t max_edges = std::numeric_limits<int64_t>::max());
  // After a Run that returned kBound: which limit it hit.
  SearchLimit limit_hit() const { return limit_hit_; }
  // Edges generated so far, over all passes (kept or not).
  int64_t edges() const { return generated_edges_; }
  // Of those, the ones kept (all but KeepOnlyOpenEdges' skipped ones).
  int64_t kept_edges() const { return static_cast<int64_t>(edges_.size()); }
  // Of the skipped ones, those left out because they could not beat the
  // goal's cost so far (KeepOnlyOpenEdges).
  int64_t edges_beyond_goal() const { return edges_beyond_goal_; }

  // After Run: states expanded by it, and whether / at what cost it popped `s`.
  int64_t expanded() const { return expanded_; }
  bool Popped(const DistState& s) const;
  double CostTo(const DistState& s) const;
  // The states from the pass's source to `s` (Popped(s)), source first.
  std::vector<DistState> PathTo(const DistState& s) const;
  // The Partial ops held by any state of PathTo(s), without building it.
  unsigned PartialOpsOnPath(const DistState& s) const;

 private:
  using VertexId = uint32_t;
  static constexpr VertexId kNone = std::numeric_limits<VertexId>::max();
  // A state's place in the pass's heap: (priority, seq) orders it; g rides along.
  struct Key {
    double priority = std::numeric_limits<double>::infinity();
    uint64_t seq = std::numeric_limits<uint64_t>::max();
    double g = std::numeric_limits<double>::infinity();
  };
  // What a pass knows of a vertex, apart from Vertex: the heap reads these
  // for every comparison, so they lie close together (labels_).
  struct Label {
    Key key;  // infinite until reached in this pass
    VertexId parent;
    bool popped;
    bool goal;      // one of this pass's goals
    bool stand_in;  // Vertex::deferred is set; kept across passes
  };
  struct Vertex {
    DistState state;
    double h;            // the bound, computed once per state and bound
    uint32_t h_version;  // the bound_version_ h was computed with
    // Its out-edges in edges_ once expanded in any pass (generation order).
    bool has_edges;
    // They lead to distinct states, none a stand-in: a Dijkstra pass may
    // price them all at once (ListRelaxed).
    bool plain_edges;
    uint32_t first_edge;
    uint32_t num_edges;
    uint32_t deferred;  // a stand-in's index in deferred_; kNone for a state
  };
  struct Edge {
    VertexId from;
    VertexId to;
    double cost;
  };
  // An out-edge of the state being expanded, for the out_edge_iterator; key
  // is its target's key were Boost to relax it, where already priced.
  struct OpenEdge {
    const Edge* edge;
    Key key;
  };
  // A deferred edge (class comment): its stand-in's one out-edge, priced
  // when the stand-in is first popped. Or, where the model refines the
  // bound (RefinedCostBound) above the first, an edge to a second stand-in
  // keyed by the refined bound, which is priced when it pops.
  struct Deferred {
    Step step;
    Edge edge;  // stand-in -> real target (or second stand-in); cost valid once priced
    bool priced;
    bool refined;  // RefinedCostBound was asked for
  };
  // The Boost.Graph adaptors (state_search.cc).
  struct Graph;
  template <typename T, typename Of>
  struct FieldMap;
  struct Combine;
  template <bool kAstar>
  struct KeyLess;
  class Visitor;

  VertexId Find(const DistState& s) const;
  // A popped vertex's out-edges: a state's generated edges, or a stand-in's
  // one edge once priced (none before).
  std::pair<const Edge*, const Edge*> OutEdgeRange(VertexId u) const;
  // The vertex's bound under the current bound_.
  double H(VertexId v);
  VertexId Intern(const DistState& s);
  // Intern(s); or kNone, interning nothing new, where `least` (a popped
  // state's g plus a lower bound on the step to s) + H(s) exceeds `upper`
  // (KeepOnlyOpenEdges' goal's g so far; counted in edges_beyond_goal_).
  VertexId InternBelow(double upper, double least, const DistState& s);
  // A new vertex for s, whose bound is h.
  void AddVertex(const DistState& s, double h);
  // KeepOnlyOpenEdges' one goal's g so far, or the incumbent when smaller
  // (infinite while neither is known, or without that mode or with several
  // goals).
  double UpperBound() const;
  void Reset();
  // Boost's Dijkstra from s, popping by KeyLess<kAstar> (Run's pass).
  template <bool kAstar>
  void Search(VertexId s, const Pass& pass, int64_t max_expanded, int64_t max_edges);
  // Pass::Distances' Dijkstra from s.
  void SearchDistances(VertexId s, int64_t max_expanded, int64_t max_edges);
  // False, generating nothing, when u's edges would take the search past
  // `max_edges`.
  bool GenerateEdges(VertexId u, int64_t max_edges);
  // The stand-in for the step from u to `to` priced later, at least `bound`.
  VertexId AddDeferred(VertexId u, VertexId to, const Step& step, double bound);
  // Whether the edges [first, first + num) lead to distinct states, none a
  // stand-in (Vertex::plain_edges).
  bool PlainEdges(uint32_t first, uint32_t num);
  // Prices a popped stand-in's edge, unless its target is already popped,
  // or first leads it to a second stand-in at the refined bound.
  void PriceDeferred(VertexId p);
  // The visitor's half of one pass: a state popped (expanded, or the pass
  // ends).
  void Pop(VertexId u, int64_t max_expanded, int64_t max_edges);
  // The first of the edges [at, end) (to states not popped) that Boost is
  // to relax, or end: each within the pass's budget takes the next sequence
  // number; the first whose key is below its target's is the one, and its
  // key is left in candidate_.
  const OpenEdge* NextRelaxed(const OpenEdge* at, const OpenEdge* end, const Pass& pass);
  // A Dijkstra pass without a bound or budget, at a state with plain_edges:
  // every edge to a state not popped takes the next sequence number, and
  // whether it relaxes its target depends on that target's key alone. So
  // all are priced at once; lists those that relax, with their keys, in
  // open_edges_, and returns how many.
  size_t ListRelaxed(VertexId u, const Edge* first, const Edge* last);
  // NextRelaxed's test for an edge to a stand-in (class comment).
  bool RelaxesToStandIn(const Edge& e, const Pass& pass);

  const EdgeSource& edge_source_;
  const BoundCostModel& model_;
  const RemainingCostBound* bound_;
  uint32_t bound_version_ = 0;  // incremented by SetBound

  // Keyed by the packed state: every state of one search has the same ndim.
  absl::flat_hash_map<uint64_t, VertexId> ids_;
  std::vector<Vertex> vertices_;
  std::vector<Label> labels_;  // labels_[v] is vertices_[v]'s, reset by each pass
  // PlainEdges' marks: seen_[v] == seen_mark_ once v is met in this call.
  std::vector<uint32_t> seen_;
  uint32_t seen_mark_ = 0;
  std::vector<Edge> edges_;
  int64_t generated_edges_ = 0;
  int64_t edges_beyond_goal_ = 0;
  bool open_edges_only_ = false;
  double incumbent_ = std::numeric_limits<double>::infinity();
  int runs_ = 0;  // Run's calls (KeepOnlyOpenEdges allows one)
  std::vector<Deferred> deferred_;
  std::vector<Step> steps_;  // scratch for GenerateEdges
  // Scratch for the out_edge_iterator: the popped state's edges to states
  // not popped, or (ListRelaxed) those Boost is to relax, with their keys.
  std::vector<OpenEdge> open_edges_;
  DistanceHeap distance_heap_;  // SearchDistances'; keyed by priority
  uint64_t seq_ = 0;
  Key candidate_;          // the key the edge being examined would give its target
  size_t goals_left_ = 0;  // this pass's goals not popped yet
  VertexId goal_ = kNone;  // this pass's goal when it has one
  Outcome outcome_ = Outcome::kExhausted;
  SearchLimit limit_hit_ = SearchLimit::kNone;
  int64_t expanded_ = 0;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_STATE_SEARCH_H_
