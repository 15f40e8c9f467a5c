#include "planner/costs/leave_set_graph.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

namespace reshard {

namespace {

// A binary min-heap of abstract states by their distance, with decrease-key:
// each state enters once, so a pop sifts through the frontier only.
class StateHeap {
 public:
  explicit StateHeap(const double* key) : key_(key) {
    std::fill(std::begin(pos_), std::end(pos_), kAbsent);
  }
  bool empty() const { return size_ == 0; }
  bool done(unsigned x) const { return pos_[x] == kDone; }
  // x's key has dropped: x enters, or moves up.
  void Lower(unsigned x) {
    if (pos_[x] == kAbsent) {
      pos_[x] = static_cast<uint16_t>(size_);
      heap_[size_++] = static_cast<uint16_t>(x);
    }
    SiftUp(pos_[x]);
  }
  unsigned Pop() {
    const unsigned top = heap_[0];
    pos_[top] = kDone;
    if (--size_ > 0) {
      Place(heap_[size_], 0);
      SiftDown(0);
    }
    return top;
  }

 private:
  static constexpr uint16_t kAbsent = 0xffff;
  static constexpr uint16_t kDone = 0xfffe;
  void Place(unsigned x, unsigned i) {
    heap_[i] = static_cast<uint16_t>(x);
    pos_[x] = static_cast<uint16_t>(i);
  }
  void SiftUp(unsigned i) {
    const unsigned x = heap_[i];
    while (i > 0 && key_[x] < key_[heap_[(i - 1) / 2]]) {
      Place(heap_[(i - 1) / 2], i);
      i = (i - 1) / 2;
    }
    Place(x, i);
  }
  void SiftDown(unsigned i) {
    const unsigned x = heap_[i];
    for (unsigned child = 2 * i + 1; child < size_; child = 2 * i + 1) {
      if (child + 1 < size_ && key_[heap_[child + 1]] < key_[heap_[child]]) ++child;
      if (!(key_[heap_[child]] < key_[x])) break;
      Place(heap_[child], i);
      i = child;
    }
    Place(x, i);
  }
  const double* key_;
  uint16_t heap_[LeaveSetGraph::kMaxStates];
  uint16_t pos_[LeaveSetGraph::kMaxStates];
  unsigned size_ = 0;
};

}  // namespace

LeaveSetGraph::LeaveSetGraph(const DistState& dst, const BoundCostModel& model)
    : ndim_(dst.ndim()) {
  for (int m = 0; m < ndim_; ++m) {
    dst_shard_ |= dst.placement(m).is_shard() ? 1u << m : 0u;
    dst_partial_ |= dst.placement(m).is_partial() ? 1u << m : 0u;
  }
  FillPrices(model);
  FillToGo();
}

void LeaveSetGraph::FillToGo() {
  std::fill(to_go_, to_go_ + (1u << (2 * ndim_)), std::numeric_limits<double>::infinity());
  StateHeap heap(to_go_);
  to_go_[dst_shard_] = 0;
  heap.Lower(dst_shard_);
  while (!heap.empty()) {
    const unsigned y = heap.Pop();
    const double d = to_go_[y];
    ForEachEdgeInto(y, [&](unsigned x, double price) {
      const double via = price + d;
      if (via < to_go_[x]) {
        to_go_[x] = via;
        heap.Lower(x);
      }
    });
  }
}

void LeaveSetGraph::FillPrices(const BoundCostModel& model) {
  for (unsigned set = 0; set < (1u << ndim_); ++set) {
    for (int m = 0; m < ndim_; ++m) {
      auto at = [&](StepKind kind) { return model.LowerBoundAt(set, kind, m); };
      prices_[set * ndim_ + m] = {at(StepKind::kAllToAll),  at(StepKind::kAllGather),
                                  at(StepKind::kAllReduce), at(StepKind::kReduceScatter),
                                  at(StepKind::kChunk),     at(StepKind::kPartition)};
    }
  }
}

// The compat steps on mesh dim m (spec §4) and what they do to m's bits
// (s: in the shard set, l: in the leave set). An R is never in the leave
// set; a Shard or a Partial lands in it unless dst holds one there too, and
// a Shard always does where dst holds none (x below: s = 1, l = 0 exists
// only where dst holds a Shard). Edges into y, from x, priced on x's shard
// set:
//   s = 1 in y: chunk from R, reduce_scatter from a Partial (x: s = 0); and
//     where l = 0, all_to_all from x = y with l = 1 (an all_to_all into the
//     leave set is left out: it must be undone, and from x the gather it
//     leads to is an edge of its own);
//   s = 0, l = 0 (an R, or a Partial dst holds): all_gather from a Shard,
//     all_reduce from a Partial that must leave;
//   s = 0, l = 1 (a Partial that must leave): partition from R.
// Abstract states no real state maps to (a Partial dst holds where no step
// can make one) get edges too; they only lower distances.
template <typename Relax>
void LeaveSetGraph::ForEachEdgeInto(unsigned y, Relax relax) const {
  const unsigned shard_set = y & ((1u << ndim_) - 1);
  for (int m = 0; m < ndim_; ++m) {
    const unsigned s = 1u << m;
    const unsigned l = s << ndim_;
    const bool dst_shard = (dst_shard_ & s) != 0;
    if (y & s) {
      if (!dst_shard && !(y & l)) continue;  // no state maps to y
      if (!(y & l)) relax(y | l, prices_[shard_set * ndim_ + m].all_to_all);
      const unsigned x = (y ^ s) & ~l;
      const Prices& from = prices_[(shard_set ^ s) * ndim_ + m];
      relax(x, from.chunk);
      relax(x | l, from.reduce_scatter);
      if (dst_partial_ & s) relax(x, from.reduce_scatter);
    } else if (!(y & l)) {
      const double all_gather = prices_[(shard_set | s) * ndim_ + m].all_gather;
      if (dst_shard) relax(y | s, all_gather);
      relax(y | s | l, all_gather);
      relax(y | l, prices_[shard_set * ndim_ + m].all_reduce);
    } else {
      relax(y ^ l, prices_[shard_set * ndim_ + m].partition);
    }
  }
}

}  // namespace reshard
