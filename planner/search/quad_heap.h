// QuadHeap: a 4-ary min-heap of small items, for NativeGraphCosts' forward
// searches (spec §5.2 item 6), which push and pop a few dozen entries per
// pair: a 4-ary heap is half as deep as a binary one and its four children
// share a cache line, so a pop moves an item through fewer levels.
//
//   QuadHeap<Entry, PopsFirst> heap;  // PopsFirst()(a, b): a pops before b
//   heap.Push(entry);
//   while (!heap.empty()) { Entry e = heap.Pop(); ... }
#ifndef RESHARD_PLANNER_SEARCH_QUAD_HEAP_H_
#define RESHARD_PLANNER_SEARCH_QUAD_HEAP_H_

#include <cstddef>
#include <vector>

namespace reshard {

template <typename T, typename PopsFirst>
class QuadHeap {
 public:
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  void clear() { items_.clear(); }
  // An item no other pops before (the heap must not be empty).
  const T& top() const { return items_.front(); }

  void Push(const T& item) {
    size_t i = items_.size();
    items_.push_back(item);
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (!PopsFirst()(item, items_[parent])) break;
      items_[i] = items_[parent];
      i = parent;
    }
    items_[i] = item;
  }

  // Removes and returns top() (the heap must not be empty).
  T Pop() {
    const T top = items_.front();
    const T last = items_.back();
    items_.pop_back();
    const size_t n = items_.size();
    if (n == 0) return top;
    size_t i = 0;
    for (size_t first = 1; first < n; first = i * kArity + 1) {
      size_t best = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t c = first + 1; c < end; ++c) {
        if (PopsFirst()(items_[c], items_[best])) best = c;
      }
      if (!PopsFirst()(items_[best], last)) break;
      items_[i] = items_[best];
      i = best;
    }
    items_[i] = last;
    return top;
  }

 private:
  static constexpr size_t kArity = 4;
  std::vector<T> items_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_QUAD_HEAP_H_
