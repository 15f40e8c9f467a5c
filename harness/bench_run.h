// Running several plans of one redistribution on the same data, timed, for
// `reshard bench`: every rank runs each mode once untimed (connecting its
// groups), then `repeat` rounds of every mode in turn (interleaved, so that
// drift in the machine's load hits every mode alike; odd rounds in reverse
// order, so that no mode always goes first), each run after a
// barrier over the whole mesh. A rank times its own Redistribute call; a
// run's time is the slowest rank's (a redistribution is done when its last
// rank is). Ranks run where the launch options say (harness/run_ranks.h);
// results are checked with verify's ground truth (harness/check.h, Check).
//
//   std::vector<PreparedCase> modes = ...;   // one per mode, same data seed
//   std::vector<RankRuns> runs = RunBench(modes, repeat, LaunchOptions());
//   ModeMeasurement m = Measure(modes[0], runs, 0);
#ifndef RESHARD_HARNESS_BENCH_RUN_H_
#define RESHARD_HARNESS_BENCH_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/gloo/gloo_communicator.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"

namespace reshard {

// What one rank measured, per mode (indexed like the PreparedCases).
struct RankRuns {
  // Microseconds of each timed run; shorter than `repeat` for a mode that failed.
  std::vector<std::vector<double>> us;
  // The last run's result, or why the mode failed on this rank.
  std::vector<absl::StatusOr<RankResult>> last;
};

// This rank's part (collective: every rank calls it alike). A mode whose
// run fails is dropped from the later rounds: the executor refuses a plan
// identically on every rank before communicating, so every rank drops it.
RankRuns RunBenchRank(const std::vector<PreparedCase>& modes, int64_t repeat, Communicator& comm);

// Every rank run as `launch` says (its wait is set from the timeout: every
// collective is bounded by it); indexed by rank. With processes, the
// children must call RunBenchChild.
std::vector<RankRuns> RunBench(const std::vector<PreparedCase>& modes, int64_t repeat,
                               const LaunchOptions& launch);

// A child rank's side of RunBench. Returns the process exit code.
int RunBenchChild(const std::vector<PreparedCase>& modes, int64_t repeat, const ChildRank& child,
                  const LaunchOptions& launch);

// One mode's numbers over all ranks.
struct ModeMeasurement {
  std::vector<double> run_us;  // per timed run: the slowest rank's time
  int64_t bytes_sent_max = 0;  // the last run's, max over ranks (ExecutionStats)
  bool verified = false;       // every rank ran every round and Check passed
  std::string detail;          // why not verified
  // Not verified because a rank ran out of memory or threads (Check's
  // skipped outcome): the machine's limit, not a wrong result.
  bool out_of_resources = false;
};
ModeMeasurement Measure(const PreparedCase& mode, std::vector<RankRuns>& runs, size_t index,
                        int64_t repeat);

}  // namespace reshard

#endif  // RESHARD_HARNESS_BENCH_RUN_H_
