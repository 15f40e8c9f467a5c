// reshard-backends: every `reshard` command (cli/commands.h), with the
// execution backends that verify, calibrate and bench run plans on. `reshard`
// executes it for those three (cli/backend_exec.h).
#include <string>
#include <vector>

#include "cli/command_runner.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  return reshard::RunReshard(reshard::Commands(), std::vector<std::string>(argv + 1, argv + argc));
}
