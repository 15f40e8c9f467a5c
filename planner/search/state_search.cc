#include "planner/search/state_search.h"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>
#include <boost/graph/graph_traits.hpp>
#include <boost/property_map/property_map.hpp>
#include <cassert>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/base/optimization.h"

namespace reshard {
namespace {

// Relative slack on C* (spec §5.1): costs are sums of a few dozen doubles, so
// two sums of one real cost differ far less than this.
constexpr double kBudgetSlack = 1e-9;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

const char* SearchLimitField(SearchLimit limit) {
  switch (limit) {
    case SearchLimit::kNone:
      return "none";
    case SearchLimit::kExpandedStates:
      return "max_expanded_states";
    case SearchLimit::kSearchEdges:
      return "max_search_edges";
  }
  return "none";
}

StateSearch::Pass StateSearch::Pass::Pruned(double c_star) {
  Pass pass;
  pass.budget = c_star + kBudgetSlack * std::max(1.0, std::fabs(c_star));
  return pass;
}

StateSearch::StateSearch(const EdgeSource& edges, const BoundCostModel& model,
                         const RemainingCostBound* bound)
    : edge_source_(edges), model_(model), bound_(bound) {
  // States: enough for most pruned searches, small enough for easy plans.
  // Edges: a native search (spec §5.2) keeps ~20k (about 80 per expanded
  // state); regrowing and copying them was a third of its time on the hard
  // 4-D cases (docs/design/planner-speed.md). The reservation is not touched until used,
  // so easy plans do not pay for it.
  ids_.reserve(256);
  vertices_.reserve(256);
  labels_.reserve(256);
  edges_.reserve(32768);
}

// The implicit graph Boost searches: a state's out-edges are the priced
// edges GenerateEdges cached when the visitor popped it.
struct StateSearch::Graph {
  using vertex_descriptor = VertexId;
  using edge_descriptor = Edge;
  using directed_category = boost::directed_tag;
  using edge_parallel_category = boost::allow_parallel_edge_tag;
  struct traversal_category : boost::incidence_graph_tag {};
  using degree_size_type = size_t;
  using vertices_size_type = size_t;
  using edges_size_type = size_t;
  static VertexId null_vertex() { return kNone; }

  // A state's out-edges that the pass relaxes: of those to states not popped
  // (OutEdges lists them in open_edges_), the ones NextRelaxed picks, priced
  // as Boost reaches them; or, in a plain Dijkstra pass, the list of
  // ListRelaxed. Boost examines an edge right after dereferencing it and
  // before the next increment, so candidate_ is then its key. Boost never
  // sees the others; a full Dijkstra (CostMatrix's rows, spec §5.1 item 6)
  // leaves more than half of the edges it meets unrelaxed. Popping a state
  // changes no other's popped, so the list holds while Boost walks it.
  class out_edge_iterator {
   public:
    out_edge_iterator(const OpenEdge* at, const OpenEdge* end, StateSearch* search,
                      const Pass* pass, bool priced)
        : at_(at), end_(end), search_(search), pass_(pass), priced_(priced) {
      SkipUnrelaxed();
    }
    const Edge& operator*() const { return *at_->edge; }
    out_edge_iterator& operator++() {
      ++at_;
      SkipUnrelaxed();
      return *this;
    }
    bool operator==(const out_edge_iterator& other) const { return at_ == other.at_; }
    bool operator!=(const out_edge_iterator& other) const { return at_ != other.at_; }

   private:
    void SkipUnrelaxed() {
      if (!priced_) {
        at_ = search_->NextRelaxed(at_, end_, *pass_);
      } else if (at_ != end_) {
        search_->candidate_ = at_->key;
      }
    }
    const OpenEdge* at_;
    const OpenEdge* end_;
    StateSearch* search_;
    const Pass* pass_;
    bool priced_;  // the list holds only edges to relax, with their keys (ListRelaxed)
  };

  std::pair<out_edge_iterator, out_edge_iterator> OutEdges(VertexId u) const;
  friend std::pair<out_edge_iterator, out_edge_iterator> out_edges(VertexId u, const Graph& g) {
    return g.OutEdges(u);
  }
  friend VertexId source(const Edge& e, const Graph&) { return e.from; }
  friend VertexId target(const Edge& e, const Graph&) { return e.to; }

