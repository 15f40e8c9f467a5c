// NativeGraphCosts: the cheapest-path costs of many (source, target) pairs on
// one native graph (spec §4.2), for CostMatrix in native mode (spec §5.2
// item 6). Most native edges do not depend on the goal; those that do (items
// 10's goal orders, 12 and 13) are few per state, and the Partial ops only
// add R -> P edges (spec §4 case 6). So one graph of the goal-free edges,
// with every Partial op of the pairs, serves them all: each pair's search
// keeps to the states holding its own ops, which are its graph; and each
// target adds its goal edges. The graph is generated once, each target gets
// its goal edges and a table of exact distances to it (a backward Dijkstra),
// and each pair a forward A* guided by that table, which pops little besides
// the cheapest paths. Exchanges a search prices far above their bounds raise
// the distances that took them (Reprice), so that later pairs of the column
// search under bounds that know the prices. The cost is the exact minimum
// over paths of the forward sum g, the value every search of spec §5.2
// item 2 returns.
//
//   NativeGraphCosts graph(mesh, ndim, partial_ops, model, limits);
//   if (!graph.AddReachable(src) || !graph.AddGoal(dst)) ...  // a limit: search the pair alone
//   std::optional<double> c = graph.Cost(src, dst);
#ifndef RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_
#define RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/search/distance_heap.h"
#include "planner/search/native_transitions.h"
#include "planner/search/search_limits.h"
#include "planner/steps/step.h"

namespace reshard {

class NativeGraphCosts {
 public:
  // The graph of the native edges with `partial_ops` (as NativeEdges') on
  // `mesh` for a tensor of `tensor_ndim` dims, without a memory limit,
  // priced by `model`; mesh and model must outlive this. `limits` bound the
  // graph: its states by max_expanded_states, its edges with one goal's by
  // max_search_edges.
  NativeGraphCosts(const DeviceMesh& mesh, int tensor_ndim, unsigned partial_ops,
                   const BoundCostModel& model, const SearchLimits& limits);

  // Adds every state reachable from `src` over goal-free edges. False when
  // the graph would pass a limit: it is then dropped, this and every later
  // call return false, and its pairs must be searched alone (a search of one
  // pair may stay within the limits where the graph does not).
  bool AddReachable(const DistState& src);

  // Adds `goal` (as AddReachable) and its goal edges out of every state, and
  // the states they reach. False when the graph would pass a limit, with
  // them or with the goal's edges alone: pairs to it must be searched alone.
  bool AddGoal(const DistState& goal);

  // The cheapest cost from `src` to `dst` on their graph (the states holding
  // no Partial op but theirs; those ops must be among the graph's), right
  // after AddReachable(src) and AddGoal(dst) returned true; nullopt when no
  // path exists.
  std::optional<double> Cost(const DistState& src, const DistState& dst);

  // Frees what AddGoal(goal) and the pairs to it kept (its goal edges and
  // table), once no more pairs to it are asked for: the next goal's storage
  // then reuses that memory.
  void DropGoal(const DistState& goal);

