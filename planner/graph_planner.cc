#include "planner/graph_planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>
#include <boost/graph/graph_traits.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/property_map/vector_property_map.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/transitions.h"

namespace reshard {
namespace {

using VertexId = uint32_t;

// Dijkstra's key (spec §5): cost first, then the sequence number of the edge
// that set it. Every edge to a not-yet-expanded state takes the next number,
// in generation order, whether or not it improves anything; PyTorch's heap
// pops the same order, so ties break identically.
struct Key {
  double cost = std::numeric_limits<double>::infinity();
  uint64_t seq = std::numeric_limits<uint64_t>::max();
};
struct KeyLess {
  bool operator()(const Key& a, const Key& b) const {
    return a.cost < b.cost || (a.cost == b.cost && a.seq < b.seq);
  }
};

struct StateEdge {
  VertexId source;
  VertexId target;
  double cost;
};

// The implicit graph: vertices are interned DistStates, numbered in the order
// the search first reaches them; out_edges() generates a state's transitions
// (transitions.h) on demand. Boost.Graph sees an IncidenceGraph.
class StateGraph {
 public:
  using vertex_descriptor = VertexId;
  using edge_descriptor = StateEdge;
  using directed_category = boost::directed_tag;
  using edge_parallel_category = boost::allow_parallel_edge_tag;
  struct traversal_category : boost::incidence_graph_tag {};
  using out_edge_iterator = std::vector<StateEdge>::const_iterator;
  using degree_size_type = size_t;
  using vertices_size_type = size_t;
  using edges_size_type = size_t;
  static VertexId null_vertex() { return std::numeric_limits<VertexId>::max(); }

  StateGraph(int tensor_ndim, unsigned partial_ops, const BoundCostModel& model)
      : tensor_ndim_(tensor_ndim), partial_ops_(partial_ops), model_(model) {}

  VertexId Intern(const DistState& s) const {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<VertexId>(states_.size()));
    if (inserted) states_.push_back(s);
    return it->second;
  }
  const DistState& state(VertexId v) const { return states_[v]; }

  std::pair<out_edge_iterator, out_edge_iterator> OutEdges(VertexId u) const {
    steps_.clear();
    edges_.clear();
    const DistState from = states_[u];
    AppendTransitions(from, tensor_ndim_, partial_ops_, &steps_);
    for (const Step& step : steps_) {
      edges_.push_back({u, Intern(ApplyStep(from, step)), model_.StepCost(from, step)});
    }
    return {edges_.cbegin(), edges_.cend()};
  }

 private:
  int tensor_ndim_;
  unsigned partial_ops_;
  const BoundCostModel& model_;
  // The search owns the graph; these grow as it explores (hence mutable:
  // Boost.Graph passes the graph by const reference).
  mutable absl::flat_hash_map<DistState, VertexId> ids_;
  mutable std::vector<DistState> states_;
  mutable std::vector<Step> steps_;
  mutable std::vector<StateEdge> edges_;
};

std::pair<StateGraph::out_edge_iterator, StateGraph::out_edge_iterator> out_edges(
    VertexId u, const StateGraph& g) {
  return g.OutEdges(u);
}
VertexId source(const StateEdge& e, const StateGraph&) { return e.source; }
VertexId target(const StateEdge& e, const StateGraph&) { return e.target; }

// Edge weights as Keys (Boost compares weights with the distance comparator).
struct EdgeCostMap {
  using key_type = StateEdge;
  using value_type = Key;
  using reference = Key;
  using category = boost::readable_property_map_tag;
};
Key get(EdgeCostMap, const StateEdge& e) { return Key{e.cost, 0}; }

// Signals from the visitor; caught in FindGraphPath, never escape it.
struct ReachedDestination {};
struct ReachedBound {};

class SearchVisitor : public boost::default_dijkstra_visitor {
 public:
  SearchVisitor(VertexId dst, int64_t max_expanded, std::vector<bool>* expanded,
                int64_t* num_expanded, uint64_t* seq)
      : dst_(dst), max_expanded_(max_expanded), expanded_(expanded),
        num_expanded_(num_expanded), seq_(seq) {}

