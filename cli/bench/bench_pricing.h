// The cost model `reshard bench` plans native mode with and predicts every
// mode's time with: the machine it runs on (Gloo on this host), not the
// default GPU profile (spec §6.3). In order:
//
//   --profile FILE      that file: a version 2 profile prices with the
//                       measured model, a version 1 one with alpha-beta
//   --profile builtin   the built-in one (below), whatever else exists
//   DefaultProfilePath() if it exists: $XDG_CONFIG_HOME/reshard/gloo-profile.json,
//                       or ~/.config/reshard/gloo-profile.json (where
//                       `reshard calibrate --out` may put this machine's)
//   built-in            bench/profiles/gloo-loopback-measured.json, measured
//                       on the development VM, compiled in
//
//   absl::StatusOr<BenchPricing> p = ResolveBenchPricing(flag, devices_per_host);
//   std::cout << p->description;   // "measured (profile: built-in gloo-loopback-measured)"
#ifndef RESHARD_CLI_BENCH_BENCH_PRICING_H_
#define RESHARD_CLI_BENCH_BENCH_PRICING_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "planner/costs/cost_model.h"

namespace reshard {

struct BenchPricing {
  std::string model_name;  // "measured" or "alpha-beta"
  std::string profile;     // the file's path, or "built-in NAME"
  std::string source;      // "--profile", "default path", "built-in"
  std::shared_ptr<const CostModel> model;
  std::string description;  // "measured (profile: PATH, from --profile)"
};

// $XDG_CONFIG_HOME/reshard/gloo-profile.json, else $HOME/.config/...; empty
// when neither variable is set.
std::string DefaultProfilePath();

// The text of the built-in profile (version 2 JSON).
const char* BuiltinGlooProfileJson();

// `flag` is --profile's value (empty: not given). InvalidArgument naming
// --profile when the file cannot be read or is invalid; a default-path file
// that is invalid is an error too (naming the path), rather than silently
// ignored.
absl::StatusOr<BenchPricing> ResolveBenchPricing(const std::string& flag, int64_t devices_per_host);

}  // namespace reshard

#endif  // RESHARD_CLI_BENCH_BENCH_PRICING_H_
