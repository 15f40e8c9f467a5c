// One table of a measured profile (spec §6.3): the times `reshard calibrate`
// measured for one collective kind on groups of one size, and the rule that
// prices any byte count from them.
//
//   MeasuredTable t{StepKind::kAllGather, 8, "{0,1}", {{4096, 900}, {65536, 1500}}, fit};
//   double us = InterpolateUs(t, 16384);   // between the samples, log-log
//
// Inside the measured range the price is the piecewise-linear interpolation
// of log(time) over log(bytes) between the two nearest samples, and exactly
// the sample at a measured size. Outside it, the table's fitted alpha-beta
// formula (spec §6.2) continues from the nearest sample:
// t(x) = t_edge + F(x) - F(x_edge), F the formula with the table's fit, never
// below zero.
#ifndef RESHARD_PLANNER_COSTS_MEASURED_TABLE_H_
#define RESHARD_PLANNER_COSTS_MEASURED_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/steps/step.h"

namespace reshard {

// Spec §6.2's terms for a table's samples: CommunicationTerms, except that an
// exchange table holds the gather exchange (every member sends its block to
// the n - 1 others: n - 1 messages of `bytes` / (n - 1)), priced as
// alpha-beta prices an exchange by its routes (one hop per message).
AlphaBetaTerms MeasuredTerms(StepKind kind, double n, double bytes);

// One measured size: `bytes` as spec §6.2 counts them for the kind, `us` the
// median over repeats of the slowest rank's time; min_us and max_us the
// spread over repeats (reported, not used to price).
struct MeasuredSample {
  double bytes = 0;
  double us = 0;
  double min_us = 0;
  double max_us = 0;
};

struct MeasuredTable {
  StepKind kind = StepKind::kAllGather;  // a communicating kind
  int64_t n = 2;                         // the group's size, >= 2
  std::string group;                     // the mesh dims measured, e.g. "{0,1}"; informative
  std::vector<MeasuredSample> samples;   // bytes strictly increasing, at least 2
  LinkProfile fit;                       // §6.2's formula fitted to these samples alone
};

// InvalidArgument naming the field under `prefix` ("tables[3].samples[2].us:
// must be > 0 and finite"): a local kind, n < 2, fewer than 2 samples,
// bytes not strictly increasing, a non-positive or non-finite number.
absl::Status ValidateMeasuredTable(const MeasuredTable& table, const std::string& prefix);

// The table's price for `bytes`, microseconds (the rule above). The table
// must be valid.
double InterpolateUs(const MeasuredTable& table, double bytes);

// Each sample predicted by the table without it: between the others
// (interpolated) or beyond them (`extrapolated`, the ends).
struct HeldOut {
  double bytes = 0;
  double measured_us = 0;
  double predicted_us = 0;
  bool extrapolated = false;
};
// Empty for a table of fewer than 3 samples.
std::vector<HeldOut> HeldOutPredictions(const MeasuredTable& table);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_MEASURED_TABLE_H_
