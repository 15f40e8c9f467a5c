// What `reshard calibrate` prints and writes once the timings are in: the
// measured tables (spec §6.3) with each size's spread, how well each table
// predicts the sizes it is not given (held out one at a time), the
// machine-wide alpha-beta fit (spec §6.2) with its error for comparison, and
// the version 2 profile (formats/profile_json.h) with a "fit" section recording
// how it was measured.
#ifndef RESHARD_CLI_CALIBRATE_CALIBRATION_REPORT_H_
#define RESHARD_CLI_CALIBRATE_CALIBRATION_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/alpha_beta_fit.h"
#include "harness/collective_timing.h"
#include "nlohmann/json.hpp"

namespace reshard {

// How the timings were taken, for the report and the "fit" section.
struct CalibrationRun {
  std::string name;  // the profile's name, valid UTF-8
  std::vector<int64_t> mesh;
  std::vector<int64_t> sizes;
  int64_t repeat = 1;
  std::string ranks;  // "threads" or "processes"
  double memory_gbps = 1;
};

// Prints the report to `out` and returns the profile to write.
// FailedPrecondition when nothing fits (e.g. times that do not grow with
// the size) or no kind has two distinct sizes.
absl::StatusOr<nlohmann::json> ReportCalibration(const CalibrationRun& run,
                                                 const std::vector<Probe>& probes,
                                                 const std::vector<TimedCollective>& samples,
                                                 std::ostream& out);

}  // namespace reshard

#endif  // RESHARD_CLI_CALIBRATE_CALIBRATION_REPORT_H_
