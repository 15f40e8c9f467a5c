// What cli/commands.h declares for every table of commands (Fail,
// FindCommand in a given table).
#include "cli/commands.h"

namespace reshard {

absl::Status Fail(absl::string_view message, int exit_code) {
  switch (exit_code) {
    case kExitBadInput:
      return absl::InvalidArgumentError(message);
    case kExitNoPlan:
      return absl::NotFoundError(message);
    default:
      return absl::InternalError(message);
  }
}

const Command* FindCommand(const std::vector<Command>& commands, absl::string_view name) {
  for (const Command& c : commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace reshard
