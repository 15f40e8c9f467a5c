// NativeGraphCosts: the cheapest-path costs of many (source, target) pairs on
// one native graph (spec §4.2), for CostMatrix in native mode (spec §5.2
// item 6). The graph of a target depends on it only through its shard orders
// and the Partial ops, except for the goal exchange (edge 13); so one graph
// without goal exchanges serves every target alike in those, and each target
// adds its exchanges (they all lead to it). The graph is generated once, each
// target gets a table of exact distances to it (a backward Dijkstra), and each
// pair a forward A* guided by that table, which pops little besides the
// cheapest paths. The cost is the exact minimum over paths of the forward sum
// g, the value every search of spec §5.2 item 2 returns.
//
//   StepPrices prices(model);
//   NativeGraphCosts graph(NativeEdges(mesh, shape, dtype, goal, ops), mesh, ndim, &prices,
//   limits); if (!graph.AddReachable(src)) ...             // a limit: search each pair instead
//   std::optional<double> c = graph.Cost(src, dst);  // dst alike goal (Alike)
#ifndef RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_
#define RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/search/edge_source.h"
#include "planner/search/search_limits.h"
#include "planner/search/step_prices.h"
#include "planner/steps/step.h"

namespace reshard {

class NativeGraphCosts {
 public:
  // `edges` towards any goal of the graph (its goal exchanges are dropped),
  // priced by `prices` (which graphs of one model may share); edges, mesh
  // and prices must outlive this. `limits` bound the graph: its states by
  // max_expanded_states, its edges by max_search_edges.
  NativeGraphCosts(const EdgeSource& edges, const DeviceMesh& mesh, int tensor_ndim,
                   StepPrices* prices, const SearchLimits& limits);

  // The shard orders of a goal with every non-Shard mesh dim Replicate: goals
  // with the same Partial ops and this key share one graph.
  static uint64_t ShardKey(const DistState& goal);

  // Adds every state reachable from `src`. False when the graph would pass a
  // limit: it is then dropped, this and every later call return false, and
  // its pairs must be searched alone (a search of one pair may stay within
  // the limits where the graph does not).
  bool AddReachable(const DistState& src);

  // The cheapest cost from `src` (AddReachable(src) returned true) to `dst`
  // (ShardKey of this graph's goal; AddReachable(dst) returned true too);
  // nullopt when no path exists.
  std::optional<double> Cost(const DistState& src, const DistState& dst);

 private:
  using VertexId = uint32_t;
  // A heap entry of the forward search.
  struct Edge;
  // A heap entry of the forward search: a state reached at g, or a stand-in
  // for an edge not yet priced (`edge`, out of `from` popped at g, into
  // `vertex`).
  struct Entry {
    double priority;
    double g;
    VertexId vertex;
    Edge* edge;
    VertexId from;
  };
  static constexpr uint32_t kPriced = std::numeric_limits<uint32_t>::max();
  // An edge's cost is its price, or while `step` is not kPriced, the model's
  // lower bound on it (spec §5.2 item 7): priced when its source is first
  // popped by a forward search (Price), since most edges never are.
  struct Edge {
    VertexId to;
    double cost;
    uint32_t step;  // into steps_of_, or kPriced
  };
  // Towards one target: its distances over the edges' costs (prices or lower
  // bounds), times 1 - 1e-6 (the margin spec §5.1 item 2 gives every bound),
  // and the cost of its goal exchange from each state, an Edge into the
  // target (`to` unused; cost infinite where there is none).
  struct Target {
    size_t num_vertices = 0;  // the graph's size when computed
    std::vector<double> h;
    std::vector<Edge> exchange;
  };
  VertexId Intern(const DistState& s);
  // The edge of `step` from `from`: to the state it leads to (interned), at
  // its step's price or, deferred, its lower bound.
  Edge MakeEdge(const DistState& from, const Step& step);
  void Price(VertexId from, Edge* e);
  bool Expand(VertexId u);
  void Drop();
  void BuildReverse();
  Target& TargetTable(VertexId t);
  void FillExchanges(VertexId t, Target* target);
  void FillDistances(VertexId t, Target* target);
  double Search(VertexId s, VertexId t, Target* target);
  // The forward search's steps (Search).
  static bool Later(const Entry& a, const Entry& b);  // pops by (priority, g)
  void Push(const Entry& entry);
  void Relax(VertexId w, double g);
  void Visit(VertexId u, double g, Edge* edge);
  bool Reached(VertexId v) const { return (stamp_[v] & ~kPoppedBit) == pass_; }
  bool Popped(VertexId v) const { return stamp_[v] == (pass_ | kPoppedBit); }

  const EdgeSource& edge_source_;
  const DeviceMesh& mesh_;
  int tensor_ndim_;
  StepPrices* prices_;
  SearchLimits limits_;
  bool too_big_ = false;

  absl::flat_hash_map<uint64_t, VertexId> ids_;
  std::vector<DistState> states_;
  std::vector<uint32_t> first_edge_;  // per expanded state; states_ past it are not expanded
  std::vector<Edge> edges_;
  std::vector<Step> steps_of_;  // the steps of edges not yet priced
  // Reverse adjacency (in-edges by target, costs as when built), rebuilt
  // when the graph grew.
  size_t reverse_for_ = 0;
  std::vector<uint32_t> first_in_;
  std::vector<Edge> in_edges_;  // Edge::to is the edge's source here
  absl::flat_hash_map<VertexId, Target> targets_;
  // The forward search's pass: stamp_[v] is pass_ once v is reached (g_[v]
  // valid), with kPoppedBit once popped.
  static constexpr uint32_t kPoppedBit = 0x80000000u;
  std::vector<Entry> heap_;
  std::vector<uint32_t> stamp_;
  std::vector<double> g_;
  uint32_t pass_ = 0;
  const std::vector<double>* h_ = nullptr;
  VertexId t_ = 0;
  std::vector<Step> steps_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_NATIVE_GRAPH_COSTS_H_