  StateSearch* search;
  const Pass* pass;
};

inline std::pair<StateSearch::Graph::out_edge_iterator, StateSearch::Graph::out_edge_iterator>
StateSearch::Graph::OutEdges(VertexId u) const {
  const Vertex& v = search->vertices_[u];
  const auto [first, last] = search->OutEdgeRange(u);
  std::vector<OpenEdge>& open = search->open_edges_;
  if (open.size() < static_cast<size_t>(last - first)) open.resize(last - first);
  const bool priced =
      v.plain_edges && !pass->astar && search->bound_ == nullptr && pass->budget == Pass().budget;
  size_t n = 0;
  if (priced) {
    n = search->ListRelaxed(u, first, last);
  } else {
    // The edges to states not popped, without a branch per edge: whether a
    // target is popped goes either way at random.
    for (const Edge* e = first; e != last; ++e) {
      open[n].edge = e;
      n += !search->labels_[e->to].popped;
    }
  }
  const OpenEdge* begin = open.data();
  return {out_edge_iterator(begin, begin + n, search, pass, priced),
          out_edge_iterator(begin + n, begin + n, search, pass, priced)};
}

// Each state's Key (distance map) and parent (predecessor map) live in its
// Label.
template <typename T, typename Of>
struct StateSearch::FieldMap {
  using key_type = VertexId;
  using value_type = T;
  using reference = T;
  using category = boost::read_write_property_map_tag;
  T& At(VertexId v) const { return of(search->labels_[v]); }
  friend T get(const FieldMap& m, VertexId v) { return m.At(v); }
  friend void put(const FieldMap& m, VertexId v, const T& value) { m.At(v) = value; }
  StateSearch* search;
  Of of;  // a stateless lambda: the field is known at compile time
};

// Boost relaxes an edge to combine(key of its source, weight); the
// out_edge_iterator has priced the edge (Relaxes), so the weight is a
// constant zero (which also keeps Boost's negative-weight check quiet for any
// model) and Combine hands Boost the price.
struct StateSearch::Combine {
  Key operator()(const Key&, const Key&) const { return search->candidate_; }
  const StateSearch* search;
};

class StateSearch::Visitor : public boost::default_dijkstra_visitor {
 public:
  Visitor(StateSearch* search, int64_t max_expanded, int64_t max_edges)
      : search_(search), max_expanded_(max_expanded), max_edges_(max_edges) {}
  void examine_vertex(VertexId u, const Graph&) { search_->Pop(u, max_expanded_, max_edges_); }

