#include "planner/search/native_graph_costs.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "planner/search/edge_source.h"
#include "planner/search/native_transitions.h"

namespace reshard {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

NativeGraphCosts::NativeGraphCosts(const DeviceMesh& mesh, int tensor_ndim, unsigned partial_ops,
                                   const BoundCostModel& model, const SearchLimits& limits)
    : mesh_(mesh),
      tensor_ndim_(tensor_ndim),
      partial_ops_(partial_ops),
      model_(model),
      limits_(limits),
      routing_limit_(RoutingLimitApplies(mesh)),
      stages_(StagingGroups(mesh, model.rails_per_host())),
      first_edge_{0} {}

NativeGraphCosts::VertexId NativeGraphCosts::Intern(const DistState& s) {
  auto [it, inserted] = ids_.try_emplace(s.bits(), static_cast<VertexId>(states_.size()));
  if (inserted) {
    states_.push_back(s);
    ops_.push_back(s.PartialOps());
  }
  return it->second;
}

NativeGraphCosts::Edge NativeGraphCosts::MakeEdge(const DistState& from, const Step& step) {
  const VertexId to = Intern(ApplyStep(from, step));
  // The refined bound where the model has one: at least the deferred bound,
  // and cheap since its terms are kept (ExchangeLoadBoundOf), so asking for
  // it at once costs less than a deferred bound and then the refined one
  // where a table or a search needs it (docs/design/planner-speed.md).
  std::optional<double> bound = model_.RefinedCostBound(from, step);
  if (!bound.has_value()) bound = model_.DeferredCostBound(from, step);
  if (!bound.has_value()) return {model_.StepCost(from, step), to, kPriced};
  steps_of_.push_back(step);
  return {*bound, to, static_cast<uint32_t>(steps_of_.size() - 1)};
}

void NativeGraphCosts::Price(VertexId from, Edge* e) {
  if (e->step == kPriced) return;
  const double bound = e->cost;
  e->cost = model_.StepCost(states_[from], steps_of_[e->step]);
  e->step = kPriced;
  priced_.push_back({from, e->to, bound, e->cost});
}

// Generates u's goal-free out-edges (u is the next state to expand), as
// NativeEdges without a memory limit would.
bool NativeGraphCosts::Expand(VertexId u) {
  const DistState from = states_[u];  // a copy: interning may move states_
  steps_.clear();
  AppendGoalFreeTransitions(from, tensor_ndim_, partial_ops_, &steps_);
  AppendStagedForms(stages_, model_.rails_per_host(), 0, &steps_);
  for (const Step& step : steps_) {
    if (routing_limit_ && ExceedsRoutingLimit(from, step, mesh_)) continue;
    edges_.push_back(MakeEdge(from, step));
  }
  first_edge_.push_back(static_cast<uint32_t>(edges_.size()));
  // A search of one pair expands at most every state but its goal and holds
  // at most these edges plus its goal's (AddGoal; spec §5.2 item 4).
  return static_cast<int64_t>(states_.size()) <= limits_.max_expanded_states &&
         static_cast<int64_t>(edges_.size()) <= limits_.max_search_edges;
}

// Expands every state from `first_state` on, and the states they reach.
bool NativeGraphCosts::ExpandFrom(size_t first_state) {
  for (size_t u = first_state; u < states_.size(); ++u) {
    if (!Expand(static_cast<VertexId>(u))) {
      Drop();
      return false;
    }
  }
  return true;
}

bool NativeGraphCosts::AddReachable(const DistState& src) {
  if (too_big_) return false;
  if (ids_.contains(src.bits())) return true;  // every state here is expanded
  const size_t old_states = states_.size();
  Intern(src);
  return ExpandFrom(old_states);
}

bool NativeGraphCosts::AddGoal(const DistState& goal) {
  if (!AddReachable(goal)) return false;
  const VertexId t = ids_.find(goal.bits())->second;
  Target& target = targets_[t];
  // Goal edges may reach new states, whose goal edges are then wanted too.
  while (target.num_vertices != states_.size()) {
    const size_t old_states = states_.size();
    FillGoalEdges(t, &target);
    if (!ExpandFrom(old_states)) return false;  // targets_ is gone
  }
  target.too_big = target.too_big || static_cast<int64_t>(edges_.size() + target.edges.size()) >
                                         limits_.max_search_edges;
  return !target.too_big;
}

// Its pairs are searched alone from now on: free what it held.
void NativeGraphCosts::Drop() {
  too_big_ = true;
  ids_ = {};
  states_ = {};
  ops_ = {};
  orders_ = {};
  first_edge_ = {0};
  edges_ = {};
  steps_of_ = {};
  reverse_for_ = 0;
  first_in_ = {};
  in_edges_ = {};
  targets_ = {};
}

void NativeGraphCosts::BuildReverse() {
  if (reverse_for_ == states_.size()) return;
  const size_t n = states_.size();
  first_in_.assign(n + 1, 0);
  for (const Edge& e : edges_) ++first_in_[e.to + 1];
  for (size_t v = 0; v < n; ++v) first_in_[v + 1] += first_in_[v];
  in_edges_.resize(edges_.size());
  std::vector<uint32_t> next(first_in_.begin(), first_in_.end() - 1);
  for (VertexId u = 0; u < n; ++u) {
    for (uint32_t i = first_edge_[u]; i < first_edge_[u + 1]; ++i) {
      in_edges_[next[edges_[i].to]++] = {edges_[i].cost, u, kPriced};
    }
  }
  reverse_for_ = n;
}

// t's goal edges out of each state not yet given them (spec §4.2 items 10's
// goal orders, 12 and 13), with NativeEdges' routing limit; the matrix has
// no memory limit. States only join the graph, so the CSR only grows.
void NativeGraphCosts::FillGoalEdges(VertexId t, Target* target) {
  const GoalTransitions goal(states_[t], tensor_ndim_);
  const size_t n = states_.size();  // MakeEdge may intern more
  // Each state's orders, read once per target.
  for (size_t u = orders_.size(); u < n; ++u) {
    orders_.push_back(ShardOrders::Of(states_[u], tensor_ndim_));
  }
  if (target->first.empty()) target->first.push_back(0);
  for (VertexId u = static_cast<VertexId>(target->num_vertices); u < n; ++u) {
    const DistState from = states_[u];  // a copy: MakeEdge interns
    steps_.clear();
    goal.Append(from, orders_[u], &steps_);
    AppendStagedForms(stages_, model_.rails_per_host(), 0, &steps_);
    for (const Step& step : steps_) {
      if (!routing_limit_ || !ExceedsRoutingLimit(from, step, mesh_)) {
        target->edges.push_back(MakeEdge(from, step));
      }
    }
    target->first.push_back(static_cast<uint32_t>(target->edges.size()));
  }
  target->num_vertices = n;
}

// A Dijkstra towards t over the reverse edges, goal-free and t's: h(u) <=
// cost + h(v) on every edge, so the scaled table is a consistent bound.
void NativeGraphCosts::FillDistances(VertexId t, Target* target) {
  BuildReverse();
  const size_t n = states_.size();
  goal_first_in_.assign(n + 1, 0);
  for (const Edge& e : target->edges) ++goal_first_in_[e.to + 1];
  for (size_t v = 0; v < n; ++v) goal_first_in_[v + 1] += goal_first_in_[v];
  goal_in_edges_.resize(target->edges.size());
  std::vector<uint32_t> next(goal_first_in_.begin(), goal_first_in_.end() - 1);
  for (VertexId u = 0; u < n; ++u) {
    for (uint32_t i = target->first[u]; i < target->first[u + 1]; ++i) {
      goal_in_edges_[next[target->edges[i].to]++] = {target->edges[i].cost, u, kPriced};
    }
  }
  goal_in_for_ = t;
  std::vector<double>& dist = target->dist;
  dist.assign(n, kInfinity);
  dist[t] = 0;
  distance_heap_.Reset(n);
  distance_heap_.Push(t, 0.0);
  while (!distance_heap_.empty()) {
    const VertexId v = distance_heap_.Pop();
    const double d = dist[v];
    ForEachInEdge(v, [&](const Edge& in) {
      const double c = in.cost + d;
      if (c < dist[in.to]) {
        dist[in.to] = c;
        distance_heap_.Push(in.to, c);
      }
    });
  }
  target->h_for = n;
  target->greedy.assign(n, kUnchosen);
}

// Prices only rise, so the states whose table distance took a priced edge
// (its source, and each state whose distance took an edge to one of those)
// may lie farther now; every other distance stands. An edge took u's
// distance where it is tight: d(u) = w + d(v), the very sum the table made.
size_t NativeGraphCosts::MarkRaised(const Target& target) {
  const std::vector<double>& dist = target.dist;
  const size_t n = states_.size();
  if (++affected_pass_ == 0) {
    std::fill(affected_mark_.begin(), affected_mark_.end(), 0);
    affected_pass_ = 1;
  }
  affected_mark_.resize(n, 0);
  affected_.resize(n);
  const size_t budget = kRepriceBudget * n - std::min(kRepriceBudget * n, target.repriced);
  size_t count = 0;
  auto mark = [&](VertexId v) {
    if (affected_mark_[v] == affected_pass_) return;
    affected_mark_[v] = affected_pass_;
    affected_[count++] = v;
  };
  for (const PricedEdge& e : priced_) {
    const bool took = e.old_cost + dist[e.to] == dist[e.from];
    if (took && e.new_cost - e.old_cost > kRepriceRaise * dist[e.from]) mark(e.from);
  }
  for (size_t i = 0; i < count && count <= budget; ++i) {
    const VertexId y = affected_[i];
    ForEachInEdge(y, [&](const Edge& in) {
      if (in.cost + dist[y] == dist[in.to]) mark(in.to);
    });
  }
  return count;
}

// The marked states' distances found again, by a Dijkstra among them from
// their edges to the rest (as Ramalingam and Reps' dynamic shortest paths
// do for a raised edge), so that later pairs' bounds see the prices. Each
// is still a distance over edges at their price or below it, so the table
// stays a consistent bound (spec §5.2 item 6).
void NativeGraphCosts::Reprice(VertexId t, Target* target) {
  if (goal_in_for_ != t) return;  // another target's goal in-edges: keep the table
  const size_t count = MarkRaised(*target);
  target->repriced += count;
  if (target->repriced > kRepriceBudget * states_.size()) return;
  std::vector<double>& dist = target->dist;
  const auto marked = [&](VertexId v) { return affected_mark_[v] == affected_pass_; };
  for (size_t i = 0; i < count; ++i) dist[affected_[i]] = kInfinity;
  distance_heap_.Grow(states_.size());
  for (size_t i = 0; i < count; ++i) {
    const VertexId x = affected_[i];
    ForEachOutEdge(x, target, [&](const Edge& e) {
      if (!marked(e.to)) dist[x] = std::min(dist[x], e.cost + dist[e.to]);
    });
    if (dist[x] != kInfinity) distance_heap_.Push(x, dist[x]);
  }
  while (!distance_heap_.empty()) {
    const VertexId y = distance_heap_.Pop();
    const double d = dist[y];
    ForEachInEdge(y, [&](const Edge& in) {
      const double c = in.cost + d;
      if (marked(in.to) && c < dist[in.to]) {
        dist[in.to] = c;
        distance_heap_.Push(in.to, c);
      }
    });
  }
}

void NativeGraphCosts::Push(const Entry& entry) {
  // t's key (g, g) only drops, from upper_ on: an entry above it would pop
  // after t.
  if (Beyond(entry.priority)) return;
  heap_.push_back(entry);
  std::push_heap(heap_.begin(), heap_.end(), Later());
}

void NativeGraphCosts::Relax(VertexId w, double g) {
  if (Popped(w) || H(w) == kInfinity || (Reached(w) && !(g < g_[w]))) return;
  const double priority = g + H(w);
  if (Beyond(priority)) return;
  stamp_[w] = pass_;
  g_[w] = g;
  Push({priority, g, w, kNoEdge});
}

// The forward sum of one path from s to t (infinite if none is found): at
// each state the edge least in cost plus h, priced. A* returns the least
// such sum over paths (spec §5.2 item 6), so t pops at most at this key and
// entries above it never pop first: Search drops them unpushed. With h the
// exact distance over bounds, the path is mostly a cheapest one.
double NativeGraphCosts::UpperBound(VertexId s, VertexId t, Target* target) {
  double g = 0;
  VertexId u = s;
  for (size_t steps = 0; u != t; ++steps) {
    if (steps == kMaxUpperBoundSteps) return kInfinity;  // bounds may tie around a cycle
    Edge* best = GreedyEdge(u, target);
    // A restricted pass (Cost) may not take the whole graph's choice.
    if (best != nullptr && (ops_[best->to] & ~allowed_) != 0) best = AllowedGreedyEdge(u, target);
    if (best == nullptr) return kInfinity;
    g += best->cost;
    u = best->to;
  }
  return g;
}

uint32_t NativeGraphCosts::LeastEdge(VertexId u, const Target& target, unsigned ops) const {
  uint32_t choice = kNoEdge;
  double best_f = kInfinity;
  auto consider = [&](const Edge& e, uint32_t i) {
    if ((ops_[e.to] & ~ops) != 0) return;
    const double f = e.cost + H(e.to);
    if (f < best_f) best_f = f, choice = i;
  };
  for (uint32_t i = first_edge_[u]; i < first_edge_[u + 1]; ++i) consider(edges_[i], i);
  for (uint32_t i = target.first[u]; i < target.first[u + 1]; ++i) {
    consider(target.edges[i], i | kGoalEdgeBit);
  }
  return choice;
}

// u's edge least in cost plus h, priced; chosen once per table, since any
// path's sum serves UpperBound (pricing only raises other edges' costs).
NativeGraphCosts::Edge* NativeGraphCosts::GreedyEdge(VertexId u, Target* target) {
  uint32_t& choice = target->greedy[u];
  if (choice == kUnchosen) {
    dist_ = &target->dist;
    choice = LeastEdge(u, *target, ~0u);
    if (choice != kNoEdge) Price(u, EdgeOf(choice, target));
  }
  return choice == kNoEdge ? nullptr : EdgeOf(choice, target);
}

// GreedyEdge among the edges to states of the pass's Partial ops, not kept.
NativeGraphCosts::Edge* NativeGraphCosts::AllowedGreedyEdge(VertexId u, Target* target) {
  dist_ = &target->dist;
  const uint32_t choice = LeastEdge(u, *target, allowed_);
  if (choice == kNoEdge) return nullptr;
  Price(u, EdgeOf(choice, target));
  return EdgeOf(choice, target);
}

// An edge out of u, popped at g: relaxed, or while not priced, a stand-in
// keyed by its bound as StateSearch makes one (spec §5.2 item 7).
void NativeGraphCosts::Visit(VertexId u, double g, uint32_t choice, Target* target) {
  const Edge* edge = EdgeOf(choice, target);
  if (edge->step == kPriced) return Relax(edge->to, g + edge->cost);
  const VertexId w = edge->to;
  if (Popped(w) || H(w) == kInfinity) return;
  Push({g + edge->cost + H(w), g, u, choice});
}

void NativeGraphCosts::PopStandIn(const Entry& e, Target* target) {
  Edge* edge = EdgeOf(e.edge, target);
  if (Popped(edge->to)) return;
  Price(e.vertex, edge);
  Relax(edge->to, e.g + edge->cost);
}

// Spec §5.2 item 2's A* from s to t, with the target's table as the bound:
// it pops t at the exact minimum g (item 6), having popped little else.
double NativeGraphCosts::Search(VertexId s, VertexId t, Target* target) {
  if (++pass_ == kPoppedBit) {  // the stamps ran out: clear them
    std::fill(stamp_.begin(), stamp_.end(), 0);
    pass_ = 1;
  }
  stamp_.resize(states_.size(), 0);
  g_.resize(states_.size());
  dist_ = &target->dist;
  t_ = t;
  heap_.clear();
  upper_ = kInfinity;
  if (H(s) != kInfinity) upper_ = UpperBound(s, t, target);
  Relax(s, 0.0);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    const Entry e = heap_.back();
    heap_.pop_back();
    if (e.edge != kNoEdge) {
      PopStandIn(e, target);
      continue;
    }
    if (Popped(e.vertex)) continue;
    if (e.g > g_[e.vertex]) continue;  // stale
    if (e.vertex == t) return e.g;
    stamp_[e.vertex] = pass_ | kPoppedBit;
    // Most edges lead past t's key: dropped here, as Visit would drop them
    // (the same key, summed in the same order), without its other checks.
    // t's key as of now: it may drop during the loop, which Visit sees.
    const double limit = Reached(t_) ? std::min(upper_, g_[t_]) : upper_;
    auto visit = [&](const Edge& edge, uint32_t choice) {
      if ((ops_[edge.to] & ~allowed_) != 0) return;  // off the pair's graph
      if (!(e.g + edge.cost + H(edge.to) > limit)) Visit(e.vertex, e.g, choice, target);
    };
    for (uint32_t i = first_edge_[e.vertex]; i < first_edge_[e.vertex + 1]; ++i)
      visit(edges_[i], i);
    for (uint32_t i = target->first[e.vertex]; i < target->first[e.vertex + 1]; ++i) {
      visit(target->edges[i], i | kGoalEdgeBit);
    }
  }
  return kInfinity;
}

std::optional<double> NativeGraphCosts::Cost(const DistState& src, const DistState& dst) {
  const auto s = ids_.find(src.bits());
  const auto t = ids_.find(dst.bits());
  if (s == ids_.end() || t == ids_.end()) return std::nullopt;
  Target& target = targets_[t->second];
  if (target.h_for != states_.size()) FillDistances(t->second, &target);
  // The pair's graph: the states holding only its Partial ops (spec §4 case
  // 6 adds R -> P edges for those alone; every other edge is the same).
  allowed_ = src.PartialOps() | dst.PartialOps();
  priced_.clear();
  const double cost = Search(s->second, t->second, &target);
  if (!priced_.empty()) Reprice(t->second, &target);
  if (cost == kInfinity) return std::nullopt;
  return cost;
}

void NativeGraphCosts::DropGoal(const DistState& goal) {
  const auto t = ids_.find(goal.bits());
  if (t == ids_.end()) return;
  if (goal_in_for_ == t->second) goal_in_for_ = kNoVertex;
  targets_.erase(t->second);
}

}  // namespace reshard
