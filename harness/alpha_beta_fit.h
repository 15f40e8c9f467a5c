// Fitting a link's alpha and beta (planner/costs/alpha_beta_cost_model.h) to timed
// collectives, for `reshard calibrate`.
//
//   std::vector<TimedCollective> samples = ...;   // kind, n, bytes, time
//   absl::StatusOr<LinkProfile> link = FitLink(samples);
//   double error = RmsRelativeError(samples, *link);
//
// The model is linear in (alpha, 1/beta): time = hops * alpha + link_bytes /
// beta, with hops and link_bytes from MeasuredTerms (spec §6.2;
// planner/costs/measured_table.h). The fit
// is least squares on the *relative* error, each sample weighted by
// 1/time, so that 4 KiB messages (latency-bound, tens of microseconds) count
// as much as 4 MiB ones (bandwidth-bound, milliseconds).
#ifndef RESHARD_HARNESS_ALPHA_BETA_FIT_H_
#define RESHARD_HARNESS_ALPHA_BETA_FIT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/steps/step.h"

namespace reshard {

// One measured collective: `bytes` as spec §6.2 counts them for the kind.
struct TimedCollective {
  StepKind kind = StepKind::kAllGather;
  int64_t n = 2;  // the group's size, >= 2
  double bytes = 0;
  double time_us = 0;  // > 0
  double min_us = 0;   // the spread over repeats (calibrate); not fitted
  double max_us = 0;
};

// The model's time for a sample on `link`, microseconds.
double ModeledTimeUs(const TimedCollective& sample, const LinkProfile& link);

// Weighted least squares, alpha clamped at 0 (then 1/beta refitted alone).
// InvalidArgument for no samples or a non-positive time; FailedPrecondition
// when the times do not grow with the bytes (no positive bandwidth fits).
absl::StatusOr<LinkProfile> FitLink(absl::Span<const TimedCollective> samples);

// sqrt(mean(((modeled - measured) / measured)^2)); 0 for no samples.
double RmsRelativeError(absl::Span<const TimedCollective> samples, const LinkProfile& link);

}  // namespace reshard

#endif  // RESHARD_HARNESS_ALPHA_BETA_FIT_H_
