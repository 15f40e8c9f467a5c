// Helpers of the search bounds' abstract graphs over masks of mesh dims
// (leave_set_graph.h, native_leave_set_graph.h, shard_set_blocks.h).
#ifndef RESHARD_PLANNER_COSTS_BOUNDS_ABSTRACT_DISTANCES_H_
#define RESHARD_PLANNER_COSTS_BOUNDS_ABSTRACT_DISTANCES_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace reshard {

// An abstract graph's edges by target, each from a state at the price
// prices[slot] of the destination at hand. The native bound's edges
// (native_leave_set_graph.h) depend only on the mesh rank and the
// destination's masks, their prices on everything else: so they are listed
// once (AbstractEdgeCache) and each destination's fill walks the list with
// its own prices, instead of the branches that find them (a quarter of an
// easy native plan's time, docs/design/planner-speed.md). The compat graph's few edges
// per state are found faster than listed anew for each of a batch's
// destination masks.
class AbstractEdges {
 public:
  struct Edge {
    uint16_t from;
    uint16_t slot;
  };
  // for_each_edge_into(y, edge) calls edge(x, slot) for every edge x -> y.
  template <typename ForEachEdgeInto>
  AbstractEdges(unsigned states, ForEachEdgeInto for_each_edge_into) : first_(states + 1) {
    for (unsigned y = 0; y < states; ++y) {
      first_[y] = static_cast<uint32_t>(edges_.size());
      for_each_edge_into(y, [&](unsigned x, unsigned slot) {
        edges_.push_back({static_cast<uint16_t>(x), static_cast<uint16_t>(slot)});
      });
    }
    first_[states] = static_cast<uint32_t>(edges_.size());
  }
  const Edge* begin(unsigned y) const { return edges_.data() + first_[y]; }
  const Edge* end(unsigned y) const { return edges_.data() + first_[y + 1]; }

 private:
  std::vector<uint32_t> first_;
  std::vector<Edge> edges_;
};

// A cache of a graph's AbstractEdges, by mesh rank (at most 4) and the
// destination's Shard and Partial masks: at most 120 keys, each listed on
// first use (a few thousand edges of 4 bytes). One per thread (thread_local).
class AbstractEdgeCache {
 public:
  // make() returns the AbstractEdges of this key.
  template <typename Make>
  const AbstractEdges& Get(int ndim, unsigned dst_shard, unsigned dst_partial, Make make) {
    std::unique_ptr<AbstractEdges>& edges = edges_[ndim][dst_shard][dst_partial];
    if (edges == nullptr) edges = std::make_unique<AbstractEdges>(make());
    return *edges;
  }

 private:
  static constexpr int kMaxDims = 4;
  static constexpr int kMasks = 1 << kMaxDims;
  std::unique_ptr<AbstractEdges> edges_[kMaxDims + 1][kMasks][kMasks];
};

// Calls f(sub) for every subset of `set` (bits), the empty one last.
template <typename F>
void ForEachSubset(unsigned set, F f) {
  for (unsigned sub = set;; sub = (sub - 1) & set) {
    f(sub);
    if (sub == 0) return;
  }
}

// Shortest distances to a set of abstract states, on reversed edges: a
// label-correcting search (first in, first out) from every state whose
// to_go[] is finite on entry (0 at the destination, or a last step's price;
// queued cheapest first),
// over `states` (at most kMaxStates) states; edges_into(y, relax) calls
// relax(x, price) for every edge x -> y. No heap: a state is queued again
// when its distance drops. At its fixpoint every edge has
// to_go[x] <= price + to_go[y], as Dijkstra's, and on a few hundred states
// it costs fewer instructions and far fewer mispredicted branches
// (docs/design/planner-speed.md).
template <unsigned kMaxStates, typename EdgesInto>
void FillAbstractDistances(unsigned states, double* to_go, EdgesInto edges_into) {
  bool queued[kMaxStates] = {};
  uint16_t queue[kMaxStates];  // a ring: a state is in it at most once
  unsigned head = 0, size = 0;
  auto push = [&](unsigned x) {
    if (queued[x]) return;
    queued[x] = true;
    queue[(head + size++) % kMaxStates] = static_cast<uint16_t>(x);
  };
  // Cheapest first, so that the first visits come nearly in Dijkstra's order
  // and fewer states are visited again (the native graph's many exchange
  // seeds: 11% fewer instructions on a search that ends at once).
  uint16_t seeds[kMaxStates];
  unsigned num_seeds = 0;
  for (unsigned x = 0; x < states; ++x) {
    if (to_go[x] < std::numeric_limits<double>::infinity()) {
      seeds[num_seeds++] = static_cast<uint16_t>(x);
    }
  }
  std::stable_sort(seeds, seeds + num_seeds,
                   [&](uint16_t a, uint16_t b) { return to_go[a] < to_go[b]; });
  for (unsigned i = 0; i < num_seeds; ++i) push(seeds[i]);
  while (size > 0) {
    const unsigned y = queue[head];
    head = (head + 1) % kMaxStates;
    --size;
    queued[y] = false;
    const double d = to_go[y];
    edges_into(y, [&](unsigned x, double price) {
      const double via = price + d;
      if (via < to_go[x]) {
        to_go[x] = via;
        push(x);
      }
    });
  }
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BOUNDS_ABSTRACT_DISTANCES_H_
