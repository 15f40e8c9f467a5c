#include "planner/steps/permute_exchange.h"

#include <algorithm>
#include <vector>

#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

// Every member's block as a grid: per tensor dim the group's slices over its
// splits in `in` (GroupSliceGrid), into *grid, whose vectors keep their
// storage.
void FillGrid(const DistState& in, MeshDimSet group, const DeviceMesh& mesh,
              absl::Span<const int64_t> logical, SliceGrid* grid) {
  grid->table.resize(logical.size());
  grid->index.resize(logical.size());
  for (size_t d = 0; d < logical.size(); ++d) {
    GroupSliceGrid(mesh, group, GroupSplitsIn(in, group, static_cast<int>(d)), logical[d],
                   &grid->table[d], &grid->index[d]);
  }
}

// The same blocks as boxes of the logical tensor, before (after = false) or
// after the step.
std::vector<Box> Blocks(const DistState& state, const Step& step, const DeviceMesh& mesh,
                        absl::Span<const int64_t> logical, bool after) {
  SliceGrid grid;
  FillGrid(after ? ApplyStep(state, step) : state, step.group, mesh, logical, &grid);
  std::vector<Box> blocks(mesh.GroupSize(step.group), Box(logical.size()));
  for (size_t d = 0; d < logical.size(); ++d) {
    for (size_t j = 0; j < blocks.size(); ++j) blocks[j][d] = grid.table[d][grid.index[d][j]];
  }
  return blocks;
}

std::vector<int64_t> Counts(const std::vector<Box>& boxes) {
  std::vector<int64_t> counts;
  for (const Box& b : boxes) counts.push_back(BoxElements(b));
  return counts;
}

std::vector<int64_t> Sizes(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.size);
  return out;
}

// Tensor dim d's nested chunks of `length` over `splits` (spec §2): the
// member at `indices` on the splits holds NestedChunk(length, sizes,
// indices). Calls visit(slice) for each combination of indices, first the
// first member's (all 0), the last split fastest, so in order of offset
// (empty chunks sit at their parent's end), until visit returns false.
template <typename Visit>
void ForEachChunk(const DeviceMesh& mesh, const MeshDimList& splits, int64_t length, Visit visit) {
  int64_t sizes[kMaxMeshDims];
  int64_t indices[kMaxMeshDims] = {};
  const size_t n = splits.size();
  for (size_t i = 0; i < n; ++i) sizes[i] = mesh.size(splits[i]);
  while (true) {
    if (!visit(
            NestedChunk(length, absl::MakeConstSpan(sizes, n), absl::MakeConstSpan(indices, n)))) {
      return;
    }
    size_t i = n;  // the next combination, the last split fastest
    while (i > 0 && ++indices[i - 1] == sizes[i - 1]) indices[--i] = 0;
    if (i == 0) return;
  }
}

}  // namespace

FirstMemberReceipt FirstMemberReceiptOf(const DistState& state, const Step& step,
                                        const DeviceMesh& mesh, absl::Span<const int64_t> logical) {
  int64_t wanted = 1, kept = 1, meeting = 1;
  // GroupSplitsOf's states, the step applied once rather than per tensor dim
  // (the search bounds every exchange edge by this, spec §5.2 item 7).
  const DistState next = ApplyStep(state, step);
  for (size_t d = 0; d < logical.size(); ++d) {
    const int dim = static_cast<int>(d);
    const MeshDimList after = GroupSplitsIn(next, step.group, dim);
    int64_t sizes[kMaxMeshDims];
    const int64_t zeros[kMaxMeshDims] = {};
    for (size_t i = 0; i < after.size(); ++i) sizes[i] = mesh.size(after[i]);
    const Slice want = NestedChunk(logical[d], absl::MakeConstSpan(sizes, after.size()),
                                   absl::MakeConstSpan(zeros, after.size()));
    // One layout's non-empty source chunks are disjoint: count those meeting
    // `want`, which starts at 0, so the chunks from the first beginning at
    // its end on meet it no more; the first member's own is the first visited.
    bool first = true;
    int64_t own = 0, meets = 0;
    ForEachChunk(mesh, GroupSplitsIn(state, step.group, dim), logical[d], [&](const Slice& s) {
      const int64_t overlap = s.size > 0 ? Overlap(s, want) : 0;
      if (first) own = overlap;
      first = false;
      meets += overlap > 0;
      return s.offset + s.size < want.size;
    });
    wanted *= want.size;
    kept *= own;
    meeting *= meets;
  }
  // Distinct source blocks are products of each dim's chunks (the dims
  // split by disjoint mesh dims); its own meets the target iff kept > 0.
  return {wanted - kept, meeting - (kept > 0 ? 1 : 0)};
}

