#include "harness/alpha_beta_fit.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/costs/measured_table.h"

namespace reshard {
namespace {

// A sample as one row of the weighted system [h, b] . [alpha, us_per_byte] = 1.
struct Row {
  double h;
  double b;
};

Row RowOf(const TimedCollective& s) {
  const AlphaBetaTerms t = MeasuredTerms(s.kind, static_cast<double>(s.n), s.bytes);
  return {t.hops / s.time_us, t.link_bytes / s.time_us};
}

}  // namespace

double ModeledTimeUs(const TimedCollective& sample, const LinkProfile& link) {
  return TimeOnLinkUs(MeasuredTerms(sample.kind, static_cast<double>(sample.n), sample.bytes),
                      link);
}

absl::StatusOr<LinkProfile> FitLink(absl::Span<const TimedCollective> samples) {
  if (samples.empty()) return absl::InvalidArgumentError("fit: no timings");
  // Normal equations of min sum (h*alpha + b*x - 1)^2, x = microseconds per byte.
  double hh = 0, hb = 0, bb = 0, h1 = 0, b1 = 0;
  for (const TimedCollective& s : samples) {
    if (!(s.time_us > 0) || s.n < 2) {
      return absl::InvalidArgumentError(absl::StrCat("fit: a timing of ", s.time_us, " us on ", s.n,
                                                     " ranks; need > 0 us, >= 2 ranks"));
    }
    const Row r = RowOf(s);
    hh += r.h * r.h;
    hb += r.h * r.b;
    bb += r.b * r.b;
    h1 += r.h;
    b1 += r.b;
  }
  const double det = hh * bb - hb * hb;
  double alpha = det > 0 ? (h1 * bb - b1 * hb) / det : 0;
  double x = det > 0 ? (hh * b1 - hb * h1) / det : 0;
  if (alpha < 0 || det <= 0) {
    // Latency too small to measure: the best fit through the origin.
    alpha = 0;
    x = bb > 0 ? b1 / bb : 0;
  }
  if (!(x > 0)) {
    return absl::FailedPreconditionError(
        "fit: the times do not grow with the message size, so no bandwidth fits; "
        "use larger --sizes");
  }
  return LinkProfile{alpha, 1 / x / 1e3};  // bytes/us -> GB/s
}

double RmsRelativeError(absl::Span<const TimedCollective> samples, const LinkProfile& link) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const TimedCollective& s : samples) {
    const double e = (ModeledTimeUs(s, link) - s.time_us) / s.time_us;
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(samples.size()));
}

}  // namespace reshard
