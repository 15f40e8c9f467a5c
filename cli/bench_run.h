// Running several plans of one redistribution on the same data, timed, for
// `reshard bench`: every rank runs each mode once untimed (connecting its
// groups), then `repeat` rounds of every mode in turn (interleaved, so that
// drift in the machine's load hits every mode alike; odd rounds in reverse
// order, so that no mode always goes first), each run after a
// barrier over the whole mesh. A rank times its own Redistribute call; a
// run's time is the slowest rank's (a redistribution is done when its last
// rank is). Results are checked with verify's ground truth
// (collectives/verify/verify.h, Check).
//
//   std::vector<PreparedCase> modes = ...;   // one per mode, same data seed
//   std::vector<RankRuns> runs = RunOnThreads(modes, repeat, GlooOptions());
//   ModeMeasurement m = Measure(modes[0], runs, 0);
#ifndef RESHARD_CLI_BENCH_RUN_H_
#define RESHARD_CLI_BENCH_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/verify/verify.h"

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
RankRuns RunBenchRank(const std::vector<PreparedCase>& modes, int64_t repeat,
                      Communicator& comm);

// Every rank as a thread of this process; indexed by rank.
std::vector<RankRuns> RunOnThreads(const std::vector<PreparedCase>& modes, int64_t repeat,
                                   const GlooOptions& options);

// Every rank as a process: this binary started again with `child_args` plus
// --rank R --store-dir DIR (see RunBenchChildRank); indexed by rank.
std::vector<RankRuns> RunInProcesses(const std::vector<PreparedCase>& modes, int64_t repeat,
                                     const GlooOptions& options,
                                     const std::vector<std::string>& child_args);

// The child's side: rank `rank` runs and writes its RankRuns under `dir`.
// Returns the process exit code.
int RunBenchChildRank(const std::vector<PreparedCase>& modes, int64_t repeat,
                 const GlooOptions& options, int64_t rank, const std::string& dir);

// One mode's numbers over all ranks.
struct ModeMeasurement {
  std::vector<double> run_us;  // per timed run: the slowest rank's time
  int64_t bytes_sent_max = 0;  // the last run's, max over ranks (ExecutionStats)
  bool verified = false;       // every rank ran every round and Check passed
  std::string detail;          // why not verified
};
ModeMeasurement Measure(const PreparedCase& mode, std::vector<RankRuns>& runs, size_t index,
                        int64_t repeat);

}  // namespace reshard

#endif  // RESHARD_CLI_BENCH_RUN_H_
