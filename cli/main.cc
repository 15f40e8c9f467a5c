// reshard: the command line. Dispatches to the subcommands of commands.h.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/help.h"

namespace {

bool IsHelp(const std::string& arg) { return arg == "help" || arg == "--help" || arg == "-h"; }

int Dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "plan") return reshard::RunPlanCommand(args);
  if (command == "batch") return reshard::RunBatchCommand(args);
  if (command == "costs") return reshard::RunCostsCommand(args);
  // verify, calibrate, bench: in `reshard`, another binary (backend_commands.h).
  if (reshard::IsBackendCommand(command)) return reshard::RunBackendCommand(command, args);
  if (IsHelp(command)) {
    std::cout << reshard::MainHelp();
    return reshard::kExitOk;
  }
  std::cerr << "reshard: unknown command \"" << command
            << "\" (commands: plan, batch, verify, costs, calibrate, bench; see reshard --help)\n";
  return reshard::kExitBadInput;
}

// Output that could not be written (a full disk, a closed pipe, /dev/full)
// must not pass for success: flush everything and fail if any write failed.
int FlushOutput(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return code;
  const int error = errno;
  std::cerr << "reshard: cannot write the output to stdout"
            << (error != 0 ? absl::StrCat(": ", std::strerror(error)) : std::string()) << "\n";
  return code == reshard::kExitOk ? reshard::kExitInternal : code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << reshard::MainHelp();
    return reshard::kExitBadInput;
  }
  const std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  // "reshard help plan" is "reshard plan --help".
  if (IsHelp(command) && !rest.empty()) return FlushOutput(Dispatch(rest[0], {"--help"}));
  return FlushOutput(Dispatch(command, rest));
}
