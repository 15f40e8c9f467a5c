// The table of `reshard` commands (cli/commands.h).
#include "absl/strings/str_cat.h"
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

const std::vector<Command>& Commands() {
  static const std::vector<Command>* const table =
      new std::vector<Command>{PlanCommand(),  BatchCommand(),     VerifyCommand(),
                               CostsCommand(), CalibrateCommand(), BenchCommand()};
  return *table;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace reshard