namespace {

// Per member of an exchange's group, products over the tensor dims (blocks
// are products of slices): its target block's elements, those it holds, the
// distinct source blocks meeting it, and how much of it the first member's
// block covers; and whether it holds that block too. Storage kept per
// thread, as ExchangeLoadOf's.
struct MemberProducts {
  std::vector<int64_t> wanted, kept, meets, covered;
  std::vector<char> holds_first;
  // One tensor dim's (MultiplyDim): the members' slices before and after as
  // grids (GroupSliceGrid), the non-empty held slices before each held
  // entry, and the non-empty held slices meeting each wanted entry.
  std::vector<Slice> held_table, wanted_table;
  std::vector<uint32_t> held_index, wanted_index;
  std::vector<int64_t> nonempty_before, wanted_meets;
  // The factors every member shares: those of the tensor dims the group
  // splits neither before nor after, where every member holds and wants the
  // whole length (elements; one chunk meeting, or none if empty).
  int64_t shared_elements = 1;
  int64_t shared_meets = 1;

  void Reset(int64_t members) {
    for (std::vector<int64_t>* v : {&wanted, &kept, &meets, &covered}) v->assign(members, 1);
    holds_first.assign(members, 1);
    shared_elements = 1;
    shared_meets = 1;
  }
  // Tensor dim d's factors, the state's splits `before` and the step's `after`.
  void MultiplyDim(const DeviceMesh& mesh, MeshDimSet group, const MeshDimList& before,
                   const MeshDimList& after, int64_t length) {
    if (before.empty() && after.empty()) {
      shared_elements *= length;
      shared_meets *= length > 0 ? 1 : 0;
      return;
    }
    GroupSliceGrid(mesh, group, before, length, &held_table, &held_index);
    GroupSliceGrid(mesh, group, after, length, &wanted_table, &wanted_index);
    CountMeets();
    const Slice first_held = held_table[held_index[0]];
    for (size_t j = 0; j < wanted_index.size(); ++j) {
      const Slice& h = held_table[held_index[j]];
      const Slice& w = wanted_table[wanted_index[j]];
      wanted[j] *= w.size;
      kept[j] *= Overlap(h, w);
      meets[j] *= wanted_meets[wanted_index[j]];
      covered[j] *= Overlap(first_held, w);
      holds_first[j] &= h == first_held;
    }
  }
  // The non-empty held slices in each wanted slice's run (RunMeeting) meet it.
  void CountMeets() {
    nonempty_before.assign(1, 0);
    for (const Slice& h : held_table) {
      nonempty_before.push_back(nonempty_before.back() + (h.size > 0));
    }
    wanted_meets.clear();
    for (const Slice& w : wanted_table) {
      const auto [lo, hi] = RunMeeting(held_table, w);
      wanted_meets.push_back(nonempty_before[hi] - nonempty_before[lo]);
    }
  }
};

}  // namespace

