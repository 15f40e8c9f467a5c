// Profile files: a CostProfile (planner/costs/alpha_beta_cost_model.h) as JSON,
// read by --profile / the batch key "profile" and written by
// `reshard calibrate`. Schema (docs/planner-semantics.md §6.2):
//
//   {"name": "gloo-loopback",
//    "intra_host": {"alpha_us": 40.0, "beta_gbps": 1.0},
//    "inter_host": {"alpha_us": 40.0, "beta_gbps": 1.0},
//    "memory_gbps": 5.0,
//    "call_us": 6.6,      // optional: per-call latency (spec §6.2), 0 if absent
//    "fit": {...}}        // optional: how calibrate measured it; not read
//
// Every other key is an error, so that a typo does not silently keep a default.
#ifndef RESHARD_CLI_PROFILE_JSON_H_
#define RESHARD_CLI_PROFILE_JSON_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "planner/costs/alpha_beta_cost_model.h"

namespace reshard {

// InvalidArgument "<source>: key \"intra_host.beta_gbps\": ..." for a
// missing, unknown or mistyped key or an invalid value.
absl::StatusOr<CostProfile> ProfileFromJson(const nlohmann::json& object,
                                            absl::string_view source);
// The same from a file; also NotFound/InvalidArgument naming the path when
// it cannot be read or is not JSON.
absl::StatusOr<CostProfile> ReadProfileFile(const std::string& path);

// The profile's keys (no "fit"); add one before writing if there is a fit.
nlohmann::json ProfileToJson(const CostProfile& profile);
// Writes `profile` (pretty-printed) to `path`; InvalidArgument naming the
// path when it cannot be written.
absl::Status WriteProfileFile(const std::string& path, const nlohmann::json& profile);

// Each path read once, its profile or its error kept: `reshard batch` may
// name one file on every line. One per run; not thread-safe.
class ProfileCache {
 public:
  const absl::StatusOr<CostProfile>& Get(const std::string& path);

 private:
  std::map<std::string, absl::StatusOr<CostProfile>> profiles_;
};

}  // namespace reshard

#endif  // RESHARD_CLI_PROFILE_JSON_H_
