// A planning request as the front ends see it, read from flags (`reshard
// plan`), from one JSON line (`reshard batch`) or from Python into a
// PlanRequest. The JSON result is result_json.h's; a batch line end to end is
// batch_line.h's.
//
//   RequestFields fields;
//   RESHARD_RETURN_IF_ERROR(RequestFromJson(object, &fields));
//   absl::StatusOr<Plan> plan = PlanFromFields(fields, FieldStyle::kJsonKey);
#ifndef RESHARD_FORMATS_REQUEST_JSON_H_
#define RESHARD_FORMATS_REQUEST_JSON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "formats/profile_json.h"
#include "formats/request_fields.h"
#include "nlohmann/json.hpp"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace reshard {

// A request as text, unvalidated, with the defaults of a batch line /
// `reshard plan`: what RequestFromFields turns into a PlanRequest
// (planner/plan_request.h).
struct RequestFields {
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  std::string dtype = "f32";
  std::string src;
  std::string dst;
  std::string algorithm = "auto";
  std::string mode;        // "native", "pytorch", "auto"; empty is auto
  std::string cost_model;  // empty: the mode's default (DefaultCostModelName)
  int64_t devices_per_host = 8;
  std::string profile;              // a profile file for "alpha-beta"; empty: its default
  std::vector<int64_t> coordinate;  // empty: all zeros
  int64_t max_states = 1000000;     // PlanOptions::max_expanded_states
  int64_t max_edges = kDefaultMaxSearchEdges;  // PlanOptions::max_search_edges
  std::optional<int64_t> max_memory;           // PlanOptions::max_memory, bytes; none: no limit
  // A cross-mesh move (spec §14, cross_mesh_json.h): dst on dst_mesh (empty:
  // mesh), placed on global ranks (empty: 0 .. size - 1).
  std::vector<int64_t> dst_mesh;
  std::vector<int64_t> src_ranks;
  std::vector<int64_t> dst_ranks;
};

// True when `fields` asks for a cross-mesh move: dst_mesh, src_ranks or
// dst_ranks is given and differs from its same-mesh default (mesh, and
// 0 .. size - 1). Otherwise the request is an ordinary one.
bool IsCrossMesh(const RequestFields& fields);

// The planning options of `fields` (mode, algorithm, cost model with its
// profile, limits, coordinate), parsed but not validated: ValidatePlanRequest
// or CostMatrix checks the rules. InvalidArgument naming the field in
// `style` for an unknown name or an unreadable profile. `profiles` may be
// null.
absl::Status OptionsFromFields(const RequestFields& fields, FieldStyle style,
                               ProfileCache* profiles, PlanOptions* options);

// The PlanRequest of `fields`, validated (ValidatePlanRequest); errors name
// the field in `style` ("--src: ..." or "src: ..."). A cross-mesh request
// (IsCrossMesh) is refused, naming its first cross-mesh field: it has no
// PlanRequest (CrossMeshPlanFromFields plans it).
absl::StatusOr<PlanRequest> RequestFromFields(const RequestFields& fields, FieldStyle style,
                                              ProfileCache* profiles = nullptr);

// RequestFromFields, then PlanRedistribution; the planner's errors in
// `style` too. `profiles`, if given, reads each profile file once (reshard
// batch); otherwise the file is read here.
absl::StatusOr<Plan> PlanFromFields(const RequestFields& fields, FieldStyle style,
                                    ProfileCache* profiles = nullptr);

// Reads a batch line's object into *request. Keys: id, mesh, shape, dtype, src,
// dst, algorithm, cost_model, devices_per_host, profile, coordinate, mode,
// max_memory (null means the default), max_edges, dst_mesh, src_ranks,
// dst_ranks (lists of integers), and "expected", which is ignored so that
// test-data files can be fed to `reshard batch` as they are. InvalidArgument naming the key on an
// unknown or missing key or a value of the wrong type.
absl::Status RequestFromJson(const nlohmann::json& object, RequestFields* request);

}  // namespace reshard

#endif  // RESHARD_FORMATS_REQUEST_JSON_H_
