#include "planner/steps/permute_exchange.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "planner/steps/logical_shape.h"

namespace reshard {
namespace {

// GroupSplitsIn(state, group, d) for every d < tensor_ndim, each list packed
// 4 bits per mesh dim behind a leading 1 (DimFactorCache's key), found in
// one pass over the mesh dims: pricing and bounding an exchange ask for every
// tensor dim, before and after the step, for every exchange edge.
constexpr uint64_t kNoSplits = 1;  // an empty list
void PackedGroupSplits(const DistState& state, MeshDimSet group, int tensor_ndim,
                       uint64_t* packed) {
  // Per tensor dim, 4 bits per order position: 1 + the group's mesh dim there, or 0.
  uint64_t by_position[kMaxTensorDims] = {};
  for (int m = 0; m < state.ndim(); ++m) {
    const Placement p = state.placement(m);
    if (group.Contains(m) && p.is_shard() && p.dim() < tensor_ndim) {
      by_position[p.dim()] |= static_cast<uint64_t>(m + 1) << (4 * state.OrderPosition(m));
    }
  }
  for (int d = 0; d < tensor_ndim; ++d) {
    uint64_t list = kNoSplits;
    for (uint64_t rest = by_position[d]; rest != 0; rest >>= 4) {
      if ((rest & 15) != 0) list = (list << 4) | ((rest & 15) - 1);
    }
    packed[d] = list;
  }
}

// One list PackedGroupSplits packed.
MeshDimList UnpackSplits(uint64_t packed) {
  MeshDimList list;
  for (; packed > kNoSplits; packed >>= 4) list.push_back(static_cast<int>(packed & 15));
  std::reverse(list.begin(), list.end());
  return list;
}

// Every member's block as a grid: per tensor dim the group's slices over its
// splits in `in` (GroupSliceGrid), into *grid, whose vectors keep their
// storage.
void FillGrid(const DistState& in, MeshDimSet group, const DeviceMesh& mesh,
              absl::Span<const int64_t> logical, SliceGrid* grid) {
  grid->table.resize(logical.size());
  grid->index.resize(logical.size());
  uint64_t splits[kMaxTensorDims];
  PackedGroupSplits(in, group, static_cast<int>(logical.size()), splits);
  for (size_t d = 0; d < logical.size(); ++d) {
    GroupSliceGrid(mesh, group, UnpackSplits(splits[d]), logical[d], &grid->table[d],
                   &grid->index[d]);
  }
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
  const int tensor_ndim = static_cast<int>(logical.size());
  uint64_t befores[kMaxTensorDims], afters[kMaxTensorDims];
  PackedGroupSplits(state, step.group, tensor_ndim, befores);
  PackedGroupSplits(next, step.group, tensor_ndim, afters);
  for (size_t d = 0; d < logical.size(); ++d) {
    const MeshDimList after = UnpackSplits(afters[d]);
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
    ForEachChunk(mesh, UnpackSplits(befores[d]), logical[d], [&](const Slice& s) {
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

ReceiptByPlace FirstMemberReceiptByHostOf(const DistState& state, const Step& step,
                                          const DeviceMesh& mesh, absl::Span<const int64_t> logical,
                                          int64_t devices_per_host) {
  const std::vector<int64_t> ranks = mesh.GroupOf(step.group, 0);
  const int64_t host = ranks[0] / devices_per_host;
  thread_local SliceGrid source, target;  // storage kept between calls
  FillGrid(state, step.group, mesh, logical, &source);
  FillGrid(ApplyStep(state, step), step.group, mesh, logical, &target);
  return ReceiptOfGridMember(source, target, static_cast<int64_t>(ranks.size()), 0,
                             [&](int64_t i) { return ranks[i] / devices_per_host == host; });
}

namespace {

// One tensor dim's share of a member's load (ExchangeLoadBoundOf and
// LoadWithoutReplicas multiply them over the tensor dims, since blocks are
// products of slices): its target slice's elements, those it holds, how
// much of it the first member's source slice covers, its source slice's
// elements; the distinct non-empty source slices meeting its target slice,
// and target slices meeting its source slice; and whether it holds the
// first member's source slice too.
struct MemberFactors {  // 48 bytes: a cache holds tens of thousands
  int64_t wanted;
  int64_t kept;
  int64_t covered;
  int64_t held;
  int32_t meets;  // at most the group's members, at most 2^16 (edge_source.h)
  int32_t held_meets;
  bool holds_first;
};

// The members' factors of one tensor dim, by everything they depend on: the
// mesh's sizes, the group, the dim's splits before and after the step and
// its length. Exchanges from many states to many goals split each tensor
// dim in few distinct ways (the native cost matrix of
// bench/data/costs_fresh_layouts.txt asks for about 84k, of 3.9k keys), so
// each thread keeps them: an explicit cache, emptied when the mesh changes
// or when it holds more than kMaxFactors.
class DimFactorCache {
 public:
  // The offset in factors() of the key's members' factors, made if new;
  // `before` and `after` are the splits packed as by PackedGroupSplits.
  // Offsets stay valid until Reset.
  size_t Find(const DeviceMesh& mesh, MeshDimSet group, uint64_t before, uint64_t after,
              int64_t length);
  const MemberFactors* factors() const { return factors_.data(); }
  // Empties the cache if it was for another mesh or grew past its limit.
  void Reset(const DeviceMesh& mesh) {
    if (mesh_ == mesh.sizes() && factors_.size() <= kMaxFactors) return;
    mesh_ = mesh.sizes();
    offsets_.clear();
    factors_.clear();
    // One call may pass the limit (a group of up to 2^16 members, per
    // tensor dim): do not keep that much. Then storage for the limit at
    // once, not regrown (its pages touched again) by doubling; only what
    // is used is touched.
    if (factors_.capacity() > 2 * kMaxFactors) factors_.shrink_to_fit();
    factors_.reserve(kMaxFactors);
  }

 private:
  static constexpr size_t kMaxFactors = size_t{1} << 16;  // 3 MB
  void Make(const DeviceMesh& mesh, MeshDimSet group, const MeshDimList& before,
            const MeshDimList& after, int64_t length);
  // Per entry of `of`, the non-empty entries of `table` meeting it: those in
  // its run (RunMeeting; both tables in order of offset).
  void CountMeetings(const std::vector<Slice>& table, const std::vector<Slice>& of,
                     std::vector<int64_t>* counts);

  std::vector<int64_t> mesh_;
  absl::flat_hash_map<std::tuple<uint64_t, uint64_t, int64_t, uint8_t>, size_t> offsets_;
  std::vector<MemberFactors> factors_;
  // Make's scratch: the members' slices before and after as grids
  // (GroupSliceGrid), the non-empty held slices meeting each wanted entry
  // and the reverse, and CountMeetings' non-empty entries before each one.
  std::vector<Slice> held_table_, wanted_table_;
  std::vector<uint32_t> held_index_, wanted_index_;
  std::vector<int64_t> wanted_meets_, held_meets_, nonempty_before_;
};

size_t DimFactorCache::Find(const DeviceMesh& mesh, MeshDimSet group, uint64_t before,
                            uint64_t after, int64_t length) {
  const auto [it, inserted] =
      offsets_.try_emplace(std::make_tuple(before, after, length, group.bits()), factors_.size());
  if (inserted) Make(mesh, group, UnpackSplits(before), UnpackSplits(after), length);
  return it->second;
}

void DimFactorCache::CountMeetings(const std::vector<Slice>& table, const std::vector<Slice>& of,
                                   std::vector<int64_t>* counts) {
  nonempty_before_.assign(1, 0);
  for (const Slice& t : table) nonempty_before_.push_back(nonempty_before_.back() + (t.size > 0));
  counts->clear();
  for (const Slice& x : of) {
    const auto [lo, hi] = RunMeeting(table, x);
    counts->push_back(nonempty_before_[hi] - nonempty_before_[lo]);
  }
}

// Appends the key's factors, member by member.
void DimFactorCache::Make(const DeviceMesh& mesh, MeshDimSet group, const MeshDimList& before,
                          const MeshDimList& after, int64_t length) {
  GroupSliceGrid(mesh, group, before, length, &held_table_, &held_index_);
  GroupSliceGrid(mesh, group, after, length, &wanted_table_, &wanted_index_);
  CountMeetings(held_table_, wanted_table_, &wanted_meets_);
  CountMeetings(wanted_table_, held_table_, &held_meets_);
  const Slice first_held = held_table_[held_index_[0]];
  for (size_t j = 0; j < wanted_index_.size(); ++j) {
    const Slice& h = held_table_[held_index_[j]];
    const Slice& w = wanted_table_[wanted_index_[j]];
    factors_.push_back({w.size, Overlap(h, w), Overlap(first_held, w), h.size,
                        static_cast<int32_t>(wanted_meets_[wanted_index_[j]]),
                        static_cast<int32_t>(held_meets_[held_index_[j]]), h == first_held});
  }
}

// An exchange's factors, per tensor dim the group splits before or after
// (the others, where every member holds and wants the whole length, share
// theirs: `elements` and one chunk meeting, none if empty).
struct ExchangeFactors {
  const DimFactorCache* cache;
  size_t offsets[kMaxTensorDims];
  int split_dims = 0;
  int64_t elements = 1;
  int64_t shared_meets = 1;

  // Member j's, multiplied over the tensor dims.
  MemberFactors Of(int64_t j) const {
    MemberFactors m = {elements, elements, elements, elements, 1, 1, true};
    int64_t meets = shared_meets, held_meets = shared_meets;
    for (int i = 0; i < split_dims; ++i) {
      const MemberFactors& f = cache->factors()[offsets[i] + j];
      m.wanted *= f.wanted;
      m.kept *= f.kept;
      m.covered *= f.covered;
      m.held *= f.held;
      meets *= f.meets;
      held_meets *= f.held_meets;
      m.holds_first = m.holds_first && f.holds_first;
    }
    m.meets = static_cast<int32_t>(meets);  // distinct blocks: at most the members
    m.held_meets = static_cast<int32_t>(held_meets);
    return m;
  }
};

// `next` is ApplyStep(state, step).
ExchangeFactors FactorsOf(const DistState& state, const DistState& next, const Step& step,
                          const DeviceMesh& mesh, absl::Span<const int64_t> logical) {
  thread_local DimFactorCache cache;
  cache.Reset(mesh);
  ExchangeFactors x;
  x.cache = &cache;
  const int tensor_ndim = static_cast<int>(logical.size());
  uint64_t befores[kMaxTensorDims], afters[kMaxTensorDims];
  PackedGroupSplits(state, step.group, tensor_ndim, befores);
  PackedGroupSplits(next, step.group, tensor_ndim, afters);
  for (size_t d = 0; d < logical.size(); ++d) {
    const uint64_t before = befores[d], after = afters[d];
    if (before == kNoSplits && after == kNoSplits) {
      x.elements *= logical[d];
      x.shared_meets *= logical[d] > 0 ? 1 : 0;
    } else {
      x.offsets[x.split_dims++] = cache.Find(mesh, step.group, before, after, logical[d]);
    }
  }
  return x;
}

// Spec §11.1's routes where no element has two holders (every mesh dim of
// the group with more than one rank holds a Shard before the step: the
// members' source blocks are disjoint), so no choice among replicas: each
// member receives what it lacks of its target block, one message per other
// source block meeting it; each element is wanted by `copies` members (the
// product of the group's mesh dims that shard nothing after the step), so
// a member sends its whole source block that many times but for what it
// keeps, one message per member wanting part of it but itself.
// LoadOfGridRoutes' answer, without routing; nullopt where replicas exist.
// `next` is ApplyStep(state, step).
std::optional<RouteLoad> LoadWithoutReplicas(const DistState& state, const DistState& next,
                                             const Step& step, const DeviceMesh& mesh,
                                             absl::Span<const int64_t> logical) {
  int64_t copies = 1;
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (!step.group.Contains(m) || mesh.size(m) == 1) continue;
    if (!state.placement(m).is_shard()) return std::nullopt;
    if (!next.placement(m).is_shard()) copies *= mesh.size(m);
  }
  const ExchangeFactors x = FactorsOf(state, next, step, mesh, logical);
  RouteLoad load;
  const int64_t members = mesh.GroupSize(step.group);
  for (int64_t j = 0; j < members; ++j) {
    const MemberFactors m = x.Of(j);
    const int64_t own = m.kept > 0 ? 1 : 0;
    const int64_t received = m.wanted - m.kept;
    const int64_t sent = m.held * copies - m.kept;
    load.max_sent = std::max(load.max_sent, sent);
    load.max_received = std::max(load.max_received, received);
    load.max_sent_plus_received = std::max(load.max_sent_plus_received, sent + received);
    load.max_messages =
        std::max({load.max_messages, int64_t{m.meets} - own, int64_t{m.held_meets} * copies - own});
    load.total_sent += sent;
  }
  return load;
}

}  // namespace

ExchangeLoadBound ExchangeLoadBoundOf(const DistState& state, const Step& step,
                                      const DeviceMesh& mesh, absl::Span<const int64_t> logical) {
  const int64_t members = mesh.GroupSize(step.group);
  const ExchangeFactors x = FactorsOf(state, ApplyStep(state, step), step, mesh, logical);
  ExchangeLoadBound bound;
  int64_t holders = 0, demand = 0, demanders = 0;
  for (int64_t j = 0; j < members; ++j) {
    const MemberFactors m = x.Of(j);
    bound.elements = std::max(bound.elements, m.wanted - m.kept);
    bound.messages = std::max(bound.messages, int64_t{m.meets} - (m.kept > 0 ? 1 : 0));
    holders += m.holds_first;
    demand += m.holds_first ? 0 : m.covered;
    demanders += !m.holds_first && m.covered > 0;
  }
  if (holders > 0) {  // spec §11.1: each piece goes whole to one holder
    bound.elements = std::max(bound.elements, (demand + holders - 1) / holders);
    bound.messages = std::max(bound.messages, (demanders + holders - 1) / holders);
  }
  return bound;
}

std::vector<Box> GroupBlocksOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                               absl::Span<const int64_t> logical, bool after) {
  SliceGrid grid;
  FillGrid(after ? ApplyStep(state, step) : state, step.group, mesh, logical, &grid);
  std::vector<Box> blocks(mesh.GroupSize(step.group), Box(logical.size()));
  for (size_t d = 0; d < logical.size(); ++d) {
    for (size_t j = 0; j < blocks.size(); ++j) blocks[j][d] = grid.table[d][grid.index[d][j]];
  }
  return blocks;
}

std::vector<int64_t> PermuteExchange::SendCounts() const { return Counts(send); }
std::vector<int64_t> PermuteExchange::RecvCounts() const { return Counts(recv); }

PermuteExchange PermuteExchangeOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                                  absl::Span<const int64_t> logical,
                                  absl::Span<const int64_t> coordinate) {
  const std::vector<Box> source = GroupBlocksOf(state, step, mesh, logical, /*after=*/false);
  const std::vector<Box> target = GroupBlocksOf(state, step, mesh, logical, /*after=*/true);
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

namespace {

// The last few loads a thread routed, by their arguments (ExchangeLoadOf).
class RecentLoads {
 public:
  const RouteLoad* Find(const DistState& state, const Step& step, const DeviceMesh& mesh,
                        absl::Span<const int64_t> logical) const {
    for (const Answer& a : answers_) {
      if (a.bits == state.bits() && a.step == step && a.mesh == mesh.sizes() &&
          absl::MakeConstSpan(a.logical) == logical) {
        return &a.load;
      }
    }
    return nullptr;
  }
  // Replaces the oldest answer once kAnswers are kept.
  void Keep(const DistState& state, const Step& step, const DeviceMesh& mesh,
            absl::Span<const int64_t> logical, const RouteLoad& load) {
    if (answers_.size() < kAnswers) answers_.emplace_back();
    Answer& a = answers_[next_];
    next_ = (next_ + 1) % kAnswers;
    a.bits = state.bits();
    a.step = step;
    a.mesh = mesh.sizes();
    a.logical.assign(logical.begin(), logical.end());
    a.load = load;
  }

 private:
  // Enough that the routings of a native search after its plan's exchange
  // do not push that one out (docs/design/planner-speed.md).
  static constexpr size_t kAnswers = 8;
  struct Answer {
    uint64_t bits = 0;
    Step step;
    std::vector<int64_t> mesh, logical;
    RouteLoad load;
  };
  std::vector<Answer> answers_;
  size_t next_ = 0;
};

}  // namespace

RouteLoad ExchangeLoadOf(const DistState& state, const Step& step, const DeviceMesh& mesh,
                         absl::Span<const int64_t> logical) {
  // Pricing calls this once per distinct exchange price (spec §6.4): without
  // replicas the load needs no routes (LoadWithoutReplicas); otherwise the
  // blocks as grids route without comparing boxes (LoadOfGridRoutes), and
  // each thread keeps the grids' storage between calls. A plan's exchange
  // is priced (StepCost) while the search runs, priced again when the
  // plan's steps are found (EdgeBetween) and sized for its peak memory
  // (StepPeakBytes) with the same arguments: each thread keeps its recent
  // answers for that.
  thread_local RecentLoads recent;
  if (const RouteLoad* known = recent.Find(state, step, mesh, logical)) return *known;
  RouteLoad load;
  const DistState after = ApplyStep(state, step);
  if (std::optional<RouteLoad> without = LoadWithoutReplicas(state, after, step, mesh, logical)) {
    load = *without;
  } else {
    thread_local SliceGrid source, target;
    FillGrid(state, step.group, mesh, logical, &source);
    FillGrid(after, step.group, mesh, logical, &target);
    load = LoadOfGridRoutes(source, target, mesh.GroupSize(step.group));
  }
  recent.Keep(state, step, mesh, logical, load);
  return load;
}

RouteLoad ExchangeLoadAtOrigin(const DistState& state, const Step& step, const DeviceMesh& mesh,
                               absl::Span<const int64_t> global_shape) {
  const std::vector<int64_t> zeros(mesh.ndim(), 0);
  return ExchangeLoadOf(state, step, mesh, LogicalShape(state, step, mesh, global_shape, zeros));
}

void TallyExchangeAtOrigin(const DistState& state, const Step& step, const DeviceMesh& mesh,
                           absl::Span<const int64_t> logical, int64_t devices_per_host,
                           LinkLoadTally* tally) {
  // Tallied as routed, never stored: the search prices thousands a plan.
  thread_local SliceGrid source, target;  // storage kept between calls
  FillGrid(state, step.group, mesh, logical, &source);
  FillGrid(ApplyStep(state, step), step.group, mesh, logical, &target);
  tally->Reset(mesh.GroupOf(step.group, 0), devices_per_host);
  VisitRouteSizesOfGrids(source, target, mesh.GroupSize(step.group),
                         [&](const RouteSize& r) { tally->Add(r); });
}

}  // namespace reshard