 private:
  using VertexId = uint32_t;
  // An edge of the graph (below).
  struct Edge;
  // A heap entry of the forward search (24 bytes: the heap moves these): a
  // state `vertex` reached at g, or a stand-in for an edge not yet priced
  // (`edge`, an EdgeOf choice, out of `vertex` popped at g).
  struct Entry {
    double priority;
    double g;
    VertexId vertex;
    uint32_t edge;  // kNoEdge for a state
  };
  static constexpr uint32_t kPriced = std::numeric_limits<uint32_t>::max();
  static constexpr VertexId kNoVertex = std::numeric_limits<VertexId>::max();
  // An edge's cost is its price, or while `step` is not kPriced, the model's
  // lower bound on it (spec §5.2 item 7; its refined bound where the model
  // has one): priced when a forward search pops its stand-in or its greedy
  // path takes it (Price), since most edges never are.
  struct Edge {  // 16 bytes: the tables' and searches' loops stream these
    double cost;
    VertexId to;
    uint32_t step;  // into steps_of_, or kPriced
  };
  // Towards one target: its goal edges out of each state (CSR by source),
  // and its distances over every edge's cost (prices or lower bounds), the
  // bound H once scaled. A pair's search that prices edges raises the
  // distances that took them (Reprice).
  struct Target {
    size_t num_vertices = 0;  // the graph's size when its goal edges were made
    bool too_big = false;
    std::vector<uint32_t> first;
    std::vector<Edge> edges;
    size_t h_for = 0;  // the graph's size when h was computed
    std::vector<double> dist;
    size_t repriced = 0;  // states Reprice met, over all its calls
    // Per state, GreedyEdge's choice: an index into edges_, or with
    // kGoalEdgeBit into `edges`, kNoEdge, or kUnchosen.
    std::vector<uint32_t> greedy;
  };
  VertexId Intern(const DistState& s);
  // The edge of `step` from `from`: to the state it leads to (interned), at
  // its step's price or, deferred, its lower bound. Each is made once (a
  // goal-free edge once per graph, a goal edge once per target), so nothing
  // is kept for another.
  Edge MakeEdge(const DistState& from, const Step& step);
  void Price(VertexId from, Edge* e);
  bool Expand(VertexId u);
  bool ExpandFrom(size_t first_state);
  void Drop();
  void BuildReverse();
  void FillGoalEdges(VertexId t, Target* target);
  void FillDistances(VertexId t, Target* target);
  // The reverse edges into v, goal-free and (FillDistances' target's) goal
  // edges; Edge::to is the source. Costs as when the CSRs were built: at
  // most the prices (pricing only raises), so distances over them are bounds.
  template <typename Fn>
  void ForEachInEdge(VertexId v, Fn fn) const {
    for (uint32_t i = first_in_[v]; i < first_in_[v + 1]; ++i) fn(in_edges_[i]);
    for (uint32_t i = goal_first_in_[v]; i < goal_first_in_[v + 1]; ++i) fn(goal_in_edges_[i]);
  }
  // u's out-edges, goal-free and the target's, at their current costs.
  template <typename Fn>
  void ForEachOutEdge(VertexId u, const Target* target, Fn fn) const {
    for (uint32_t i = first_edge_[u]; i < first_edge_[u + 1]; ++i) fn(edges_[i]);
    for (uint32_t i = target->first[u]; i < target->first[u + 1]; ++i) fn(target->edges[i]);
  }
  // After a pair's search priced edges: the distances that took them, raised.
  // Only for a raise of more than kRepriceRaise of the source's distance
  // (smaller ones barely move the searches: on the 2x2x2x2 sets of
  // docs/design/planner-speed.md repricing every one cost more than it saved), and up to
  // kRepriceBudget times the graph's states per target, so that a target
  // pays at most a few tables' worth.
  static constexpr double kRepriceRaise = 0.2;
  static constexpr size_t kRepriceBudget = 4;
  void Reprice(VertexId t, Target* target);
  // Reprice's states to raise, into affected_[0, count); returns count, past
  // the target's budget when it stopped there.
  size_t MarkRaised(const Target& target);
  double Search(VertexId s, VertexId t, Target* target);
  static constexpr size_t kMaxUpperBoundSteps = 64;
  double UpperBound(VertexId s, VertexId t, Target* target);
  static constexpr uint32_t kGoalEdgeBit = 0x80000000u;
  static constexpr uint32_t kNoEdge = 0xfffffffeu;
  static constexpr uint32_t kUnchosen = 0xffffffffu;
  // u's out-edge (goal-free or the target's) least in cost plus H among
  // those to states holding no Partial op outside `ops`: an EdgeOf choice,
  // or kNoEdge.
  uint32_t LeastEdge(VertexId u, const Target& target, unsigned ops) const;
  Edge* GreedyEdge(VertexId u, Target* target);
  Edge* AllowedGreedyEdge(VertexId u, Target* target);
  Edge* EdgeOf(uint32_t choice, Target* target) {
    return (choice & kGoalEdgeBit) != 0 ? &target->edges[choice & ~kGoalEdgeBit] : &edges_[choice];
  }
  // The forward search's steps (Search).
  // Pops by (priority, g); a type, so that the heap's steps inline it. The
  // order among equal keys does not matter: t pops at d(t) whatever it is
  // (spec §5.2 item 2, "Exact sums").
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.priority > b.priority || (a.priority == b.priority && a.g > b.g);
    }
  };
  void Push(const Entry& entry);
  void Relax(VertexId w, double g);
  void Visit(VertexId u, double g, uint32_t choice, Target* target);
  // A stand-in popped (spec §5.2 item 7): its edge priced and relaxed.
  void PopStandIn(const Entry& e, Target* target);
  bool Reached(VertexId v) const { return (stamp_[v] & ~kPoppedBit) == pass_; }
  bool Popped(VertexId v) const { return stamp_[v] == (pass_ | kPoppedBit); }
  // Whether an entry of key `priority` would pop after t (Push drops it).
  bool Beyond(double priority) const {
    return priority > upper_ || (Reached(t_) && priority > g_[t_]);
  }

  const DeviceMesh& mesh_;
  int tensor_ndim_;
  unsigned partial_ops_;
  const BoundCostModel& model_;
  SearchLimits limits_;
  bool routing_limit_;        // RoutingLimitApplies(mesh_)
  std::vector<bool> stages_;  // StagingGroups(mesh_, model_.rails_per_host())
  bool too_big_ = false;

  absl::flat_hash_map<uint64_t, VertexId> ids_;
  std::vector<DistState> states_;
  std::vector<uint8_t> ops_;          // states_' PartialOps()
  std::vector<ShardOrders> orders_;   // of states_' first states (FillGoalEdges)
  std::vector<uint32_t> first_edge_;  // per expanded state; states_ past it are not expanded
  std::vector<Edge> edges_;
  std::vector<Step> steps_of_;  // the steps of edges not yet priced
  // Reverse adjacency (in-edges by target, costs as when built), rebuilt
  // when the graph grew.
  size_t reverse_for_ = 0;
  std::vector<uint32_t> first_in_;
  std::vector<Edge> in_edges_;  // Edge::to is the edge's source here
  // The same of one target's goal edges (FillDistances), and which.
  VertexId goal_in_for_ = kNoVertex;
  std::vector<uint32_t> goal_first_in_;
  std::vector<Edge> goal_in_edges_;
  // The edges the pair's search (Cost) priced, and Reprice's scratch.
  struct PricedEdge {
    VertexId from;
    VertexId to;
    double old_cost;  // a bound, as the table may have it
    double new_cost;  // its price
  };
  std::vector<PricedEdge> priced_;
  std::vector<VertexId> affected_;
  std::vector<uint32_t> affected_mark_;
  uint32_t affected_pass_ = 0;
  absl::flat_hash_map<VertexId, Target> targets_;
  DistanceHeap distance_heap_;  // FillDistances'
  // The forward search's pass: stamp_[v] is pass_ once v is reached (g_[v]
  // valid), with kPoppedBit once popped.
  static constexpr uint32_t kPoppedBit = 0x80000000u;
  std::vector<Entry> heap_;
  std::vector<uint32_t> stamp_;
  std::vector<double> g_;
  uint32_t pass_ = 0;
  const std::vector<double>* dist_ = nullptr;  // the table Search and the walk read
  // The margin of spec §5.1 item 2: a distance table so scaled is a bound
  // whose every decrease along an edge is below the edge's price by far more
  // than rounding, which the exactness argument of spec §5.2 item 6 needs.
  static constexpr double kBoundScale = 1 - 1e-6;
  // The bound at v (infinity stays).
  double H(VertexId v) const { return (*dist_)[v] * kBoundScale; }
  VertexId t_ = 0;
  double upper_ = 0;      // Search's key above which nothing pops before t
  unsigned allowed_ = 0;  // Search's Partial ops: its pair's graph
  std::vector<Step> steps_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_
