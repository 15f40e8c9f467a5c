// Ranks as child processes of this binary, for `reshard verify --processes`
// and `reshard calibrate --processes`: each child is this executable started
// again with the argv its command gives it (hidden per-rank flags).
#ifndef RESHARD_HARNESS_CHILD_PROCESSES_H_
#define RESHARD_HARNESS_CHILD_PROCESSES_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace reshard {

// Starts this binary with `args` (args[0] is the program name), its stdout
// and stderr into the file `log`; -1 when fork failed.
pid_t SpawnRank(const std::vector<std::string>& args, const std::string& log);

// Waits for every child until `deadline`, or until `stop` (polled every few
// milliseconds, if given) returns true, then kills the rest; exit codes (128 +
// signal for a killed one, 127 for one that never started) in order.
std::vector<int> WaitForRanks(const std::vector<pid_t>& pids, absl::Time deadline,
                              const std::function<bool()>& stop = nullptr);

}  // namespace reshard

#endif  // RESHARD_HARNESS_CHILD_PROCESSES_H_
