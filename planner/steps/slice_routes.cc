#include "planner/steps/slice_routes.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace reshard {

int64_t BoxElements(const Box& box) {
  int64_t n = 1;
  for (const Slice& s : box) n *= s.size;
  return n;
}

Box MeetBoxes(const Box& a, const Box& b, const Box& origin) {
  Box out(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    const int64_t begin = std::max(a[d].offset, b[d].offset);
    const int64_t end = std::min(a[d].offset + a[d].size, b[d].offset + b[d].size);
    if (end <= begin) return Box(a.size());
    out[d] = Slice{begin - origin[d].offset, end - begin};
  }
  return out;
}

bool BoxContains(const Box& outer, const Box& inner) {
  for (size_t d = 0; d < inner.size(); ++d) {
    if (inner[d].offset < outer[d].offset ||
        inner[d].offset + inner[d].size > outer[d].offset + outer[d].size) {
      return false;
    }
  }
  return true;
}

namespace {

// Lexicographic order of boxes by (offset, size) per dim: -1, 0 or 1.
int CompareBoxes(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d].offset != b[d].offset) return a[d].offset < b[d].offset ? -1 : 1;
    if (a[d].size != b[d].size) return a[d].size < b[d].size ? -1 : 1;
  }
  return 0;
}

// The distinct non-empty held boxes (classes), numbered in order of their
// first holder (spec §11.1's class order), each with its holders ascending:
// class k's box is held[first[k]], its holders holders[start[k] ..
// start[k + 1]); of[i] is participant i's class (-1: holds nothing).
struct Classes {
  std::vector<int64_t> first;
  std::vector<int64_t> start;
  std::vector<int64_t> holders;
  std::vector<int64_t> of;
  int64_t count() const { return static_cast<int64_t>(first.size()); }
  int64_t holder_count(int64_t k) const { return start[k + 1] - start[k]; }
};

// One tensor dim of the classes' boxes: their distinct extents on it,
// sorted by (offset, size), each with its classes ascending (extent e's
// classes are classes[start[e] .. start[e + 1])).
struct DimIndex {
  std::vector<Slice> extents;
  std::vector<int64_t> start;
  std::vector<int64_t> classes;
  // Whether the extents are pairwise disjoint (one layout's are: per tensor
  // dim its blocks' slices partition the extent). Then, sorted by offset,
  // their ends ascend too, and those meeting an interval are a contiguous run.
  bool disjoint = true;
};

// The indexes of one routing: every vector is cleared and refilled, so that
// a workspace kept between calls allocates only for a larger routing.
struct Workspace {
  Classes classes;
  std::vector<DimIndex> dims;
  std::vector<int64_t> order;  // ClassesOf's and IndexDim's sorts
  std::vector<std::pair<size_t, size_t>> runs;
  std::vector<int64_t> candidates;
};

// Sorting the participants by (box, index) puts each class's holders
// together in ascending order; the classes are then renumbered by their
// first holder, which is the numbering of a scan in participant order.
// Every vector is reserved to its bound (participants): pricing builds these
// once per distinct exchange price (spec §6.4), where growing them was most
// of its allocations. Into w->classes, whose vectors (and w's `order`,
// `runs`: scratch) are cleared first and keep their storage.
void ClassesOf(absl::Span<const Box> held, Workspace* w) {
  std::vector<int64_t>& order = w->order;
  order.clear();
  order.reserve(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    if (BoxElements(held[i]) != 0) order.push_back(static_cast<int64_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const int c = CompareBoxes(held[a], held[b]);
    return c != 0 ? c < 0 : a < b;
  });
  std::vector<std::pair<size_t, size_t>>& runs = w->runs;  // [begin, end) in `order`
  runs.clear();
  runs.reserve(order.size());
  for (size_t r = 0; r < order.size(); ++r) {
    if (r == 0 || CompareBoxes(held[order[r - 1]], held[order[r]]) != 0) runs.push_back({r, r});
    runs.back().second = r + 1;
  }
  std::sort(runs.begin(), runs.end(),
            [&](const auto& a, const auto& b) { return order[a.first] < order[b.first]; });
  Classes& c = w->classes;
  c.first.clear();
  c.start.clear();
  c.holders.clear();
  c.of.assign(held.size(), -1);
  c.first.reserve(runs.size());
  c.start.reserve(runs.size() + 1);
  c.holders.reserve(order.size());
  c.start.push_back(0);
  for (const auto& [begin, end] : runs) {
    c.first.push_back(order[begin]);
    for (size_t r = begin; r < end; ++r) {
      c.of[order[r]] = c.count() - 1;
      c.holders.push_back(order[r]);
    }
    c.start.push_back(static_cast<int64_t>(c.holders.size()));
  }
}