ExchangeLoadBound ExchangeLoadBoundOf(const DistState& state, const Step& step,
                                      const DeviceMesh& mesh, absl::Span<const int64_t> logical) {
  const int64_t members = mesh.GroupSize(step.group);
  const DistState next = ApplyStep(state, step);
  thread_local MemberProducts p;
  p.Reset(members);
  for (size_t d = 0; d < logical.size(); ++d) {
    const int dim = static_cast<int>(d);
    p.MultiplyDim(mesh, step.group, GroupSplitsIn(state, step.group, dim),
                  GroupSplitsIn(next, step.group, dim), logical[d]);
  }
  ExchangeLoadBound bound;
  int64_t holders = 0, demand = 0, demanders = 0;
  const int64_t e = p.shared_elements;
  for (int64_t j = 0; j < members; ++j) {
    const int64_t kept = p.kept[j] * e;
    const int64_t covered = p.covered[j] * e;
    bound.elements = std::max(bound.elements, p.wanted[j] * e - kept);
    bound.messages = std::max(bound.messages, p.meets[j] * p.shared_meets - (kept > 0 ? 1 : 0));
    holders += p.holds_first[j];
    demand += p.holds_first[j] ? 0 : covered;
    demanders += !p.holds_first[j] && covered > 0;
  }
  if (holders > 0) {  // spec §11.1: each piece goes whole to one holder
    bound.elements = std::max(bound.elements, (demand + holders - 1) / holders);
    bound.messages = std::max(bound.messages, (demanders + holders - 1) / holders);
  }
  return bound;
}

std::vector<int64_t> PermuteExchange::SendCounts() const { return Counts(send); }
std::vector<int64_t> PermuteExchange::RecvCounts() const { return Counts(recv); }

PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                  absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate) {
  const std::vector<Box> source = Blocks(state, step, mesh, logical, /*after=*/false);
  const std::vector<Box> target = Blocks(state, step, mesh, logical, /*after=*/true);
  PermuteExchange x;
  x.me = mesh.IndexInGroup(step.group, mesh.Rank(coordinate));
  const std::vector<SliceRoute> routes = RouteSlicesOf(source, target, x.me);
  x.source_shape = Sizes(source[x.me]);
  x.target_shape = Sizes(target[x.me]);
  x.send.assign(source.size(), Box(logical.size()));
  x.recv.assign(source.size(), Box(logical.size()));
  for (const SliceRoute& r : routes) {
    // The route's box is in logical coordinates; make it block-relative.
    if (r.sender == x.me) x.send[r.receiver] = MeetBoxes(r.box, source[x.me], source[x.me]);
    if (r.receiver == x.me) x.recv[r.sender] = MeetBoxes(r.box, target[x.me], target[x.me]);
  }
  return x;
}

RouteLoad ExchangeLoadOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                         absl::Span<const int64_t> logical) {
  // Pricing calls this once per distinct exchange price (spec §6.4): the
  // blocks as grids route without comparing boxes (LoadOfGridRoutes), and
  // each thread keeps the grids' storage between calls. A plan's exchange
  // is priced (StepCost) and then sized for its peak memory (StepPeakBytes)
  // with the same arguments: each thread keeps its last answer for that.
  thread_local struct {
    bool valid = false;
    uint64_t bits = 0;
    Step step;
    std::vector<int64_t> mesh, logical;
    RouteLoad load;
  } last;
  if (last.valid && last.bits == state.bits() && last.step == step && last.mesh == mesh.sizes() &&
      absl::MakeConstSpan(last.logical) == logical) {
    return last.load;
  }
  thread_local SliceGrid source, target;
  FillGrid(state, step.group, mesh, logical, &source);
  FillGrid(ApplyStep(state, step), step.group, mesh, logical, &target);
  last.load = LoadOfGridRoutes(source, target, mesh.GroupSize(step.group));
  last.valid = true;
  last.bits = state.bits();
  last.step = step;
  last.mesh = mesh.sizes();
  last.logical.assign(logical.begin(), logical.end());
  return last.load;
}

RouteLoad ExchangeLoadAtOrigin(const DistState& state, const Step& step, const DeviceMesh& mesh,
                               absl::Span<const int64_t> global_shape) {
  const std::vector<int64_t> zeros(mesh.ndim(), 0);
  return ExchangeLoadOf(state, step, mesh, LogicalShape(state, step, mesh, global_shape, zeros));
}

}  // namespace reshard
