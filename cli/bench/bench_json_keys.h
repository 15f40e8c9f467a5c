// The keys of a `reshard bench --format json` line, in the order it prints
// them (docs/cli.md, "reshard bench"): the promise bench_command_test and
// bench_json_test both check, written once.
#ifndef RESHARD_CLI_BENCH_BENCH_JSON_KEYS_H_
#define RESHARD_CLI_BENCH_BENCH_JSON_KEYS_H_

#include <string>
#include <vector>

namespace reshard::cli_test {

// A move on one mesh, per mode.
inline const std::vector<std::string> kBenchKeys = {
    "mode",           "trace",          "modeled_cost", "native_model_cost",
    "bytes_sent_max", "peak_bytes_max", "measured_us",  "verified",
    "predicted_us",   "cost_model",     "profile",      "receive_lower_bound_max"};

// A cross-mesh move (native and naive).
inline const std::vector<std::string> kCrossMeshBenchKeys = {"mode",
                                                             "trace",
                                                             "modeled_cost",
                                                             "native_model_cost",
                                                             "bytes_sent_max",
                                                             "measured_us",
                                                             "verified",
                                                             "predicted_us",
                                                             "cost_model",
                                                             "profile",
                                                             "receive_lower_bound_max",
                                                             "cross_mesh",
                                                             "participants",
                                                             "crossing_bytes_sent_max"};

}  // namespace reshard::cli_test

#endif  // RESHARD_CLI_BENCH_BENCH_JSON_KEYS_H_