// Into *x (cleared first, storage kept), sorting in `scratch`.
void IndexDim(const Classes& c, absl::Span<const Box> held, size_t d, std::vector<int64_t>* scratch,
              DimIndex* x_out) {
  std::vector<int64_t>& order = *scratch;
  order.resize(c.count());
  std::iota(order.begin(), order.end(), 0);
  auto extent = [&](int64_t k) { return held[c.first[k]][d]; };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const Slice x = extent(a), y = extent(b);
    return std::tie(x.offset, x.size, a) < std::tie(y.offset, y.size, b);
  });
  DimIndex& x = *x_out;  // reserved to its bound, as ClassesOf's
  x.extents.clear();
  x.start.clear();
  x.classes.clear();
  x.disjoint = true;
  x.extents.reserve(order.size());
  x.start.reserve(order.size() + 1);
  x.classes.reserve(order.size());
  for (int64_t k : order) {
    if (x.extents.empty() || !(x.extents.back() == extent(k))) {
      if (!x.extents.empty() &&
          x.extents.back().offset + x.extents.back().size > extent(k).offset) {
        x.disjoint = false;
      }
      x.extents.push_back(extent(k));
      x.start.push_back(static_cast<int64_t>(x.classes.size()));
    }
    x.classes.push_back(k);
  }
  x.start.push_back(static_cast<int64_t>(x.classes.size()));
}

