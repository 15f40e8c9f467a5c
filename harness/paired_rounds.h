// Two modes timed in the same interleaved rounds (`reshard bench`), compared
// round by round: on a shared machine the load drifts between rounds but
// hits both runs of one round alike, so the per-round comparison separates a
// real difference from noise better than two medians do.
#ifndef RESHARD_HARNESS_PAIRED_ROUNDS_H_
#define RESHARD_HARNESS_PAIRED_ROUNDS_H_

#include <string>
#include <vector>

namespace reshard {

struct PairedRounds {
  int rounds = 0;           // rounds both modes ran
  int second_faster = 0;    // rounds where the second mode took less time
  int ties = 0;             // rounds with equal times (left out of the test)
  double ratio_median = 0;  // median over rounds of first_us / second_us
  double sign_test_p = 1;   // two-sided sign test over the rounds without ties
};

// Round r of `first` and of `second` must be the same interleaved round; a
// mode that stopped early (a failed run) compares only the rounds both ran.
PairedRounds ComparePaired(const std::vector<double>& first, const std::vector<double>& second);

// The two lines bench's text output ends with: the ratio of the medians, and
// the per-round comparison ("pytorch / native per round: median 1.130;
// native faster in 12 of 15 rounds, sign test p = 0.035").
std::string PairedSummary(const std::string& first_name, const std::vector<double>& first,
                          const std::string& second_name, const std::vector<double>& second);

}  // namespace reshard

#endif  // RESHARD_HARNESS_PAIRED_ROUNDS_H_
