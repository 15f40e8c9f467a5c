// RunBackendCommand in `reshard-backends`: the commands are linked in.
#include "cli/backend_commands.h"
#include "cli/commands.h"

namespace reshard {

int RunBackendCommand(const std::string& command, const std::vector<std::string>& args) {
  if (command == "verify") return RunVerifyCommand(args);
  if (command == "calibrate") return RunCalibrateCommand(args);
  return RunBenchCommand(args);
}

}  // namespace reshard
