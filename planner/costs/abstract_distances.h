// Helpers of the search bounds' abstract graphs over masks of mesh dims
// (leave_set_graph.h, native_leave_set_graph.h, shard_set_blocks.h).
#ifndef RESHARD_PLANNER_COSTS_ABSTRACT_DISTANCES_H_
#define RESHARD_PLANNER_COSTS_ABSTRACT_DISTANCES_H_

#include <algorithm>
#include <cstdint>
#include <limits>

namespace reshard {

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
// (bench/README.md).
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

#endif  // RESHARD_PLANNER_COSTS_ABSTRACT_DISTANCES_H_
