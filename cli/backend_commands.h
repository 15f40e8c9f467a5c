// The commands that execute plans on a backend (Gloo threads, processes,
// Redis rendezvous): verify, calibrate, bench.
//
// They live in a second binary, `reshard-backends`, so that `reshard` itself
// links no backend: plan, batch and costs then start without loading Gloo,
// hiredis, libibverbs or the shared C++ runtime, and without running their
// static initialisers (bench/README.md, "Start-up"). `reshard` runs a backend
// command by executing `reshard-backends` from its own directory with the
// same arguments; `reshard-backends` runs every command itself.
#ifndef RESHARD_CLI_BACKEND_COMMANDS_H_
#define RESHARD_CLI_BACKEND_COMMANDS_H_

#include <string>
#include <vector>

namespace reshard {

// True for "verify", "calibrate" and "bench".
inline bool IsBackendCommand(const std::string& command) {
  return command == "verify" || command == "calibrate" || command == "bench";
}

// Runs backend command `command` with `args` (the arguments after its name)
// and returns the exit code. In `reshard` (backend_commands_exec.cc) this
// replaces the process with `reshard-backends` and returns only when that
// fails (kExitInternal, with a message on stderr naming the path it tried);
// in `reshard-backends` (backend_commands_linked.cc) it runs the command.
int RunBackendCommand(const std::string& command, const std::vector<std::string>& args);

}  // namespace reshard

#endif  // RESHARD_CLI_BACKEND_COMMANDS_H_
