// The commands that plan (cli/commands.h): all that the `reshard` binary
// links, so that it starts without loading an execution backend.
#include "cli/commands.h"

namespace reshard {

std::vector<Command> PlanningCommands() { return {PlanCommand(), BatchCommand(), CostsCommand()}; }

}  // namespace reshard
