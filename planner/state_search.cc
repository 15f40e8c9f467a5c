#include "planner/state_search.h"

#include <algorithm>
#include <cmath>

#include "planner/transitions.h"

namespace reshard {
namespace {

// Relative slack on C* (spec §5.1): costs are sums of a few dozen doubles, so
// two sums of one real cost differ far less than this.
constexpr double kBudgetSlack = 1e-9;

}  // namespace

StateSearch::Pass StateSearch::Pass::Pruned(double c_star) {
  Pass pass;
  pass.budget = c_star + kBudgetSlack * std::max(1.0, std::fabs(c_star));
  return pass;
}

StateSearch::StateSearch(int tensor_ndim, unsigned partial_ops, const BoundCostModel& model,
                         const RemainingCostBound* bound)
    : tensor_ndim_(tensor_ndim), partial_ops_(partial_ops), model_(model), bound_(bound) {
  // Enough for most pruned searches: few regrowths, small enough for easy plans.
  ids_.reserve(256);
  vertices_.reserve(256);
  heap_.reserve(256);
  edges_.reserve(1024);
}

StateSearch::VertexId StateSearch::Find(const DistState& s) const {
  auto it = ids_.find(s.bits());
  return it == ids_.end() ? kNone : it->second;
}

StateSearch::VertexId StateSearch::Intern(const DistState& s) {
  auto [it, inserted] = ids_.try_emplace(s.bits(), static_cast<VertexId>(vertices_.size()));
  if (inserted) {
    vertices_.push_back({s, bound_ != nullptr ? (*bound_)(s) : 0.0,
                         std::numeric_limits<double>::infinity(), 0, kNone, /*popped=*/false,
                         /*has_edges=*/false, 0, 0});
  }
  return it->second;
}

void StateSearch::Reset() {
  for (Vertex& v : vertices_) {
    v.g = std::numeric_limits<double>::infinity();
    v.parent = kNone;
    v.popped = false;
  }
  heap_.clear();
  seq_ = 0;
  expanded_ = 0;
}

namespace {
// std::*_heap keep the largest first; the pass pops the smallest (priority, seq).
struct Later {
  template <typename E>
  bool operator()(const E& a, const E& b) const {
    return a.priority > b.priority || (a.priority == b.priority && a.seq > b.seq);
  }
};
}  // namespace

void StateSearch::Push(VertexId v, double g, double priority, VertexId parent) {
  Vertex& vertex = vertices_[v];
  vertex.g = g;
  vertex.seq = seq_;
  vertex.parent = parent;
  heap_.push_back({priority, seq_, v});
  std::push_heap(heap_.begin(), heap_.end(), Later());
}

void StateSearch::GenerateEdges(VertexId u) {
  // A copy: interning below may move the vertices.
  const DistState from = vertices_[u].state;
  steps_.clear();
  AppendTransitions(from, tensor_ndim_, partial_ops_, &steps_);
  const auto first = static_cast<uint32_t>(edges_.size());
  for (const Step& step : steps_) {
    edges_.push_back({Intern(ApplyStep(from, step)), model_.StepCost(from, step)});
  }
  Vertex& vertex = vertices_[u];
  vertex.has_edges = true;
  vertex.first_edge = first;
  vertex.num_edges = static_cast<uint32_t>(edges_.size()) - first;
}

void StateSearch::Expand(VertexId u, const Pass& pass) {
  if (!vertices_[u].has_edges) GenerateEdges(u);
  const Vertex& from = vertices_[u];
  const double g = from.g;
  for (uint32_t i = from.first_edge; i < from.first_edge + from.num_edges; ++i) {
    const Edge& edge = edges_[i];
    const Vertex& to = vertices_[edge.to];
    if (to.popped) continue;
    const double to_g = g + edge.cost;
    // It cannot lie on a path of cost C* (spec §5.1): not pushed.
    if (to_g + to.h > pass.budget) continue;
    ++seq_;  // spec §5: every edge to a not-yet-expanded state
    // An entry that does not lower g could never pop before the one there.
    if (to_g < to.g) Push(edge.to, to_g, pass.astar ? to_g + to.h : to_g, u);
  }
}

StateSearch::Outcome StateSearch::Run(const DistState& src, absl::Span<const DistState> goals,
                                      const Pass& pass, int64_t max_expanded) {
  Reset();
  std::vector<VertexId> goal_ids;
  for (const DistState& goal : goals) goal_ids.push_back(Intern(goal));
  std::sort(goal_ids.begin(), goal_ids.end());
  goal_ids.erase(std::unique(goal_ids.begin(), goal_ids.end()), goal_ids.end());
  size_t goals_left = goal_ids.size();

  const VertexId s = Intern(src);
  Push(s, 0.0, pass.astar ? vertices_[s].h : 0.0, kNone);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    const Entry e = heap_.back();
    heap_.pop_back();
    Vertex& v = vertices_[e.v];
    if (v.popped || e.seq != v.seq) continue;  // superseded or already expanded
    v.popped = true;
    if (std::binary_search(goal_ids.begin(), goal_ids.end(), e.v) && --goals_left == 0) {
      return Outcome::kReached;
    }
    if (expanded_ >= max_expanded) return Outcome::kBound;
    ++expanded_;
    Expand(e.v, pass);
  }
  return goals_left == 0 ? Outcome::kReached : Outcome::kExhausted;
}

bool StateSearch::Popped(const DistState& s) const {
  const VertexId v = Find(s);
  return v != kNone && vertices_[v].popped;
}

double StateSearch::CostTo(const DistState& s) const { return vertices_[Find(s)].g; }

std::vector<DistState> StateSearch::PathTo(const DistState& s) const {
  std::vector<DistState> path;
  for (VertexId v = Find(s); v != kNone; v = vertices_[v].parent) {
    path.push_back(vertices_[v].state);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace reshard
