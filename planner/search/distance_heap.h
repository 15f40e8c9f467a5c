// DistanceHeap: a 4-ary min-heap of vertices 0..n-1 keyed by tentative
// distance, with decrease-key, for a Dijkstra (native_graph_costs.h's
// tables): each vertex is in it at most once, so a table pops n entries,
// not one per improvement as a heap of (distance, vertex) pairs would.
//
//   DistanceHeap heap;
//   heap.Reset(n);
//   heap.Push(t, 0.0);
//   while (!heap.empty()) { uint32_t v = heap.Pop(); ... heap.Push(w, lower); }
#ifndef RESHARD_PLANNER_SEARCH_DISTANCE_HEAP_H_
#define RESHARD_PLANNER_SEARCH_DISTANCE_HEAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reshard {

class DistanceHeap {
 public:
  // Empty, for vertices 0..n-1.
  void Reset(size_t n) {
    heap_.clear();
    pos_.assign(n, kAbsent);
  }
  // Empty (as a Dijkstra leaves it), for vertices 0..n-1, n at least the
  // last Reset's: O(new vertices), for small Dijkstras on a large graph.
  void Grow(size_t n) {
    if (pos_.size() < n) pos_.resize(n, kAbsent);
  }
  bool empty() const { return heap_.empty(); }
  // Inserts v at key d, or lowers its key to d (d must not exceed it).
  void Push(uint32_t v, double d) {
    size_t i = pos_[v];
    if (i == kAbsent) {
      i = heap_.size();
      heap_.push_back({d, v});
    } else {
      heap_[i].d = d;
    }
    SiftUp(i);
  }
  // Removes a vertex of least key and returns it.
  uint32_t Pop() {
    const uint32_t v = heap_.front().v;
    pos_[v] = kAbsent;
    const Item last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      heap_.front() = last;
      SiftDown(0);
    }
    return v;
  }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  struct Item {
    double d;
    uint32_t v;
  };
  void Place(size_t i, const Item& item) {
    heap_[i] = item;
    pos_[item.v] = static_cast<uint32_t>(i);
  }
  // Four children a node: half the levels of a binary heap, and the
  // children of one node share a cache line or two.
  static constexpr size_t kArity = 4;
  void SiftUp(size_t i) {
    const Item item = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (!(item.d < heap_[parent].d)) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, item);
  }
  void SiftDown(size_t i) {
    const Item item = heap_[i];
    const size_t n = heap_.size();
    for (size_t first = kArity * i + 1; first < n; first = kArity * i + 1) {
      // The least child, without a branch per child (which goes either way
      // at random).
      size_t child = first;
      double least = heap_[first].d;
      const size_t end = std::min(first + kArity, n);
      for (size_t c = first + 1; c < end; ++c) {
        const bool less = heap_[c].d < least;
        child = less ? c : child;
        least = less ? heap_[c].d : least;
      }
      if (!(least < item.d)) break;
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, item);
  }

  std::vector<Item> heap_;
  std::vector<uint32_t> pos_;  // each vertex's index in heap_, or kAbsent
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_DISTANCE_HEAP_H_