// The run of `x`'s extents that meet `w` (a non-empty slice), when they are
// disjoint (RunMeeting). Otherwise every extent (the caller tests each).
std::pair<int64_t, int64_t> Run(const DimIndex& x, const Slice& w) {
  if (!x.disjoint) return {0, static_cast<int64_t>(x.extents.size())};
  const auto [lo, hi] = RunMeeting(x.extents, w);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

// Step 1's pieces without their boxes: the piece is the class's box met with
// the receiver's wanted box; `sender` is chosen by steps 2 and 3.
struct Meeting {
  int64_t receiver;
  int64_t holder_class;
  int64_t elements;
  int64_t sender;
};

// The elements of `a` met with `b` (0: they do not meet).
int64_t MeetElements(const Box& a, const Box& b) {
  int64_t n = 1;
  for (size_t d = 0; d < a.size() && n != 0; ++d) n *= Overlap(a[d], b[d]);
  return n;
}

// The classes whose boxes may meet `w` (non-empty), ascending: those of the
// tensor dim whose run of extents (Run) holds the fewest classes. Exactly
// the old scan's set once each is tested (MeetElements): a box meets `w` iff
// it meets it on every dim, so no class outside the run meets `w`; every
// class has one extent per dim, so none is listed twice; and sorting puts
// them back in class order, the order step 1 scans them. (That order cannot
// change a sender: one receiver's demands are adjacent in step 3's order and
// their classes' holders are disjoint. It is kept so step 1 reads as §11.1.)
void CandidatesFor(const Classes& c, const std::vector<DimIndex>& dims, const Box& w,
                   std::vector<int64_t>* out) {
  out->clear();
  if (dims.empty()) {  // not indexed (or rank-0 boxes): every class, tested by the caller
    for (int64_t k = 0; k < c.count(); ++k) out->push_back(k);
    return;
  }
  size_t best = 0;
  std::pair<int64_t, int64_t> best_run = Run(dims[0], w[0]);
  for (size_t d = 1; d < dims.size(); ++d) {
    const std::pair<int64_t, int64_t> run = Run(dims[d], w[d]);
    const std::vector<int64_t>& s = dims[d].start;
    const std::vector<int64_t>& b = dims[best].start;
    if (s[run.second] - s[run.first] < b[best_run.second] - b[best_run.first]) {
      best = d;
      best_run = run;
    }
  }
  const DimIndex& x = dims[best];
  out->assign(x.classes.begin() + x.start[best_run.first],
              x.classes.begin() + x.start[best_run.second]);
  std::sort(out->begin(), out->end());
}

// Step 1's sender of receiver's piece of class k: the receiver itself for a
// local copy (it holds the class), the holder for a forced demand (step 2:
// the class has one holder), -1 for a demand step 3 chooses.
int64_t StepOneSender(const Classes& c, int64_t receiver, int64_t k) {
  if (c.of[receiver] == k) return receiver;
  return c.holder_count(k) == 1 ? c.holders[c.start[k]] : -1;
}

// Step 1: for each receiver ascending, each class ascending, the non-empty
// pieces, passed to `visit` as a Meeting with StepOneSender's sender.
// `w` holds ClassesOf(held) (w->classes) and the indexes it builds.
template <typename Visit>
void ForEachMeeting(absl::Span<const Box> held, absl::Span<const Box> wanted, Workspace* w,
                    Visit visit) {
  const Classes& c = w->classes;
  std::vector<DimIndex>& dims = w->dims;
  const size_t ndim = c.count() == 0 ? 0 : held[c.first[0]].size();
  // Few pairs of receivers and classes (a small group's exchange, most of
  // a cost matrix's prices): testing every class costs less than indexing.
  constexpr int64_t kIndexFromPairs = 512;
  const bool indexed = c.count() * static_cast<int64_t>(wanted.size()) > kIndexFromPairs;
  dims.resize(indexed ? ndim : 0);
  for (size_t d = 0; d < dims.size(); ++d) IndexDim(c, held, d, &w->order, &dims[d]);
  std::vector<int64_t>& candidates = w->candidates;
  candidates.clear();
  candidates.reserve(c.count());
  for (size_t j = 0; j < wanted.size() && c.count() != 0; ++j) {
    if (BoxElements(wanted[j]) == 0) continue;
    CandidatesFor(c, dims, wanted[j], &candidates);  // every class when not indexed
    const int64_t receiver = static_cast<int64_t>(j);
    for (int64_t k : candidates) {
      const int64_t elements = MeetElements(held[c.first[k]], wanted[j]);
      if (elements == 0) continue;
      visit(Meeting{receiver, k, elements, StepOneSender(c, receiver, k)});
    }
  }
}

// Spec §11.1 step 3: the least loaded holder; ties to the holder nearest the
// receiver by participant index (members of one host are neighbours), then
// the lower index.
int64_t ChooseSender(const Classes& c, int64_t k, int64_t receiver,
                     const std::vector<int64_t>& load) {
  // (distance, index) in one word, compared as the pair: both are rank
  // indices, far below 2^31.
  auto tie = [&](int64_t i) { return (std::llabs(i - receiver) << 32) | i; };
  int64_t best = c.holders[c.start[k]];
  int64_t best_load = load[best], best_tie = tie(best);
  for (int64_t h = c.start[k] + 1; h < c.start[k + 1]; ++h) {
    const int64_t i = c.holders[h];
    const int64_t l = load[i], t = tie(i);
    if (l < best_load || (l == best_load && t < best_tie)) {
      best = i;
      best_load = l;
      best_tie = t;
    }
  }
  return best;
}

// `choices` stably sorted by elements, descending, by comparisons.
std::vector<int64_t> SortedBySize(std::vector<int64_t> choices,
                                  const std::vector<Meeting>& meetings) {
  std::stable_sort(choices.begin(), choices.end(), [&](int64_t a, int64_t b) {
    return meetings[a].elements > meetings[b].elements;
  });
  return choices;
}

// `choices` (ascending indices into `meetings`) stably sorted by elements,
// descending: a counting sort over the distinct sizes, which are few (the
// blocks of a layout differ by at most one row per split), so this is linear
// where a comparison sort of every demand was the hot spot of pricing; past
// a few sizes, SortedBySize. `choices` itself where every size is one (most
// exchanges), else the order in *out.
const std::vector<int64_t>& LargestFirst(const std::vector<int64_t>& choices,
                                         const std::vector<Meeting>& meetings,
                                         std::vector<int64_t>* out) {
  constexpr size_t kFewSizes = 16;
  // Each choice's size as an index into `sizes`, in order of first sight.
  int64_t sizes[kFewSizes];
  size_t num_sizes = 0;
  thread_local std::vector<uint32_t> bucket;
  bucket.resize(choices.size());
  for (size_t x = 0; x < choices.size(); ++x) {
    const int64_t e = meetings[choices[x]].elements;
    const size_t at = std::find(sizes, sizes + num_sizes, e) - sizes;
    if (at == num_sizes) {
      if (num_sizes == kFewSizes) return *out = SortedBySize(choices, meetings);
      sizes[num_sizes++] = e;
    }
    bucket[x] = static_cast<uint32_t>(at);
  }
  if (num_sizes <= 1) return choices;  // one size: step 1's order
  // rank[b]: bucket b's place among the sizes, descending.
  uint32_t rank[kFewSizes];
  for (size_t b = 0; b < num_sizes; ++b) {
    rank[b] = static_cast<uint32_t>(
        std::count_if(sizes, sizes + num_sizes, [&](int64_t e) { return e > sizes[b]; }));
  }
  size_t next[kFewSizes + 1] = {};
  for (size_t x = 0; x < choices.size(); ++x) ++next[(bucket[x] = rank[bucket[x]]) + 1];
  for (size_t b = 1; b <= num_sizes; ++b) next[b] += next[b - 1];
  out->resize(choices.size());
  for (size_t x = 0; x < choices.size(); ++x) (*out)[next[bucket[x]]++] = choices[x];
  return *out;
}

// Step 3: the demands `choices` (indices into `meetings`, ascending: step
// 1's order), largest first, ties in that order (a stable sort), each to
// ChooseSender by `load` (the elements each holder sends so far, step 2's
// forced demands included, in any order: none is read before step 3).
void ChooseAmongReplicas(const Classes& c, const std::vector<int64_t>& choices,
                         std::vector<Meeting>* meetings, std::vector<int64_t>* load) {
  thread_local std::vector<int64_t> order;
  for (int64_t i : LargestFirst(choices, *meetings, &order)) {
    Meeting& d = (*meetings)[i];
    d.sender = ChooseSender(c, d.holder_class, d.receiver, *load);
    (*load)[d.sender] += d.elements;
  }
}

// Every meeting of step 1, in its order, with its sender.
std::vector<Meeting> RoutedMeetings(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                    Workspace* w) {
  const Classes& c = w->classes;
  std::vector<Meeting> meetings;
  std::vector<int64_t> load(held.size(), 0), choices;
  ForEachMeeting(held, wanted, w, [&](const Meeting& x) {
    if (x.sender < 0) choices.push_back(static_cast<int64_t>(meetings.size()));
    if (x.sender >= 0 && x.sender != x.receiver) load[x.sender] += x.elements;
    meetings.push_back(x);
  });
  ChooseAmongReplicas(c, choices, &meetings, &load);
  return meetings;
}

// The routes sorted by (receiver, sender), only those `participant`
// sends or receives when it is not -1. The meetings are by receiver already
// and a receiver meets each class (so each sender) once: sorting each
// receiver's meetings by sender is the whole sort, and the keys are unique.
std::vector<SliceRoute> RoutesOf(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                 int64_t participant) {
  Workspace w;
  ClassesOf(held, &w);
  const Classes& c = w.classes;
  const std::vector<Meeting> meetings = RoutedMeetings(held, wanted, &w);
  std::vector<int64_t> order(meetings.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<SliceRoute> routes;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {
    const int64_t receiver = meetings[order[begin]].receiver;
    for (end = begin; end < order.size() && meetings[order[end]].receiver == receiver;) ++end;
    std::sort(order.begin() + begin, order.begin() + end,
              [&](int64_t a, int64_t b) { return meetings[a].sender < meetings[b].sender; });
    for (size_t r = begin; r < end; ++r) {
      const Meeting& x = meetings[order[r]];
      if (participant >= 0 && x.sender != participant && x.receiver != participant) continue;
      const Box zero(wanted[x.receiver].size());
      routes.push_back({x.sender, x.receiver,
                        MeetBoxes(held[c.first[x.holder_class]], wanted[x.receiver], zero)});
    }
  }
  return routes;
}

// The busiest participants' load from what each sends and receives.
RouteLoad Busiest(const std::vector<int64_t>& sent, const std::vector<int64_t>& received,
                  const std::vector<int64_t>& sends, const std::vector<int64_t>& receives,
                  int64_t total_sent) {
  RouteLoad load;
  load.total_sent = total_sent;
  for (size_t i = 0; i < sent.size(); ++i) {
    load.max_sent = std::max(load.max_sent, sent[i]);
    load.max_received = std::max(load.max_received, received[i]);
    load.max_sent_plus_received = std::max(load.max_sent_plus_received, sent[i] + received[i]);
    load.max_messages = std::max({load.max_messages, sends[i], receives[i]});
  }
  return load;
}

}  // namespace

std::vector<SliceRoute> RouteSlices(absl::Span<const Box> held, absl::Span<const Box> wanted) {
  return RoutesOf(held, wanted, -1);
}

std::vector<SliceRoute> RouteSlicesOf(absl::Span<const Box> held, absl::Span<const Box> wanted,
                                      int64_t participant) {
  return RoutesOf(held, wanted, participant);
}

namespace {

// A held grid's classes (as ClassesOf's): one layout's non-empty slices are
// disjoint, so distinct non-empty held boxes are distinct tuples of table
// indices, and a tuple's code (mixed radix over the tables) names its class.
struct GridWorkspace {
  Classes classes;
  std::vector<int64_t> stride;         // per dim, in a tuple's code
  std::vector<int64_t> class_of_code;  // -1: no class
  std::vector<int64_t> next;           // GridClassesOf's scratch
  // Per dim, per wanted table entry: the run [first, second) of held table
  // entries meeting it (empty for an empty entry), and where in `overlaps`
  // (per dim) its entries' overlaps with it begin.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> runs;
  std::vector<std::vector<uint32_t>> overlaps_at;
  std::vector<std::vector<int64_t>> overlaps;
  // LoadOfGridRoutes' per participant counts, its step 3 demands and their
  // indices, kept between calls.
  std::vector<int64_t> sent, received, sends, receives;
  std::vector<Meeting> choices;
  std::vector<int64_t> all;
};

void GridClassesOf(const SliceGrid& held, int64_t participants, GridWorkspace* w) {
  const size_t ndim = held.table.size();
  int64_t codes = 1;
  w->stride.resize(ndim);
  for (size_t d = ndim; d-- > 0;) {
    w->stride[d] = codes;
    codes *= static_cast<int64_t>(held.table[d].size());
  }
  w->class_of_code.assign(codes, -1);
  Classes& c = w->classes;
  c.first.clear();
  c.of.assign(participants, -1);
  for (int64_t i = 0; i < participants; ++i) {
    int64_t code = 0;
    bool empty = false;
    for (size_t d = 0; d < ndim; ++d) {
      const uint32_t x = held.index[d][i];
      empty = empty || held.table[d][x].size == 0;
      code += x * w->stride[d];
    }
    if (empty) continue;
    int64_t& k = w->class_of_code[code];
    if (k < 0) {
      k = c.count();
      c.first.push_back(i);
    }
    c.of[i] = k;
  }
  // Each class's holders ascending: a counting sort of the participants.
  c.start.assign(c.first.size() + 1, 0);
  for (int64_t i = 0; i < participants; ++i) {
    if (c.of[i] >= 0) ++c.start[c.of[i] + 1];
  }
  for (size_t k = 0; k < c.first.size(); ++k) c.start[k + 1] += c.start[k];
  c.holders.resize(c.start.back());
  w->next.assign(c.start.begin(), c.start.end() - 1);
  for (int64_t i = 0; i < participants; ++i) {
    if (c.of[i] >= 0) c.holders[w->next[c.of[i]]++] = i;
  }
}

// Per dim, the run of held table entries meeting each wanted one: their
// offsets and ends ascend, so those meeting a slice are a run (its empty
// entries meet nothing).
void GridRuns(const SliceGrid& held, const SliceGrid& wanted, GridWorkspace* w) {
  const size_t ndim = held.table.size();
  w->runs.resize(ndim);
  w->overlaps_at.resize(ndim);
  w->overlaps.resize(ndim);
  for (size_t d = 0; d < ndim; ++d) {
    const std::vector<Slice>& h = held.table[d];
    w->runs[d].clear();
    w->overlaps_at[d].clear();
    w->overlaps[d].clear();
    for (const Slice& x : wanted.table[d]) {
      const auto [lo, hi] = RunMeeting(h, x);
      w->runs[d].push_back({static_cast<uint32_t>(lo), static_cast<uint32_t>(hi)});
      w->overlaps_at[d].push_back(static_cast<uint32_t>(w->overlaps[d].size()));
      for (size_t e = lo; e < hi; ++e) w->overlaps[d].push_back(Overlap(h[e], x));
    }
  }
}

// Receiver j's meetings (ForEachMeeting's) from grids: the classes whose
// tuples lie in the product of its dims' runs, each meeting the product of
// its dims' overlaps.
template <typename Visit>
void ForEachGridMeetingOf(const SliceGrid& held, const SliceGrid& wanted, int64_t j,
                          const GridWorkspace& w, Visit visit) {
  const Classes& c = w.classes;
  const size_t ndim = held.table.size();
  uint32_t at[kMaxTensorDims], lo[kMaxTensorDims], hi[kMaxTensorDims];
  const int64_t* overlap[kMaxTensorDims];  // of the run's entries: overlap[d][at - lo]
  bool empty = false;
  for (size_t d = 0; d < ndim; ++d) {
    const uint32_t x = wanted.index[d][j];
    std::tie(lo[d], hi[d]) = w.runs[d][x];
    overlap[d] = w.overlaps[d].data() + w.overlaps_at[d][x];
    at[d] = lo[d];
    empty = empty || lo[d] == hi[d];
  }
  if (empty || c.count() == 0) return;
  // In tuple order, not class order as step 1 visits them: a receiver's
  // meetings are adjacent in step 3's order and their classes' holders
  // disjoint, so their order changes no sender (CandidatesFor).
  while (true) {  // the product of the runs, the last dim fastest
    int64_t code = 0, elements = 1;
    for (size_t d = 0; d < ndim; ++d) {
      code += at[d] * w.stride[d];
      elements *= overlap[d][at[d] - lo[d]];
    }
    if (elements != 0) {
      const int64_t k = w.class_of_code[code];
      visit(Meeting{j, k, elements, StepOneSender(c, j, k)});
    }
    size_t d = ndim;
    while (d > 0 && ++at[d - 1] == hi[d - 1]) at[d - 1] = lo[d - 1], --d;
    if (d == 0) break;
  }
}

// ForEachMeeting's meetings from grids, for each receiver ascending.
template <typename Visit>
void ForEachGridMeeting(const SliceGrid& held, const SliceGrid& wanted, int64_t participants,
                        const GridWorkspace& w, Visit visit) {
  for (int64_t j = 0; j < participants; ++j) ForEachGridMeetingOf(held, wanted, j, w, visit);
}

// Calls visit(sender, receiver, elements) for each route of RouteSlices over
// the grids' boxes between two participants, without building a box.
// Streams step 1: local copies move nothing and forced demands are visited
// at once; only step 3's demands are kept, to be chosen (w->sent, each
// participant's elements sent, is its `load`).
template <typename Visit>
void ForEachGridRoute(const SliceGrid& held, const SliceGrid& wanted, int64_t participants,
                      GridWorkspace* w, Visit visit) {
  GridClassesOf(held, participants, w);
  GridRuns(held, wanted, w);
  w->sent.assign(participants, 0);
  std::vector<Meeting>& choices = w->choices;
  choices.clear();
  ForEachGridMeeting(held, wanted, participants, *w, [&](const Meeting& x) {
    if (x.sender < 0) choices.push_back(x);
    if (x.sender >= 0 && x.sender != x.receiver) {
      w->sent[x.sender] += x.elements;
      visit(x.sender, x.receiver, x.elements);
    }
  });
  w->all.resize(choices.size());
  std::iota(w->all.begin(), w->all.end(), 0);
  ChooseAmongReplicas(w->classes, w->all, &choices, &w->sent);
  for (const Meeting& x : choices) visit(x.sender, x.receiver, x.elements);
}

}  // namespace

RouteLoad LoadOfGridRoutes(const SliceGrid& held, const SliceGrid& wanted, int64_t participants) {
  thread_local GridWorkspace w;
  std::vector<int64_t>& received = w.received;
  std::vector<int64_t>& sends = w.sends;
  std::vector<int64_t>& receives = w.receives;
  for (std::vector<int64_t>* v : {&received, &sends, &receives}) v->assign(participants, 0);
  int64_t total_sent = 0;
  ForEachGridRoute(held, wanted, participants, &w,
                   [&](int64_t sender, int64_t receiver, int64_t elements) {
                     received[receiver] += elements;
                     ++sends[sender];
                     ++receives[receiver];
                     total_sent += elements;
                   });
  return Busiest(w.sent, received, sends, receives, total_sent);
}

ReceiptByPlace ReceiptOfGridMember(const SliceGrid& held, const SliceGrid& wanted,
                                   int64_t participants, int64_t receiver,
                                   absl::FunctionRef<bool(int64_t)> near) {
  thread_local GridWorkspace w;
  GridClassesOf(held, participants, &w);
  GridRuns(held, wanted, &w);
  const Classes& c = w.classes;
  ReceiptByPlace receipt;
  ForEachGridMeetingOf(held, wanted, receiver, w, [&](const Meeting& x) {
    if (x.sender == receiver) return;  // a local copy
    bool any_near = false, any_far = false;
    for (int64_t h = c.start[x.holder_class]; h < c.start[x.holder_class + 1]; ++h) {
      (near(c.holders[h]) ? any_near : any_far) = true;
    }
    (!any_far ? receipt.near_only : !any_near ? receipt.far_only : receipt.either) += x.elements;
  });
  return receipt;
}

void VisitRouteSizesOfGrids(const SliceGrid& held, const SliceGrid& wanted, int64_t participants,
                            absl::FunctionRef<void(const RouteSize&)> visit) {
  thread_local GridWorkspace w;
  ForEachGridRoute(held, wanted, participants, &w,
                   [&](int64_t sender, int64_t receiver, int64_t elements) {
                     visit({sender, receiver, elements});
                   });
}

std::vector<RouteSize> RouteSizesOfPairs(absl::Span<const SliceRoute> routes) {
  std::vector<RouteSize> sizes;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, size_t> index;
  for (const SliceRoute& r : routes) {
    if (r.sender == r.receiver) continue;
    const auto [it, added] = index.try_emplace({r.sender, r.receiver}, sizes.size());
    if (added) sizes.push_back({r.sender, r.receiver, 0});
    sizes[it->second].elements += BoxElements(r.box);
  }
  return sizes;
}

RouteLoad LoadOfRoutes(absl::Span<const SliceRoute> routes, int64_t participants) {
  std::vector<int64_t> sent(participants, 0), received(participants, 0);
  std::vector<int64_t> sends(participants, 0), receives(participants, 0);
  int64_t total_sent = 0;
  for (const RouteSize& r : RouteSizesOfPairs(routes)) {
    sent[r.sender] += r.elements;
    received[r.receiver] += r.elements;
    ++sends[r.sender];
    ++receives[r.receiver];
    total_sent += r.elements;
  }
  return Busiest(sent, received, sends, receives, total_sent);
}

}  // namespace reshard
