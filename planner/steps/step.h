// Step: the one model of "one step of a plan", shared by the planners, the
// executor, `reshard verify`, the CLI and the benchmarks.
//
// A step names the group of mesh dims it acts on, its kind, and the
// placement those mesh dims go from and to (spec §4, §4.2, §10):
//
//   Step s = MakeStep(MeshDimSet::Single(1), Placement::Shard(0), Placement::Replicate());
//   s.kind                           // StepKind::kAllGather
//   CheckStep(state, s, mesh, 2)     // OK iff s is legal in `state` (the one legality rule)
//   ApplyStep(state, s)              // the state after it (the one shard-order replay)
//   LogicalShape(...), BytesOfStep(...)  // logical_shape.h, step_bytes.h: per rank
//
// Compat steps (pytorch mode) act on one mesh dim. Native steps (spec §4.2)
// act on a group of several mesh dims as one flattened collective, or are
// permutes, which rearrange Shard mesh dims by exchanging slices. A step that
// appends several mesh dims to shard orders lists them, in order, in its
// `entries`.
//
// Where each rule lives (planner/steps/): kinds and construction in step.cc,
// CheckStep in step_legality.cc, ApplyStep in step_replay.cc, shapes in
// logical_shape.h, bytes in step_bytes.h, memory in step_memory.h.
//
// Adding a kind of step: a StepKind (and its name), StepKindFor if it is
// keyed by placements, CheckStep's rules, BytesOfStep and StepMemory, then
// its edge in planner/search/transitions.cc or native_transitions.cc (spec §4
// order), its price in every cost model (planner/costs/) and its data
// movement in collectives/step_runners.cc.
#ifndef RESHARD_PLANNER_STEPS_STEP_H_
#define RESHARD_PLANNER_STEPS_STEP_H_

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/layout/placement.h"

namespace reshard {

enum class StepKind : uint8_t {
  kAllToAll,       // S(a) -> S(b)
  kAllGather,      // S(d) -> R
  kAllReduce,      // P(op) -> R
  kReduceScatter,  // P(op) -> S(d)
  kChunk,          // R -> S(d), local
  kPartition,      // R -> P(op), local
  kPermute,        // native: Shard mesh dims rearranged by exchanging slices
  kExchange,       // native: Shard and Replicate mesh dims re-laid out by exchanging slices
};
inline constexpr int kNumStepKinds = 8;
inline constexpr StepKind kAllStepKinds[kNumStepKinds] = {
    StepKind::kAllToAll, StepKind::kAllGather, StepKind::kAllReduce, StepKind::kReduceScatter,
    StepKind::kChunk,    StepKind::kPartition, StepKind::kPermute,   StepKind::kExchange};

// "all_to_all", "all_gather", "all_reduce", "reduce_scatter", "chunk",
// "partition", "permute", "exchange" (spec §10; the CLI and JSON print these).
absl::string_view StepKindName(StepKind kind);
// False for chunk and partition, which move no data between ranks.
constexpr bool IsCommunicating(StepKind kind) {
  return kind != StepKind::kChunk && kind != StepKind::kPartition;
}
// True for the steps that move exact slices with AllToAllV (permutes and
// exchanges, permute_exchange.h); their src and dst are unused (Replicate)
// and their entries say where the group's mesh dims go.
constexpr bool MovesSlices(StepKind kind) {
  return kind == StepKind::kPermute || kind == StepKind::kExchange;
}
// The kind of a src -> dst step; nullopt when no step does it: src == dst,
// S -> P, P(x) -> P(y) (spec §4, "never allowed").
// Inline: the native search makes a step per edge it generates.
inline std::optional<StepKind> StepKindFor(Placement src, Placement dst) {
  if (src == dst) return std::nullopt;
  if (src.is_shard()) {
    if (dst.is_partial()) return std::nullopt;
    return dst.is_shard() ? StepKind::kAllToAll : StepKind::kAllGather;
  }
  if (src.is_partial()) {
    if (dst.is_partial()) return std::nullopt;
    return dst.is_shard() ? StepKind::kReduceScatter : StepKind::kAllReduce;
  }
  return dst.is_shard() ? StepKind::kChunk : StepKind::kPartition;
}
// The same for a step on a group of `group_size` ranks: on a group of one,
// S(d) -> P(op) and P(x) -> P(y) are partitions too, since the single local
// value is the whole tensor and nothing moves (greedy plans plan them, as
// PyTorch does, spec §8).
std::optional<StepKind> StepKindFor(Placement src, Placement dst, int64_t group_size);

// The mesh dims a step appends to shard orders, in the order they join:
// (mesh dim, tensor dim) pairs. Empty for single-mesh-dim steps, whose dst
// says it all. A value type; packed so that a Step stays trivially copyable.
class ShardEntries {
 public:
  static constexpr int kMax = kMaxMeshDims;
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int mesh_dim(int i) const { return packed_[i] & 0xf; }
  int tensor_dim(int i) const { return packed_[i] >> 4; }
  // Requires size() < kMax, mesh_dim < 16 and tensor_dim < 16.
  void Append(int mesh_dim, int tensor_dim) {
    packed_[size_++] = static_cast<uint8_t>(mesh_dim | (tensor_dim << 4));
  }
  friend bool operator==(const ShardEntries& a, const ShardEntries& b) {
    if (a.size_ != b.size_) return false;
    for (int i = 0; i < a.size_; ++i) {
      if (a.packed_[i] != b.packed_[i]) return false;
    }
    return true;
  }

