// EdgeSource: which steps leave a state, for one search. The compat graph
// (spec §4) and the native graph (spec §4.2, optionally under a memory
// limit, spec §12) are the two kinds; the graph planner and CostMatrix hand
// one to StateSearch.
#ifndef RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_
#define RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/steps/step.h"
#include "planner/steps/step_memory.h"

namespace reshard {

// Routing a permute or an exchange (slice_routes.h) meets every member's
// target block with every distinct source block: members x distinct blocks
// box meetings, and as many slices when every member wants everything
// (S(0) -> R). Above this many the step is not an edge (spec §4.2): on a mesh
// dim of 1024 ranks routing took seconds and on 65536 it ran out of memory,
// while the collectives the search has instead are priced in constant time.
inline constexpr int64_t kMaxRoutingMeetings = int64_t{1} << 16;

// Whether `step` (a permute or exchange from `state`) meets more than
// kMaxRoutingMeetings boxes on `mesh`; false for every other kind.
bool ExceedsRoutingLimit(const DistState& state, const Step& step, const DeviceMesh& mesh);
// Whether ExceedsRoutingLimit holds for some step on `mesh`: not where all
// ranks meeting all stay within the limit, so that callers testing every
// edge (native_graph_costs.h) may skip it.
bool RoutingLimitApplies(const DeviceMesh& mesh);

// Staging a step routes and assigns rails for its whole group, each time
// the search prices one of its forms, and routes grow with the square of the
// group: the 200 plans of bench/data/hard4d_large.jsonl in native mode (4-dim
// meshes up to 1024 ranks, hosts of 4 or 8) took 4.0 s without staging,
// 15.8 s staging every group, 5.5 s staging groups of up to 64 ranks (eight
// hosts of eight, issue 43's meshes).
inline constexpr int64_t kMaxStagingMembers = 64;

// Spec §11.2: after each permute or exchange of out[first..] whose group
// may be staged (`stages`, by group bits), its staged forms with each of
// kStagingChunks, in that order.
void AppendStagedForms(const std::vector<bool>& stages, int64_t rails_per_host, size_t first,
                       std::vector<Step>* out);

// Spec §11.2, by group bits: whether a permute or an exchange on that group
// of `mesh` may be staged over rails on hosts of `rails_per_host` ranks: the
// group has at most kMaxStagingMembers ranks and, at rank 0, spans hosts
// and shares one with two of its members (a stager beside a receiver).
// Empty where rails_per_host < 2.
std::vector<bool> StagingGroups(const DeviceMesh& mesh, int64_t rails_per_host);

class EdgeSource {
 public:
  virtual ~EdgeSource() = default;
  // Appends the steps out of `state` to *out, in generation order (ties).
  virtual void Append(const DistState& state, std::vector<Step>* out) const = 0;
};

// Spec §4: PyTorch's edges, exactly.
class CompatEdges : public EdgeSource {
 public:
  CompatEdges(int tensor_ndim, unsigned partial_ops)
      : tensor_ndim_(tensor_ndim), partial_ops_(partial_ops) {}
  void Append(const DistState& state, std::vector<Step>* out) const override;

 private:
  int tensor_ndim_;
  unsigned partial_ops_;
};

// Spec §4.2: the native edges towards `goal`, each permute or exchange
// followed by its forms staged over `rails_per_host` rails where it may be
// (AppendStagedForms; 0: none), leaving out every step whose peak memory
// (step_memory.h, counted for `backend`) exceeds `max_memory` bytes per
// rank, and every permute or exchange too large to route
// (ExceedsRoutingLimit).
class NativeEdges : public EdgeSource {
 public:
  NativeEdges(const DeviceMesh& mesh, std::vector<int64_t> global_shape, DType dtype,
              const DistState& goal, unsigned partial_ops,
              int64_t max_memory = std::numeric_limits<int64_t>::max(),
              MemoryBackend backend = MemoryBackend::kGloo, int64_t rails_per_host = 0);
  void Append(const DistState& state, std::vector<Step>* out) const override;

 private:
  DeviceMesh mesh_;
  std::vector<int64_t> global_shape_;
  DType dtype_;
  DistState goal_;
  unsigned partial_ops_;
  int64_t max_memory_;
  MemoryBackend backend_;
  bool routing_limit_;  // RoutingLimitApplies(mesh_)
  int64_t rails_per_host_;
  std::vector<bool> stages_;  // StagingGroups(mesh_, rails_per_host_)
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_
