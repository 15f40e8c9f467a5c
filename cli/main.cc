// reshard: the command line. It links the commands that plan (plan, batch,
// costs) and runs verify, calibrate and bench by executing reshard-backends
// beside it (cli/backend_exec.h), so that it starts without loading an
// execution backend. Everything else is in the table of commands
// (cli/commands.h) and its runner (cli/command_runner.h).
#include <string>
#include <utility>
#include <vector>

#include "cli/backend_exec.h"
#include "cli/command_runner.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<reshard::Command> commands = reshard::PlanningCommands();
  for (reshard::Command& c : reshard::ForwardedBackendCommands()) commands.push_back(std::move(c));
  return reshard::RunReshard(commands, std::vector<std::string>(argv + 1, argv + argc));
}
