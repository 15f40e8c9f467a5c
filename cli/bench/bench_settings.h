// What `reshard bench`'s flags say (bench_command.cc parses them), shared by
// the one-mesh bench (bench_command.cc) and the cross-mesh one
// (bench_cross_mesh.h), and the measured-time cells both print.
#ifndef RESHARD_CLI_BENCH_BENCH_SETTINGS_H_
#define RESHARD_CLI_BENCH_BENCH_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/bench/bench_pricing.h"
#include "collectives/gloo/gloo_communicator.h"
#include "formats/request_json.h"
#include "harness/receive_bound.h"
#include "nlohmann/json.hpp"

namespace reshard {

struct BenchSettings {
  // mesh, shape, dtype, src, dst, cost_model, profile, devices_per_host;
  // dst_mesh, src_ranks, dst_ranks for a cross-mesh move (IsCrossMesh)
  RequestFields request;
  bool cross_mesh = false;
  std::vector<std::string> modes;
  int64_t repeat = 5;
  int64_t seed = 0;
  std::string format = "text";
  bool dry_run = false;
  bool processes = false;
  GlooOptions gloo;
  int64_t max_ranks = 64;
  double max_bytes = 0;
  BenchPricing pricing;  // native mode's model and every mode's prediction (bench_pricing.h)
};

// {"median", "min", "max"} of run times in microseconds, to 0.1 us (finer
// digits are noise); nulls without a run.
nlohmann::ordered_json MeasuredUsJson(const std::vector<double>& us);

// One table cell: `pick` (Median, Min or Max) of `us` to 0.1 us, "-" without a run.
std::string UsCell(const std::vector<double>& us, double (*pick)(std::vector<double>));
double MinOf(std::vector<double> v);

// `bench --dry-run --format json`'s line: receive_bound_max,
// receive_bound_total (receive_bound.h), bytes_sent_max {mode: the busiest
// rank's bytes as its plan counts them (planner/steps/planned_bytes.h)}.
std::string DryRunJson(const ReceiveBound& bound, const std::vector<std::string>& modes,
                       const std::vector<int64_t>& bytes_sent_max);
double MaxOf(std::vector<double> v);

}  // namespace reshard

#endif  // RESHARD_CLI_BENCH_BENCH_SETTINGS_H_