  void examine_vertex(VertexId u, const StateGraph&) {
    if (u == dst_) throw ReachedDestination{};
    if (*num_expanded_ >= max_expanded_) throw ReachedBound{};
    if (expanded_->size() <= u) expanded_->resize(u + 1, false);
    (*expanded_)[u] = true;
    ++*num_expanded_;
  }
  void examine_edge(const StateEdge& e, const StateGraph&) {
    if (e.target >= expanded_->size() || !(*expanded_)[e.target]) ++*seq_;
  }

 private:
  VertexId dst_;
  int64_t max_expanded_;
  std::vector<bool>* expanded_;
  int64_t* num_expanded_;
  uint64_t* seq_;
};

// The edge from `a` to `b` (spec §4). Each step changes one mesh dim to one
// placement, so at most one edge joins two states; the search does not keep
// edges, so the path's steps are found again here, a few per plan.
Step EdgeBetween(const DistState& a, const DistState& b, int tensor_ndim, unsigned partial_ops) {
  std::vector<Step> steps;
  AppendTransitions(a, tensor_ndim, partial_ops, &steps);
  for (const Step& step : steps) {
    if (ApplyStep(a, step) == b) return step;
  }
  return steps.front();  // unreachable: b was reached from a by an edge
}

}  // namespace
}  // namespace reshard

namespace boost {
// Boost's generic graph_traits reads the member typedefs; only null_vertex
// needs spelling out for a non-Boost graph type.
template <>
struct graph_traits<reshard::StateGraph> {
  using G = reshard::StateGraph;
  using vertex_descriptor = G::vertex_descriptor;
  using edge_descriptor = G::edge_descriptor;
  using directed_category = G::directed_category;
  using edge_parallel_category = G::edge_parallel_category;
  using traversal_category = G::traversal_category;
  using out_edge_iterator = G::out_edge_iterator;
  using degree_size_type = G::degree_size_type;
  using vertices_size_type = G::vertices_size_type;
  using edges_size_type = G::edges_size_type;
  static vertex_descriptor null_vertex() { return G::null_vertex(); }
};
}  // namespace boost

namespace reshard {

absl::StatusOr<GraphPath> FindGraphPath(const DistState& src, const DistState& dst,
                                        int tensor_ndim, const BoundCostModel& model,
                                        int64_t max_expanded) {
  const StateGraph graph(tensor_ndim, src.PartialOps() | dst.PartialOps(), model);
  const VertexId s = graph.Intern(src);
  const VertexId t = graph.Intern(dst);

  uint64_t seq = 0;
  // Combine reads the sequence number the visitor just advanced for this edge.
  auto combine = [&seq](const Key& d, const Key& w) { return Key{d.cost + w.cost, seq}; };

  boost::typed_identity_property_map<VertexId> index;
  boost::vector_property_map<Key, decltype(index)> distance(index);
  boost::vector_property_map<VertexId, decltype(index)> predecessor(index);
  put(distance, s, Key{0.0, 0});
  put(predecessor, s, s);

  std::vector<bool> expanded;
  int64_t num_expanded = 0;
  SearchVisitor visitor(t, max_expanded, &expanded, &num_expanded, &seq);
  try {
    boost::dijkstra_shortest_paths_no_color_map_no_init(
        graph, s, predecessor, distance, EdgeCostMap(), index, KeyLess(), combine, Key(),
        Key{0.0, 0}, visitor);
  } catch (const ReachedDestination&) {
    GraphPath path;
    path.cost = get(distance, t).cost;
    path.expanded = num_expanded;
    for (VertexId v = t; v != s; v = get(predecessor, v)) path.states.push_back(graph.state(v));
    path.states.push_back(src);
    std::reverse(path.states.begin(), path.states.end());
    for (size_t i = 0; i + 1 < path.states.size(); ++i) {
      path.steps.push_back(EdgeBetween(path.states[i], path.states[i + 1], tensor_ndim,
                                       src.PartialOps() | dst.PartialOps()));
      path.costs.push_back(model.StepCost(path.states[i], path.steps.back()));
    }
    return path;
  } catch (const ReachedBound&) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the graph search expanded ", max_expanded,
        " states without reaching the destination; raise the bound (--max-states) or use the "
        "greedy planner"));
  }
  return absl::NotFoundError(absl::StrCat("no_path: ", dst.ToString(),
                                          " is not reachable from ", src.ToString()));
}

}  // namespace reshard