 private:
  uint8_t packed_[kMax] = {};
  uint8_t size_ = 0;
};

// How a permute or an exchange runs across hosts (spec §11.2): direct, one
// AllToAllV of its routes (chunks 0, every other step's value), or staged
// over the rails of hosts of `rails_per_host` consecutive ranks, its routes
// cut into `chunks` pipelined parts (1 + chunks AllToAllVs; StagedRoundsOf,
// rail_staging.h). Only the models that price rails plan it (the nccl
// model's devices per host, CostModel::rails_per_host).
struct RailStaging {
  int32_t rails_per_host = 0;
  int32_t chunks = 0;
  bool staged() const { return chunks > 0; }
  friend bool operator==(const RailStaging& a, const RailStaging& b) {
    return a.rails_per_host == b.rails_per_host && a.chunks == b.chunks;
  }
};

// A value type. Invariants (MakeStep, MakeGroupStep, MakePermute,
// MakeExchange): the group is not empty; except for permutes and exchanges,
// kind == StepKindFor(src, dst, the group's size); a step over several mesh
// dims that enters Shard lists every mesh dim of its group once in `entries`
// (tensor dim dst.dim()); a permute lists every mesh dim of its group once,
// each with its new tensor dim; an exchange lists those of its group that end
// in a Shard (the others end Replicate); both have src and dst Replicate
// (unused).
struct Step {
  MeshDimSet group;
  StepKind kind = StepKind::kChunk;
  Placement src;
  Placement dst;
  ShardEntries entries;
  RailStaging staging;  // permutes and exchanges only

  // The group's lowest mesh dim: *the* mesh dim of a single-dim step.
  int mesh_dim() const { return group.First(); }
  // "S(0)->R all_gather on mesh dim 1", "S(0)->S(1) all_to_all on mesh dims
  // {0,1} as [1,0]", "permute on mesh dims {0,1}: 0->S(1) 1->S(0)",
  // "exchange on mesh dims {0,1,2}: 1->S(0) 2->S(1) 0->R", "permute on mesh
  // dims {0,1}: 0->S(1) 1->S(0) staged over rails of 8, 2 chunks".
  std::string ToString() const;

