// How `reshard` runs verify, calibrate and bench without linking an execution
// backend: it replaces itself by `reshard-backends`, found beside its own
// executable (/proc/self/exe), with the same arguments, so output, exit codes
// and standard input are those of reshard-backends itself.
//
//   std::vector<Command> table = PlanningCommands();
//   for (Command& c : ForwardedBackendCommands()) table.push_back(std::move(c));
#ifndef RESHARD_CLI_BACKEND_EXEC_H_
#define RESHARD_CLI_BACKEND_EXEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/commands.h"

namespace reshard {

inline constexpr char kReshardBackends[] = "reshard-backends";

// Where reshard-backends should be: the directory of this executable.
absl::StatusOr<std::string> ReshardBackendsPath();

// Executes `reshard-backends <command> <args...>`. Returns only on failure:
// an error naming the path looked for and how to build it.
CommandResult ExecReshardBackends(const std::string& command, const std::vector<std::string>& args);

// verify, calibrate and bench as entries (name, summary) that execute
// reshard-backends.
std::vector<Command> ForwardedBackendCommands();

}  // namespace reshard

#endif  // RESHARD_CLI_BACKEND_EXEC_H_
