// The `reshard` subcommands. Each takes the arguments after its name and
// returns the process exit code (help.h, ExitCodesHelp: 0 ok, 2 bad input,
// 3 no plan), printing results to stdout and errors to stderr.
#ifndef RESHARD_CLI_COMMANDS_H_
#define RESHARD_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace reshard {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNoPlan = 3;

// The exit code of a planning error: bad input, no plan (none exists, the
// search bound, --max-memory, or a plan that cannot run), or an internal error.
inline int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return kExitBadInput;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
    // A plan that cannot run (R->P(prod), verify.h CheckRunnable): verify
    // skips such a case with 3, and bench exits 3 as well.
    case absl::StatusCode::kUnimplemented: return kExitNoPlan;
    default: return kExitInternal;
  }
}

int RunPlanCommand(const std::vector<std::string>& args);
int RunBatchCommand(const std::vector<std::string>& args);
// cli/verify_command.cc.
int RunVerifyCommand(const std::vector<std::string>& args);
// cli/costs_command.cc.
int RunCostsCommand(const std::vector<std::string>& args);
// cli/calibrate_command.cc.
int RunCalibrateCommand(const std::vector<std::string>& args);
// cli/bench_command.cc.
int RunBenchCommand(const std::vector<std::string>& args);

}  // namespace reshard

#endif  // RESHARD_CLI_COMMANDS_H_
