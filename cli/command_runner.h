// Running `reshard` once for all commands (commands.h): dispatching to the
// command, its flags parsed (an unknown flag, a missing value, a repeated
// flag is bad input naming the flag), --help (also `reshard help <command>`),
// errors printed as "<prefix>: <message>" on stderr, exit codes (0 ok,
// 1 a case failed or an internal error, 2 bad input, 3 no plan).
//
// Output that cannot be written fails the same way for every command: a
// closed pipe (`reshard plan ... | head -c0`), a full disk or /dev/full.
// SIGPIPE is ignored, so a write to a closed pipe fails instead of killing
// the process silently (exit 141); at exit the runner flushes stdout and, if
// any write failed, prints one message on stderr and exits 1 (or with the
// command's own non-zero code). Long writers (batch) stop at the first
// failed write.
//
//   int main(int argc, char** argv) {
//     return reshard::RunReshard(reshard::Commands(), {argv + 1, argv + argc});
//   }
#ifndef RESHARD_CLI_COMMAND_RUNNER_H_
#define RESHARD_CLI_COMMAND_RUNNER_H_

#include <string>
#include <vector>

#include "cli/commands.h"

namespace reshard {

// Runs the command of `commands` that args[0] names (commands.h).
// args: the command line without the program name. Returns the exit code.
int RunReshard(const std::vector<Command>& commands, const std::vector<std::string>& args);

}  // namespace reshard

#endif  // RESHARD_CLI_COMMAND_RUNNER_H_
