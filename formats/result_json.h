// The JSON result of a plan, as `reshard plan --format json`, `reshard batch`
// and Python print it: written directly rather than through a JSON DOM
// (`reshard batch` throughput depends on it), costs as Python's repr writes
// them.
//
//   std::string out;
//   AppendResultJson(id, PlanFromFields(fields, FieldStyle::kJsonKey), &out);
//   // {"id":...,"ok":true,"algorithm":"graph","cost":14.4,"trace":"...","steps":[...]}
#ifndef RESHARD_FORMATS_RESULT_JSON_H_
#define RESHARD_FORMATS_RESULT_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "planner/steps/plan.h"

namespace reshard {

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

// Shortest text that reads back as the same double, always with a "." or an
// exponent, as Python's repr writes it ("7.202718569887132", "0.0", "1e-05").
std::string FormatCost(double cost);
// FormatCost appended to *out (a cost matrix prints thousands per line).
void AppendCost(double cost, std::string* out);

}  // namespace reshard

#endif  // RESHARD_FORMATS_RESULT_JSON_H_
