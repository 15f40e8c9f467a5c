// The naive baseline of a cross-mesh move (spec §14 "Naive baseline"), what
// `reshard bench` measures native plans against: the plain plan
// (PlanPlainCrossMesh: Partials reduced before, the destination's Partials
// made after) with its one crossing replaced by three hops over the same
// participants, each an exchange of exact slices (slice_routes.h):
//   gather   every source rank sends its block to the source root
//            (src_ranks[0]), which then holds the whole tensor;
//   send     the source root sends the whole tensor to the destination root
//            (dst_ranks[0]); a local copy when they are the same rank;
//   scatter  the destination root sends every destination rank its block
//            (replicas each get a copy) and keeps its own.
// It lives in the planner beside the plan it is a baseline for: it is
// planned and priced like one (the same participants, the same rule per
// exchange), only run by the bench harness.
//
//   absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(request, options);
//   naive->BytesSent()   // per participant, over the three hops
#ifndef RESHARD_PLANNER_CROSS_MESH_NAIVE_PLAN_H_
#define RESHARD_PLANNER_CROSS_MESH_NAIVE_PLAN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/planner.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

inline constexpr int kNaiveHops = 3;  // gather, send, scatter

struct NaiveCrossMeshPlan {
  // Ranks, participants, before, crossing layouts and after; its routes and
  // crossing_cost are the plain crossing's, which the hops replace.
  CrossMeshPlan plain;
  int64_t src_root = 0;  // participant indices of src_ranks[0], dst_ranks[0]
  int64_t dst_root = 0;
  // Per hop, routes over the participants in global tensor coordinates
  // (RouteSlices of NaiveHopBoxes).
  std::array<std::vector<SliceRoute>, kNaiveHops> hops;
  // before.cost + each hop priced as plain's crossing is + after.cost; none
  // when the model prices no exchange.
  std::optional<double> cost;

  // Per participant, over the hops: bytes sent to and received from others
  // (local copies not counted).
  std::vector<int64_t> BytesSent() const;
  std::vector<int64_t> BytesReceived() const;
  // "S(0)R on 2x4 ranks [0,...] -> gather on 0 -> send to 8 -> scatter -> ... on 2 ranks [8,9]".
  std::string Summary() const;
};

// The box each participant holds before hop `hop` and wants after it (empty
// boxes for none): the rule the routes and the executor share.
void NaiveHopBoxes(const NaiveCrossMeshPlan& plan, int hop, std::vector<Box>* held,
                   std::vector<Box>* wanted);

// PlanPlainCrossMesh's errors; `options` plans the steps before and after
// and prices the hops.
absl::StatusOr<NaiveCrossMeshPlan> PlanNaiveCrossMesh(const CrossMeshRequest& request,
                                                      const PlanOptions& options);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_NAIVE_PLAN_H_
