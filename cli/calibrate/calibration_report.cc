#include "cli/calibrate/calibration_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "formats/profile_json.h"
#include "harness/measured_tables.h"
#include "planner/costs/measured_cost_model.h"

namespace reshard {
namespace {

using json = nlohmann::json;

double RelativeError(double predicted, double measured) {
  return (predicted - measured) / measured;
}

// |relative error| of every held-out size, split by interpolated or extrapolated.
struct HeldOutErrors {
  std::vector<double> inside;
  std::vector<double> outside;
  std::vector<double> machine;  // alpha-beta's machine fit on every sample
};

std::string Summary(std::vector<double> errors) {
  if (errors.empty()) return "none";
  std::sort(errors.begin(), errors.end());
  return absl::StrFormat("median %.1f%%, 90th percentile %.1f%%, max %.1f%% (%d sizes)",
                         100 * Median(errors), 100 * errors[(errors.size() * 9) / 10],
                         100 * errors.back(), errors.size());
}

// One table: each size's median, spread, held-out prediction and alpha-beta's.
json PrintTable(const MeasuredTable& t, const LinkProfile& machine, HeldOutErrors* errors,
                std::ostream& out) {
  out << absl::StrFormat("\n%s on %d ranks (groups %s); fit alpha %.1f us, beta %.3f GB/s\n",
                         StepKindName(t.kind), t.n, t.group, t.fit.alpha_us, t.fit.beta_gbps);
  out << absl::StrFormat("%12s %12s %12s %12s %14s %8s %14s %8s\n", "bytes", "median_us", "min_us",
                         "max_us", "held_out_us", "error", "alpha_beta_us", "error");
  const std::vector<HeldOut> held = HeldOutPredictions(t);
  json rows = json::array();
  for (size_t i = 0; i < t.samples.size(); ++i) {
    const MeasuredSample& s = t.samples[i];
    const double ab = ModeledTimeUs({t.kind, t.n, s.bytes, s.us}, machine);
    errors->machine.push_back(std::abs(RelativeError(ab, s.us)));
    std::string held_cell = "-", held_error = "";
    json row = {{"bytes", s.bytes}, {"us", s.us}, {"alpha_beta_us", ab}};
    if (i < held.size()) {
      const double e = RelativeError(held[i].predicted_us, s.us);
      (held[i].extrapolated ? errors->outside : errors->inside).push_back(std::abs(e));
      held_cell = absl::StrFormat("%.1f%s", held[i].predicted_us, held[i].extrapolated ? "*" : "");
      held_error = absl::StrFormat("%+.1f%%", 100 * e);
      row["held_out_us"] = held[i].predicted_us;
    }
    out << absl::StrFormat("%12.0f %12.1f %12.1f %12.1f %14s %8s %14.1f %+7.1f%%\n", s.bytes, s.us,
                           s.min_us, s.max_us, held_cell, held_error, ab,
                           100 * RelativeError(ab, s.us));
    rows.push_back(row);
  }
  return {{"kind", std::string(StepKindName(t.kind))}, {"n", t.n}, {"samples", rows}};
}

}  // namespace

absl::StatusOr<json> ReportCalibration(const CalibrationRun& run, const std::vector<Probe>& probes,
                                       const std::vector<TimedCollective>& samples,
                                       std::ostream& out) {
  RESHARD_ASSIGN_OR_RETURN(LinkProfile machine, FitLink(samples));
  MeasuredProfile profile;
  profile.machine = {run.name, machine, machine, run.memory_gbps};
  profile.tables = BuildTables(probes, samples, machine);
  if (absl::Status s = ValidateMeasuredProfile(profile); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the measurements make no valid profile (",
                                                      s.message(), "); use more --sizes"));
  }
  out << "measured tables (median, min and max over repeats of the slowest rank's time;\n"
         "held_out_us: the table's price for that size without its sample, * beyond the\n"
         "others, so by the fitted formula; alpha_beta_us: the machine-wide alpha-beta fit)\n";
  HeldOutErrors errors;
  json checks = json::array();
  for (const MeasuredTable& t : profile.tables)
    checks.push_back(PrintTable(t, machine, &errors, out));
  out << absl::StrFormat(
      "\nheld-out error, interpolated sizes: %s\nheld-out error, extrapolated sizes: %s\n"
      "alpha-beta machine fit (alpha %.2f us, beta %.3f GB/s), error on every size: %s\n"
      "memory bandwidth (memcpy): %.2f GB/s\n",
      Summary(errors.inside), Summary(errors.outside), machine.alpha_us, machine.beta_gbps,
      Summary(errors.machine), run.memory_gbps);
  json result = MeasuredProfileToJson(profile);
  result["fit"] = {{"tool", "reshard calibrate"},
                   {"backend", "gloo (TCP on loopback)"},
                   {"ranks", run.ranks},
                   {"mesh", run.mesh},
                   {"sizes_bytes", run.sizes},
                   {"repeat", run.repeat},
                   {"method",
                    "per kind and group size, each size's median over repeats of the slowest "
                    "rank's time (spec 6.3); intra_host and inter_host: least squares on the "
                    "relative error of spec 6.2's formulas over every sample"},
                   {"held_out_interpolated_abs_error_median",
                    errors.inside.empty() ? json(nullptr) : json(Median(errors.inside))},
                   {"alpha_beta_abs_error_median", Median(errors.machine)},
                   {"checks", checks}};
  return result;
}

}  // namespace reshard
