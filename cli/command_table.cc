// The table of every `reshard` command (cli/commands.h): what
// reshard-backends runs.
#include <utility>

#include "cli/commands.h"

namespace reshard {

const std::vector<Command>& Commands() {
  static const std::vector<Command>* const table = [] {
    auto* all = new std::vector<Command>(PlanningCommands());
    for (Command& c : BackendCommands()) all->push_back(std::move(c));
    return all;
  }();
  return *table;
}

const Command* FindCommand(absl::string_view name) { return FindCommand(Commands(), name); }

}  // namespace reshard