 private:
  StateSearch* search_;
  int64_t max_expanded_;
  int64_t max_edges_;
};

// Pops the smallest (priority, seq): g (Dijkstra) or g + bound (A*), then
// the sequence number of the edge that set it. A*: (priority, g, seq), so
// that a cheaper g wins a rounding tie of g + bound: then a pass pops every
// state at its exact minimum sum, whatever the bound (spec §5.2 item 2).
// Popped keys are infinite (Pop): seq alone orders them, as Boost's stop
// test needs.
template <bool kAstar>
struct StateSearch::KeyLess {
  bool operator()(const Key& a, const Key& b) const {
    if constexpr (kAstar) {
      if (a.priority != b.priority) return a.priority < b.priority;
      if (a.g != b.g && a.priority < Key().priority) return a.g < b.g;
      return a.seq < b.seq;
    } else {
      // Without branches: the heap's comparisons go either way at random,
      // and most of a full Dijkstra's time is its heap (CostMatrix's rows).
      return (a.priority < b.priority) | ((a.priority == b.priority) & (a.seq < b.seq));
    }
  }
};

std::pair<const StateSearch::Edge*, const StateSearch::Edge*> StateSearch::OutEdgeRange(
    VertexId u) const {
  const Vertex& v = vertices_[u];
  if (v.deferred != kNone) {
    const Deferred& d = deferred_[v.deferred];
    return {&d.edge, &d.edge + (d.priced ? 1 : 0)};
  }
  const Edge* first = edges_.data() + v.first_edge;
  return {first, first + v.num_edges};
}

StateSearch::VertexId StateSearch::Find(const DistState& s) const {
  auto it = ids_.find(s.bits());
  return it == ids_.end() ? kNone : it->second;
}

inline void StateSearch::AddVertex(const DistState& s, double h) {
  vertices_.push_back(
      {s, h, bound_version_, /*has_edges=*/false, /*plain_edges=*/false, 0, 0, kNone});
  labels_.push_back({Key(), kNone, /*popped=*/false, /*goal=*/false, /*stand_in=*/false});
}

StateSearch::VertexId StateSearch::Intern(const DistState& s) {
  auto [it, inserted] = ids_.try_emplace(s.bits(), static_cast<VertexId>(vertices_.size()));
  if (inserted) AddVertex(s, bound_ != nullptr ? (*bound_)(s) : 0.0);
  return it->second;
}

StateSearch::VertexId StateSearch::InternBelow(double upper, double least, const DistState& s) {
  if (least <= upper) {
    const VertexId known = Find(s);
    const double h = known != kNone ? H(known) : bound_ != nullptr ? (*bound_)(s) : 0.0;
    if (least + h <= upper) {
      if (known != kNone) return known;
      ids_.emplace(s.bits(), static_cast<VertexId>(vertices_.size()));
      AddVertex(s, h);
      return static_cast<VertexId>(vertices_.size() - 1);
    }
  }
  ++edges_beyond_goal_;
  return kNone;
}

inline double StateSearch::UpperBound() const {
  if (!open_edges_only_ || goal_ == kNone) return kInfinity;
  return std::min(labels_[goal_].key.g, incumbent_);
}

void StateSearch::SetBound(const RemainingCostBound* bound) {
  bound_ = bound;
  ++bound_version_;
}

double StateSearch::H(VertexId v) {
  if (bound_ == nullptr) return 0.0;  // Dijkstra (CostMatrix's rows): no bound to cache
  Vertex& vertex = vertices_[v];
  if (vertex.h_version != bound_version_) {
    vertex.h = (*bound_)(vertex.state);
    vertex.h_version = bound_version_;
  }
  return vertex.h;
}

void StateSearch::Reset() {
  for (Label& label : labels_)
    label = {Key(), kNone, /*popped=*/false, /*goal=*/false, label.stand_in};
  seq_ = 0;
  expanded_ = 0;
  outcome_ = Outcome::kExhausted;
  limit_hit_ = SearchLimit::kNone;
}

bool StateSearch::GenerateEdges(VertexId u, int64_t max_edges) {
  // A copy: interning below may move the vertices.
  const DistState from = vertices_[u].state;
  steps_.clear();
  edge_source_.Append(from, &steps_);
  // Checked before anything is kept: the budget bounds this search's memory.
  if (edges() + static_cast<int64_t>(steps_.size()) > max_edges) return false;
  const auto first = static_cast<uint32_t>(edges_.size());
  generated_edges_ += static_cast<int64_t>(steps_.size());
  const double upper = UpperBound();
  const double g = labels_[u].key.g;
  const unsigned from_set = from.ShardSet();
  auto lower = [&](const Step& step, const DistState& to) {
    return bound_ != nullptr ? bound_->StepLowerBound(from_set, step, to) : 0.0;
  };
  for (const Step& step : steps_) {
    const DistState to_state = ApplyStep(from, step);
    const VertexId to = upper == kInfinity
                            ? Intern(to_state)
                            : InternBelow(upper, g + lower(step, to_state), to_state);
    if (to == kNone || (open_edges_only_ && labels_[to].popped)) continue;
    const std::optional<double> bound = model_.DeferredCostBound(from, step);
    if (bound.has_value()) {
      edges_.push_back({u, AddDeferred(u, to, step, *bound), *bound});
    } else {
      edges_.push_back({u, to, model_.StepCost(from, step)});
    }
  }
  Vertex& vertex = vertices_[u];
  vertex.has_edges = true;
  vertex.first_edge = first;
  vertex.num_edges = static_cast<uint32_t>(edges_.size()) - first;
  vertex.plain_edges = PlainEdges(first, vertex.num_edges);
  return true;
}

bool StateSearch::PlainEdges(uint32_t first, uint32_t num) {
  // One pass: a native state has dozens of edges, so no pairwise test.
  seen_.resize(vertices_.size(), 0);
  if (++seen_mark_ == 0) {  // the marks ran out: clear them
    std::fill(seen_.begin(), seen_.end(), 0);
    seen_mark_ = 1;
  }
  for (uint32_t i = first; i < first + num; ++i) {
    const VertexId to = edges_[i].to;
    if (labels_[to].stand_in || seen_[to] == seen_mark_) return false;
    seen_[to] = seen_mark_;
  }
  return true;
}

StateSearch::VertexId StateSearch::AddDeferred(VertexId u, VertexId to, const Step& step,
                                               double bound) {
  const auto p = static_cast<VertexId>(vertices_.size());
  const auto index = static_cast<uint32_t>(deferred_.size());
  deferred_.push_back({step, Edge{p, to, bound}, /*priced=*/false, /*refined=*/false});
  // A copy: pushing below may move the vertices. The stand-in prices the
  // step from u's state.
  const DistState from = vertices_[u].state;
  labels_.push_back({Key(), kNone, /*popped=*/false, /*goal=*/false, /*stand_in=*/true});
  vertices_.push_back({from, 0.0, bound_version_,
                       /*has_edges=*/true, /*plain_edges=*/false, 0, 0, index});
  return p;
}

void StateSearch::PriceDeferred(VertexId p) {
  const uint32_t index = vertices_[p].deferred;
  Deferred& d = deferred_[index];
  // A popped target takes no edge this pass; a later pass prices it then.
  if (d.priced || labels_[d.edge.to].popped) return;
  if (!d.refined) {
    d.refined = true;
    const std::optional<double> refined = model_.RefinedCostBound(vertices_[p].state, d.step);
    if (refined.has_value() && *refined > d.edge.cost) {
      // The second stand-in keeps p's source g (RelaxesToStandIn), so the
      // target still gets exactly g + StepCost.
      const VertexId second = AddDeferred(p, d.edge.to, d.step, *refined);
      deferred_.back().refined = true;
      deferred_[index].edge = Edge{p, second, *refined};
      deferred_[index].priced = true;
      return;
    }
  }
  d.edge.cost = model_.StepCost(vertices_[p].state, d.step);
  d.priced = true;
}

inline void StateSearch::Pop(VertexId u, int64_t max_expanded, int64_t max_edges) {
  labels_[u].popped = true;
  if (vertices_[u].deferred != kNone) {  // a stand-in: no state, not an expansion
    PriceDeferred(u);
    return;
  }
  if (labels_[u].goal && --goals_left_ == 0) {
    outcome_ = Outcome::kReached;
  } else if (expanded_ >= max_expanded) {
    outcome_ = Outcome::kBound;
    limit_hit_ = SearchLimit::kExpandedStates;
  } else if (!vertices_[u].has_edges && !GenerateEdges(u, max_edges)) {
    outcome_ = Outcome::kBound;
    limit_hit_ = SearchLimit::kSearchEdges;
  } else {
    ++expanded_;
    return;
  }
  // Boost's Dijkstra ends when the state it pops is unreachable (infinite
  // key); g stays for CostTo.
  Key& key = labels_[u].key;
  key.priority = Key().priority;
  key.seq = Key().seq;
}

// Every edge to a state not popped runs through this loop: seq_ and
// candidate_ are written once per call, not per edge.
const StateSearch::OpenEdge* StateSearch::NextRelaxed(const OpenEdge* at, const OpenEdge* end,
                                                      const Pass& pass) {
  uint64_t seq = seq_;
  for (; at != end; ++at) {
    const Edge& e = *at->edge;
    const Label& to = labels_[e.to];  // not popped (OutEdges)
    if (ABSL_PREDICT_FALSE(to.stand_in)) {
      seq_ = seq;
      if (RelaxesToStandIn(e, pass)) return at;
      seq = seq_;
      continue;
    }
    const double g = labels_[e.from].key.g + e.cost;
    const double h = H(e.to);
    if (g + h > pass.budget) continue;  // it cannot lie on a path of cost C* (spec §5.1)
    ++seq;                              // spec §5: every edge to a not-yet-expanded state
    const Key key{pass.astar ? g + h : g, seq, g};
    // As Boost's relax decides.
    if (pass.astar ? KeyLess<true>()(key, to.key) : KeyLess<false>()(key, to.key)) {
      seq_ = seq;
      candidate_ = key;
      return at;
    }
  }
  seq_ = seq;
  return end;
}

size_t StateSearch::ListRelaxed(VertexId u, const Edge* first, const Edge* last) {
  uint64_t seq = seq_;
  const double g_from = labels_[u].key.g;
  size_t n = 0;
  for (const Edge* e = first; e != last; ++e) {
    const Label& to = labels_[e->to];
    const bool open = !to.popped;
    seq += open;  // spec §5, as in NextRelaxed (h = 0, no budget)
    const double g = g_from + e->cost;
    open_edges_[n] = {e, Key{g, seq, g}};
    n += open & KeyLess<false>()(open_edges_[n].key, to.key);
  }
  seq_ = seq;
  return n;
}

bool StateSearch::RelaxesToStandIn(const Edge& e, const Pass& pass) {
  const Label& to = labels_[e.to];
  const VertexId target = deferred_[vertices_[e.to].deferred].edge.to;
  if (labels_[target].popped) return false;
  // e.cost is the step's bound and the priority g + bound + h(real target);
  // the stand-in keeps its source's g, so that the priced edge gives the
  // target exactly g + StepCost.
  const double g_from = labels_[e.from].key.g;
  const double g = g_from + e.cost;
  const double h = H(target);
  if (g + h > pass.budget) return false;  // as in NextRelaxed
  ++seq_;
  candidate_ = Key{pass.astar ? g + h : g, seq_, g_from};
  return pass.astar ? KeyLess<true>()(candidate_, to.key) : KeyLess<false>()(candidate_, to.key);
}

template <bool kAstar>
void StateSearch::Search(VertexId s, const Pass& pass, int64_t max_expanded, int64_t max_edges) {
  Visitor visitor(this, max_expanded, max_edges);
  auto parent_of = [](Label& label) -> VertexId& { return label.parent; };
  auto key_of = [](Label& label) -> Key& { return label.key; };
  const Key zero{0.0, 0, 0.0};
  boost::dijkstra_shortest_paths_no_color_map_no_init(
      Graph{this, &pass}, s, FieldMap<VertexId, decltype(parent_of)>{this, parent_of},
      FieldMap<Key, decltype(key_of)>{this, key_of}, boost::static_property_map<Key, Edge>(zero),
      boost::typed_identity_property_map<VertexId>(), KeyLess<kAstar>(), Combine{this}, Key(), zero,
      visitor);
}

// Each popped vertex relaxes its out-edges (a stand-in's one edge, once
// priced) by priority alone; an edge to a stand-in keeps its source's g, as
// in Boost's passes (RelaxesToStandIn), so targets get g + StepCost.
void StateSearch::SearchDistances(VertexId s, int64_t max_expanded, int64_t max_edges) {
  distance_heap_.Reset(vertices_.size());
  distance_heap_.Push(s, 0.0);
  while (!distance_heap_.empty()) {
    const VertexId u = distance_heap_.Pop();
    Pop(u, max_expanded, max_edges);
    if (outcome_ != Outcome::kExhausted) return;
    distance_heap_.Grow(vertices_.size());  // Pop may have interned states
    const auto [first, last] = OutEdgeRange(u);
    const double g = labels_[u].key.g;
    for (const Edge* e = first; e != last; ++e) {
      Label& to = labels_[e->to];
      const double priority = g + e->cost;
      if (to.popped || !(priority < to.key.priority)) continue;
      to.key = Key{priority, 0, to.stand_in ? g : priority};
      to.parent = u;
      distance_heap_.Push(e->to, priority);
    }
  }
}

StateSearch::Outcome StateSearch::Run(const DistState& src, absl::Span<const DistState> goals,
                                      const Pass& pass, int64_t max_expanded, int64_t max_edges) {
  assert(!open_edges_only_ || runs_ == 0);  // KeepOnlyOpenEdges: one pass
  ++runs_;
  Reset();
  goals_left_ = 0;
  goal_ = goals.size() == 1 ? Intern(goals[0]) : kNone;
  for (const DistState& goal : goals) {
    Label& label = labels_[Intern(goal)];
    if (!label.goal) ++goals_left_;  // a goal listed twice is popped once
    label.goal = true;
  }

  const VertexId s = Intern(src);
  const double start_h = H(s);
  labels_[s].key = Key{pass.astar ? start_h : 0.0, 0, 0.0};
  if (pass.distances_only) {
    SearchDistances(s, max_expanded, max_edges);
  } else if (pass.astar) {
    Search<true>(s, pass, max_expanded, max_edges);
  } else {
    Search<false>(s, pass, max_expanded, max_edges);
  }
  return outcome_ == Outcome::kExhausted && goals_left_ == 0 ? Outcome::kReached : outcome_;
}

bool StateSearch::Popped(const DistState& s) const {
  const VertexId v = Find(s);
  return v != kNone && labels_[v].popped;
}

double StateSearch::CostTo(const DistState& s) const { return labels_[Find(s)].key.g; }

std::vector<DistState> StateSearch::PathTo(const DistState& s) const {
  std::vector<DistState> path;
  for (VertexId v = Find(s); v != kNone; v = labels_[v].parent) {
    if (vertices_[v].deferred == kNone) path.push_back(vertices_[v].state);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

unsigned StateSearch::PartialOpsOnPath(const DistState& s) const {
  unsigned ops = 0;
  for (VertexId v = Find(s); v != kNone; v = labels_[v].parent) {
    ops |= vertices_[v].state.PartialOps();  // a stand-in holds its source's state
  }
  return ops;
}

}  // namespace reshard
