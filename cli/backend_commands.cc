// The commands that run plans on real data (cli/commands.h): linked only into
// reshard-backends, with Gloo, hiredis and the harness.
#include "cli/commands.h"

namespace reshard {

std::vector<Command> BackendCommands() {
  return {VerifyCommand(), CalibrateCommand(), BenchCommand()};
}

}  // namespace reshard
