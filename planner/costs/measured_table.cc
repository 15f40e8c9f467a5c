#include "planner/costs/measured_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

absl::Status Positive(const std::string& field, double value, bool zero_ok = false) {
  if (std::isfinite(value) && (value > 0 || (zero_ok && value == 0))) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", value, "; must be ", zero_ok ? ">= 0" : "> 0", " and finite"));
}

// §6.2's formula with the table's fit: what extrapolation adds beyond the range.
double FormulaUs(const MeasuredTable& t, double bytes) {
  return TimeOnLinkUs(MeasuredTerms(t.kind, static_cast<double>(t.n), bytes), t.fit);
}

}  // namespace

AlphaBetaTerms MeasuredTerms(StepKind kind, double n, double bytes) {
  if (kind == StepKind::kExchange) return n <= 1 ? AlphaBetaTerms{} : AlphaBetaTerms{n - 1, bytes};
  return CommunicationTerms(kind, n, bytes);
}

absl::Status ValidateMeasuredTable(const MeasuredTable& t, const std::string& prefix) {
  if (!IsCommunicating(t.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".kind: \"", StepKindName(t.kind),
                                                   "\" is local; only collectives are measured"));
  }
  if (t.n < 2) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".n: ", t.n, "; must be >= 2"));
  }
  if (t.samples.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".samples: ", t.samples.size(),
                                                   " sample(s); interpolation needs at least 2"));
  }
  for (size_t i = 0; i < t.samples.size(); ++i) {
    const MeasuredSample& s = t.samples[i];
    const std::string at = absl::StrCat(prefix, ".samples[", i, "]");
    if (absl::Status st = Positive(at + ".bytes", s.bytes); !st.ok()) return st;
    if (absl::Status st = Positive(at + ".us", s.us); !st.ok()) return st;
    if (absl::Status st = Positive(at + ".min_us", s.min_us, true); !st.ok()) return st;
    if (absl::Status st = Positive(at + ".max_us", s.max_us, true); !st.ok()) return st;
    if (i > 0 && !(s.bytes > t.samples[i - 1].bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".bytes: ", s.bytes, " after ",
                                                     t.samples[i - 1].bytes,
                                                     "; sizes must be strictly increasing"));
    }
  }
  if (absl::Status st = Positive(prefix + ".fit.alpha_us", t.fit.alpha_us, true); !st.ok()) {
    return st;
  }
  return Positive(prefix + ".fit.beta_gbps", t.fit.beta_gbps);
}

double InterpolateUs(const MeasuredTable& t, double bytes) {
  const std::vector<MeasuredSample>& s = t.samples;
  if (bytes < s.front().bytes || bytes > s.back().bytes) {
    const MeasuredSample& edge = bytes < s.front().bytes ? s.front() : s.back();
    return std::max(0.0, edge.us + FormulaUs(t, bytes) - FormulaUs(t, edge.bytes));
  }
  // The last sample at or below `bytes`; at a sample the fraction is 0 and
  // pow(..., 0) is 1, so the price is the sample exactly.
  const size_t i = std::upper_bound(s.begin(), s.end(), bytes,
                                    [](double b, const MeasuredSample& m) { return b < m.bytes; }) -
                   s.begin() - 1;
  if (i + 1 == s.size()) return s[i].us;
  const double f = std::log(bytes / s[i].bytes) / std::log(s[i + 1].bytes / s[i].bytes);
  return s[i].us * std::pow(s[i + 1].us / s[i].us, f);
}

std::vector<HeldOut> HeldOutPredictions(const MeasuredTable& table) {
  std::vector<HeldOut> out;
  const size_t k = table.samples.size();
  if (k < 3) return out;
  for (size_t i = 0; i < k; ++i) {
    MeasuredTable without = table;
    without.samples.erase(without.samples.begin() + i);
    const MeasuredSample& s = table.samples[i];
    out.push_back({s.bytes, s.us, InterpolateUs(without, s.bytes), i == 0 || i + 1 == k});
  }
  return out;
}

}  // namespace reshard
