// The --help texts: `reshard --help` from the table of commands, each
// command's from its declaration (commands.h), and the sections several
// commands share.
#ifndef RESHARD_CLI_HELP_H_
#define RESHARD_CLI_HELP_H_

#include <string>
#include <vector>

#include "cli/commands.h"

namespace reshard {

// reshard --help: what reshard does, both planning modes, every command of
// `commands` with its summary, the notation and the exit codes.
std::string MainHelp(const std::vector<Command>& commands);
// reshard <command> --help: its about text, FLAGS (every flag that is not
// hidden, with its help line, and --help), then its sections.
std::string CommandHelp(const Command& command);
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
