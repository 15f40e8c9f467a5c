// reshard: the command line. Dispatches to the subcommands of commands.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/help.h"

namespace {

bool IsHelp(const std::string& arg) { return arg == "help" || arg == "--help" || arg == "-h"; }

int Dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "plan") return reshard::RunPlanCommand(args);
  if (command == "batch") return reshard::RunBatchCommand(args);
  if (command == "verify") return reshard::RunVerifyCommand(args);
  if (command == "costs") return reshard::RunCostsCommand(args);
  if (IsHelp(command)) {
    std::cout << reshard::MainHelp();
    return reshard::kExitOk;
  }
  std::cerr << "reshard: unknown command \"" << command
            << "\" (commands: plan, batch, verify, costs; see reshard --help)\n";
  return reshard::kExitBadInput;
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
  if (IsHelp(command) && !rest.empty()) return Dispatch(rest[0], {"--help"});
  return Dispatch(command, rest);
}
