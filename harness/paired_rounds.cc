#include "harness/paired_rounds.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "harness/collective_timing.h"

namespace reshard {
namespace {

// P(X <= k) for X ~ Binomial(n, 1/2).
double BinomialHalfCdf(int k, int n) {
  double sum = 0;
  for (int i = 0; i <= k; ++i) {
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                    n * std::log(2.0));
  }
  return sum;
}

}  // namespace

PairedRounds ComparePaired(const std::vector<double>& first, const std::vector<double>& second) {
  PairedRounds out;
  out.rounds = static_cast<int>(std::min(first.size(), second.size()));
  if (out.rounds == 0) return out;
  std::vector<double> ratios;
  for (int r = 0; r < out.rounds; ++r) {
    if (second[r] < first[r]) ++out.second_faster;
    if (second[r] == first[r]) ++out.ties;
    ratios.push_back(second[r] > 0 ? first[r] / second[r] : 0);
  }
  out.ratio_median = Median(ratios);
  const int n = out.rounds - out.ties;
  const int fewer = std::min(out.second_faster, n - out.second_faster);
  out.sign_test_p = n == 0 ? 1 : std::min(1.0, 2 * BinomialHalfCdf(fewer, n));
  return out;
}

std::string PairedSummary(const std::string& first_name, const std::vector<double>& first,
                          const std::string& second_name, const std::vector<double>& second) {
  if (first.empty() || second.empty()) return "";
  const PairedRounds p = ComparePaired(first, second);
  return absl::StrFormat(
      "%s median / %s median: %.3f\n"
      "%s / %s per round: median %.3f; %s faster in %d of %d rounds, sign test p = %.3g\n",
      first_name, second_name, Median(first) / Median(second), first_name, second_name,
      p.ratio_median, second_name, p.second_faster, p.rounds, p.sign_test_p);
}

}  // namespace reshard
