// A planning request as the CLI sees it, read from flags (`reshard plan`) or
// from one JSON line (`reshard batch`) into a PlanRequest, and the JSON
// result both print. The
// parity tests use this library too, so they check exactly what `batch` prints.
//
//   std::string result;
//   AppendCaseResult(line, /*max_states=*/1000000, &result);
//   // {"id":...,"ok":true,"algorithm":"graph","cost":14.4,"trace":"...","steps":[...]}
#ifndef RESHARD_CLI_CASE_JSON_H_
#define RESHARD_CLI_CASE_JSON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/profile_json.h"
#include "cli/request_fields.h"
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

// A batch line is at most this long (1 MiB: a case needs well under 1 KB);
// `reshard batch` answers a longer one with an error, reading no further
// into it than this.
inline constexpr size_t kMaxBatchLineBytes = 1 << 20;

// Reads a batch line's object into *request. Keys: id, mesh, shape, dtype, src,
// dst, algorithm, cost_model, devices_per_host, profile, coordinate, mode,
// max_memory (null means the default), max_edges, dst_mesh, src_ranks,
// dst_ranks (lists of integers), and "expected", which is ignored so that
// test-data files can be fed to `reshard batch` as they are. InvalidArgument naming the key on an
// unknown or missing key or a value of the wrong type.
absl::Status RequestFromJson(const nlohmann::json& object, RequestFields* request);

// Appends `text` as a JSON string literal: quotes, backslashes and control
// characters escaped, bytes that are not UTF-8 replaced.
void AppendJsonString(absl::string_view text, std::string* out);

// Appends the result object as one line of JSON text without the newline:
// id, ok, algorithm, cost, trace, steps (each mesh_dim, src, dst, collective,
// logical_shape, cost, then for a step over several mesh dims mesh_dims and,
// when it enters Shard in an order, order; for a permute or exchange its moves), mode,
// peak_bytes, cost_model (Plan::cost_model, the model's fingerprint), in that order (keys added
// later go last, so older readers and golden files keep their prefix); or id, ok=false, error, and
// "limit" (the library field, e.g. "max_search_edges") when a limit was hit. Written directly
// rather than through a JSON DOM: `reshard batch` throughput depends on it.
void AppendResultJson(const nlohmann::json& id, const absl::StatusOr<Plan>& plan, std::string* out);

// The steps of `plan` as a JSON array, each object as AppendResultJson
// writes it.
void AppendStepsJson(const Plan& plan, std::string* out);

// One case end to end, as `reshard batch` does for each line (a cross-mesh
// one as AppendCrossMeshResultJson writes it); never fails: problems become
// {"ok": false, "error": ...}. `max_states` and `max_edges`
// bound the graph search (a line's "max_edges" key overrides the latter).
void AppendCaseResult(const nlohmann::json& object, int64_t max_states, std::string* out,
                      ProfileCache* profiles = nullptr, int64_t max_edges = kDefaultMaxSearchEdges);
// The same from the line's text (malformed JSON is an error result with id null).
void AppendCaseResult(absl::string_view line, int64_t max_states, std::string* out,
                      ProfileCache* profiles = nullptr, int64_t max_edges = kDefaultMaxSearchEdges);

// Shortest text that reads back as the same double, always with a "." or an
// exponent, as Python's repr writes it ("7.202718569887132", "0.0", "1e-05").
std::string FormatCost(double cost);
// FormatCost appended to *out (a cost matrix prints thousands per line).
void AppendCost(double cost, std::string* out);

}  // namespace reshard

#endif  // RESHARD_CLI_CASE_JSON_H_
