// Step: the one model of "one step of a plan", shared by the planners, the
// executor, `reshard verify`, the CLI and the benchmarks.
//
// A step names the group of mesh dims it acts on, its kind, and the
// placement those mesh dims go from and to (spec §4, §10):
//
//   Step s = MakeStep(MeshDimSet::Single(1), Placement::Shard(0), Placement::Replicate());
//   s.kind                           // StepKind::kAllGather
//   CheckStep(state, s, mesh, 2)     // OK iff s is legal in `state` (the one legality rule)
//   ApplyStep(state, s)              // the state after it (the one shard-order replay)
//   LogicalShape(state, s, mesh, global, coord)   // spec §10, for one rank
//   BytesOfStep(s, logical, mesh, dtype)          // what the executor sends / receives
//
// Today every group is a single mesh dim; CheckStep rejects larger ones until
// the executor and the cost models learn flattened collectives.
//
// Adding a kind of step: a StepKind (and its name), StepKindFor if it is
// keyed by placements, CheckStep's rules, BytesOfStep, then its edge in
// transitions.cc (spec §4 order), its price in every cost model
// (cost_model.cc) and its data movement in collectives/executor.cc.
#ifndef RESHARD_PLANNER_STEP_H_
#define RESHARD_PLANNER_STEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/dist_state.h"
#include "planner/dtype.h"
#include "planner/placement.h"

namespace reshard {

enum class StepKind : uint8_t {
  kAllToAll,       // S(a) -> S(b)
  kAllGather,      // S(d) -> R
  kAllReduce,      // P(op) -> R
  kReduceScatter,  // P(op) -> S(d)
  kChunk,          // R -> S(d), local
  kPartition,      // R -> P(op), local
};
inline constexpr int kNumStepKinds = 6;
inline constexpr StepKind kAllStepKinds[kNumStepKinds] = {
    StepKind::kAllToAll, StepKind::kAllGather, StepKind::kAllReduce,
    StepKind::kReduceScatter, StepKind::kChunk, StepKind::kPartition};

// "all_to_all", "all_gather", "all_reduce", "reduce_scatter", "chunk",
// "partition" (spec §10; the CLI and JSON print these).
absl::string_view StepKindName(StepKind kind);
// False for chunk and partition, which move no data between ranks.
constexpr bool IsCommunicating(StepKind kind) {
  return kind != StepKind::kChunk && kind != StepKind::kPartition;
}
// The kind of a src -> dst step; nullopt when no step does it: src == dst,
// S -> P, P(x) -> P(y) (spec §4, "never allowed").
std::optional<StepKind> StepKindFor(Placement src, Placement dst);
// The same for a step on a group of `group_size` ranks: on a group of one,
// S(d) -> P(op) is a partition too, since the single shard is the whole
// tensor and nothing moves (greedy plans plan it, as PyTorch does, spec §8).
std::optional<StepKind> StepKindFor(Placement src, Placement dst, int64_t group_size);

// A value type. Invariant (MakeStep): kind == StepKindFor(src, dst, the
// group's size) and the group is not empty.
struct Step {
  MeshDimSet group;
  StepKind kind = StepKind::kChunk;
  Placement src;
  Placement dst;

  // The group's lowest mesh dim: *the* mesh dim while groups are single.
  int mesh_dim() const { return group.First(); }
  // "S(0)->R all_gather on mesh dim 1" ("on mesh dims {0,1}" for a larger group).
  std::string ToString() const;

  friend bool operator==(const Step& a, const Step& b) {
    return a.group == b.group && a.kind == b.kind && a.src == b.src && a.dst == b.dst;
  }
  friend bool operator!=(const Step& a, const Step& b) { return !(a == b); }
};

// The step moving `group` from src to dst. src -> dst must have a kind
// (StepKindFor); use it first on untrusted input.
Step MakeStep(MeshDimSet group, Placement src, Placement dst);

// The legality rule for a step taken from `state` on `mesh`, for a tensor of
// `tensor_ndim` dims (spec §4): a single mesh dim of the mesh, which holds
// step.src; a kind matching the placements; a Shard target inside the
// tensor; and, when leaving a Shard, the mesh dim is the last split of its
// tensor dim. Splits after it over size-1 mesh dims are ignored (they split
// nothing, spec §11), which is what lets greedy plans on such meshes run
// (spec §8). InvalidArgument saying which rule failed (Unimplemented for a
// group of several mesh dims). The graph planner's edges (transitions.h)
// pass it by construction; the search alone also skips partitions to ops
// that may not coexist (PartialOpsCompatible, spec §4 case 6).
absl::Status CheckStep(const DistState& state, const Step& step, const DeviceMesh& mesh,
                       int tensor_ndim);

// The state after `step`: each mesh dim of the group takes step.dst; leaving
// S(a) removes it from a's order, entering S(b) appends it to b's (spec §4).
// Inline: the graph search applies every edge it generates.
inline DistState ApplyStep(const DistState& state, const Step& step) {
  const unsigned bits = step.group.bits();
  if ((bits & (bits - 1)) == 0) return state.WithPlacement(step.group.First(), step.dst);
  DistState next = state;
  for (int m : step.group.ToVector()) next = next.WithPlacement(m, step.dst);
  return next;
}

// Spec §10: the tensor as the step's group sees it at the rank with
// `coordinate`: the global shape split, in shard order, by every mesh dim of
// `current` outside the group.
std::vector<int64_t> LogicalShape(const DistState& current, const Step& step,
                                  const DeviceMesh& mesh, absl::Span<const int64_t> global_shape,
                                  absl::Span<const int64_t> coordinate);

// Bytes one rank sends to and receives from the rest of the group for a step
// with logical shape `logical` (spec §11), at the padded chunk size c =
// ceil(L / n) the executor uses, n the group's size:
//   all_gather, all_to_all, reduce_scatter: (n - 1) * chunk elements each way
//   all_reduce: 2 * (n - 1) * ceil(count / n) each way (reduce-scatter + all-gather)
//   chunk, partition, and any step on a group of size 1: 0
struct StepBytes {
  int64_t sent = 0;
  int64_t received = 0;
};
StepBytes BytesOfStep(const Step& step, absl::Span<const int64_t> logical,
                      const DeviceMesh& mesh, DType dtype);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEP_H_
