// Cross-mesh moves (spec §14) as the CLI sees them: `reshard plan
// --dst-mesh/--src-ranks/--dst-ranks` and batch lines with dst_mesh,
// src_ranks, dst_ranks (RequestFields, IsCrossMesh) planned into a
// CrossMeshPlan, and the JSON result both print.
//
//   if (IsCrossMesh(fields)) {
//     absl::StatusOr<CrossMeshPlan> plan = CrossMeshPlanFromFields(fields, FieldStyle::kFlag);
//     AppendCrossMeshResultJson(nullptr, plan, &out);
//   }
#ifndef RESHARD_FORMATS_CROSS_MESH_JSON_H_
#define RESHARD_FORMATS_CROSS_MESH_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/profile_json.h"
#include "formats/request_fields.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "nlohmann/json.hpp"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

// The CrossMeshPlan of `fields` (src on mesh, dst on dst_mesh), planned
// with the request's mode and cost model. Errors name the field in `style`
// (--src-ranks, dst_ranks, ...). coordinate is refused: a cross-mesh plan
// reports no logical shapes. max_memory bounds every participant's peak
// (spec §14 "Memory": the crossing in rounds).
absl::StatusOr<CrossMeshPlan> CrossMeshPlanFromFields(const RequestFields& fields, FieldStyle style,
                                                      ProfileCache* profiles = nullptr);

// What one global rank sends another in the crossing (local copies aside):
// the slices' boxes (global tensor coordinates) and their bytes.
struct CrossingPair {
  int64_t src = 0;  // global ranks
  int64_t dst = 0;
  int64_t bytes = 0;
  std::vector<Box> boxes;
  std::vector<int64_t> rounds;  // the round of each of `boxes`
};
// Every pair of the plan's crossing, by sending rank, then receiving rank.
std::vector<CrossingPair> CrossingPairs(const CrossMeshPlan& plan);

// Appends the result as one line of JSON text without the newline: id,
// ok=true, cross_mesh=true, cost (null when the model cannot price the
// crossing), peak_bytes (CrossMeshPlan::peak_bytes), src_mesh, dst_mesh, src_ranks, dst_ranks,
// before and after (steps as AppendResultJson writes them), crossing {src, dst (layouts), cost,
// participants, slices, rounds, pairs [{src, dst, bytes}], bytes_sent (all ranks), max_bytes_sent,
// receive_lower_bound_max}, mode, cost_model; or the error object
// AppendResultJson writes.
void AppendCrossMeshResultJson(const nlohmann::json& id, const absl::StatusOr<CrossMeshPlan>& plan,
                               std::string* out);

}  // namespace reshard

#endif  // RESHARD_FORMATS_CROSS_MESH_JSON_H_