  friend bool operator==(const Step& a, const Step& b) {
    return a.group == b.group && a.kind == b.kind && a.src == b.src && a.dst == b.dst &&
           a.entries == b.entries && a.staging == b.staging;
  }
  friend bool operator!=(const Step& a, const Step& b) { return !(a == b); }
};

// The step moving `group` from src to dst. src -> dst must have a kind
// (StepKindFor); use it first on untrusted input. A group of several mesh
// dims entering Shard joins the order in ascending mesh dims.
Step MakeStep(MeshDimSet group, Placement src, Placement dst);
// A step over the mesh dims `order` (a group of one or more), which enter a
// Shard dst in that order. src -> dst must have a kind.
// Inline, as StepKindFor.
inline Step MakeGroupStep(absl::Span<const int> order, Placement src, Placement dst) {
  std::optional<StepKind> kind = StepKindFor(src, dst);
  assert(kind.has_value() && !order.empty());
  Step step{MeshDimSet(), kind.value_or(StepKind::kChunk), src, dst, ShardEntries()};
  for (int m : order) step.group = step.group.With(m);
  if (order.size() > 1 && dst.is_shard()) {
    for (int m : order) step.entries.Append(m, dst.dim());
  }
  return step;
}
// A permute: mesh dim entries[i].first moves to Shard(entries[i].second),
// appended to that tensor dim's order in this sequence (spec §4.2).
// Inline, as StepKindFor.
inline Step MakePermute(absl::Span<const std::pair<int, int>> entries) {
  Step step{MeshDimSet(), StepKind::kPermute, Placement::Replicate(), Placement::Replicate(),
            ShardEntries()};
  for (auto [m, d] : entries) {
    step.group = step.group.With(m);
    step.entries.Append(m, d);
  }
  return step;
}
// An exchange (spec §4.2 case 13): every mesh dim of `group` leaves its
// order; mesh dim entries[i].first then joins Shard(entries[i].second), in
// this sequence; the group's other mesh dims become Replicate.
Step MakeExchange(MeshDimSet group, absl::Span<const std::pair<int, int>> entries);
// Where a permute or an exchange sends each mesh dim of its group: its
// entries in order, (mesh dim, Shard(tensor dim)), then the group's other
// mesh dims ascending, (mesh dim, Replicate). The CLI prints these as moves.
std::vector<std::pair<int, Placement>> MovesOf(const Step& step);

// The legality rule for a step taken from `state` on `mesh`, for a tensor of
// `tensor_ndim` dims.
// Single mesh dim (spec §4): a mesh dim of the mesh, which holds step.src; a
// kind matching the placements; a Shard target inside the tensor; and, when
// leaving a Shard, the mesh dim is the last split of its tensor dim. Splits
// after it over size-1 mesh dims are ignored (they split nothing, spec §11),
// which is what lets greedy plans on such meshes run (spec §8).
// Several mesh dims (spec §4.2): every one holds step.src; leaving S(a), the
// group is exactly the last |group| mesh dims of a's order; entering S(b),
// `entries` lists the group, each onto b; chunk and partition act on one
// mesh dim only.
// Permute (spec §4.2): every mesh dim of the group is a Shard, the group's
// mesh dims form the tail of every order they are in, and the state changes.
// Exchange (spec §4.2): the same, but the group's mesh dims may also be
// Replicate (never Partial), and entries list some of them, at most once.
// InvalidArgument saying which rule failed. The planners' edges pass it by
// construction; the search alone also skips partitions to ops that may not
// coexist (PartialOpsCompatible, spec §4 case 6).
absl::Status CheckStep(const DistState& state, const Step& step, const DeviceMesh& mesh,
                       int tensor_ndim);

// Whether a legal step on a group of `group_size` ranks (mesh.GroupSize(
// step.group)) can run on real data (spec §11), the one rule for the
// executor, `reshard verify` and `reshard bench`: a partition R->P(prod) over
// two or more ranks has no exact local split and is refused; every other
// step runs. On a group of size 1 the one local value is the product, so the
// partition moves nothing and runs, as the planners' size-1 steps assume
// (StepKindFor with a group size, spec §8).
bool RunsOnData(const Step& step, int64_t group_size);

// The state after `step`: each mesh dim of the group takes step.dst; leaving
// S(a) removes it from a's order, entering S(b) appends it to b's (spec §4),
// in the order of `entries` for several mesh dims; a permute or an exchange
// removes its group from every order (Replicate), then appends its entries
// (spec §4.2).
// Inline: the graph search applies every edge it generates.
DistState ApplyGroupStep(const DistState& state, const Step& step);
inline DistState ApplyStep(const DistState& state, const Step& step) {
  const unsigned bits = step.group.bits();
  if ((bits & (bits - 1)) == 0 && !MovesSlices(step.kind)) {
    return state.WithPlacement(step.group.First(), step.dst);
  }
  return ApplyGroupStep(state, step);
}

// The group's mesh dims that split `tensor_dim`, in split order, in `state`
// (after = false) or in the state after the step (after = true). Each member
// of the group holds NestedChunk (chunk.h) of the logical extent over them
// (spec §11); the member with coordinate 0 on all of them the largest.
MeshDimList GroupSplitsOf(const DistState& state, const Step& step, int tensor_dim, bool after);
// The same on a state at hand (`state`, or the step already applied to it):
// the mesh dims of `group` in its order of `tensor_dim`.
MeshDimList GroupSplitsIn(const DistState& state, MeshDimSet group, int tensor_dim);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_STEP_H_
