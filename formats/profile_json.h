// Profile files: a cost profile as JSON, read by --profile / the batch key
// "profile" and written by `reshard calibrate`. Two versions
// (docs/planner-semantics.md §6.2, §6.3):
//
//   version 1 (no "version" key, or "version": 1): alpha-beta only
//   {"name": "gloo-loopback",
//    "intra_host": {"alpha_us": 40.0, "beta_gbps": 1.0},
//    "inter_host": {"alpha_us": 40.0, "beta_gbps": 1.0},
//    "memory_gbps": 5.0,
//    "call_us": 6.6,      // optional: per-call latency (spec §6.2), 0 if absent
//    "fit": {...}}        // optional: how calibrate measured it; not read
//
//   version 2: version 1's keys plus the measured tables (spec §6.3)
//   {"version": 2, "name": ..., "intra_host": ..., "inter_host": ...,
//    "memory_gbps": ...,
//    "tables": [{"kind": "all_gather", "n": 8, "group": "{0,1}",
//                "fit": {"alpha_us": 900.0, "beta_gbps": 0.8},
//                "samples": [{"bytes": 4096, "us": 950.5, "min_us": 900.1,
//                             "max_us": 1200.0}, ...]}, ...],
//    "fit": {...}}
//
// Either version serves alpha-beta (its links); the measured model needs
// version 2. Every other key is an error, so that a typo does not silently
// keep a default.
#ifndef RESHARD_FORMATS_PROFILE_JSON_H_
#define RESHARD_FORMATS_PROFILE_JSON_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/measured_cost_model.h"

namespace reshard {

// A profile file of either version: `measured.machine` always, tables only
// in version 2.
struct LoadedProfile {
  int version = 1;
  MeasuredProfile measured;
};

// InvalidArgument "<source>: key \"tables[2].samples[0].us\": ..." for a
// missing, unknown or mistyped key or an invalid value.
absl::StatusOr<LoadedProfile> LoadedProfileFromJson(const nlohmann::json& object,
                                                    absl::string_view source);
// The same from a file; also InvalidArgument naming the path when it cannot
// be read, is not a regular file or a pipe, is over kMaxProfileFileBytes,
// nests deeper than kMaxProfileJsonDepth or is not JSON (base/bounded_input.h).
inline constexpr int64_t kMaxProfileFileBytes = 16 << 20;  // calibrate's fit: ~100 KB
inline constexpr int kMaxProfileJsonDepth = 32;            // the schema needs 4
absl::StatusOr<LoadedProfile> ReadLoadedProfileFile(const std::string& path);

// The alpha-beta part of either version.
absl::StatusOr<CostProfile> ProfileFromJson(const nlohmann::json& object, absl::string_view source);
absl::StatusOr<CostProfile> ReadProfileFile(const std::string& path);

// Version 1's keys (no "version", no "fit"); add "fit" before writing if there is one.
nlohmann::json ProfileToJson(const CostProfile& profile);
// Version 2 ("version": 2, the machine's keys and "tables"; no "fit").
nlohmann::json MeasuredProfileToJson(const MeasuredProfile& profile);
// Writes `profile` (pretty-printed) to `path` atomically: a temporary file
// beside it, then a rename, so that a failure leaves an existing file as it
// was. InvalidArgument naming the path when it cannot be written (or the
// profile is not valid UTF-8).
absl::Status WriteProfileFile(const std::string& path, const nlohmann::json& profile);

// Each path read once, its profile or its error kept: `reshard batch` may
// name one file on every line. One per run; not thread-safe.
class ProfileCache {
 public:
  const absl::StatusOr<LoadedProfile>& Get(const std::string& path);

 private:
  std::map<std::string, absl::StatusOr<LoadedProfile>> profiles_;
};

}  // namespace reshard

#endif  // RESHARD_FORMATS_PROFILE_JSON_H_
