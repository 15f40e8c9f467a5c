// The --help texts of `reshard` and its subcommands.
#ifndef RESHARD_CLI_HELP_H_
#define RESHARD_CLI_HELP_H_

#include <string>

namespace reshard {

std::string MainHelp();
std::string PlanHelp();
std::string BatchHelp();
// What a DistState looks like on the command line (spec §3, §7), for every
// subcommand that reads one.
std::string NotationHelp();
// The two planning modes and when to use which (issue 7), for plan, batch
// and bench.
std::string ModesHelp();
// Exit codes shared by the subcommands.
std::string ExitCodesHelp();

}  // namespace reshard

#endif  // RESHARD_CLI_HELP_H_
