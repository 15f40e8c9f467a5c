#include "cli/command_runner.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"

namespace reshard {
namespace {

bool IsHelp(const std::string& arg) { return arg == "help" || arg == "--help" || arg == "-h"; }

std::string CommandNames(const std::vector<Command>& commands) {
  std::vector<std::string> names;
  for (const Command& c : commands) names.push_back(c.name);
  return absl::StrJoin(names, ", ");
}

// The command's flags (and --help) as the parser takes them.
FlagParser ParserFor(const Command& command) {
  std::vector<FlagDef> defs;
  for (const FlagSpec& flag : command.flags) defs.push_back({flag.name, !flag.value.empty()});
  defs.push_back({"help", false});
  return FlagParser(command.name, std::move(defs));
}

int PrintError(const Command& command, const absl::Status& error) {
  std::cerr << command.error_prefix << ": " << Utf8Valid(error.message()) << "\n";
  return ExitCodeFor(error);
}

int RunCommand(const Command& command, const std::vector<std::string>& args) {
  if (command.pass_through) {
    CommandResult result = command.pass_through(args);
    if (!result.ok()) return PrintError(command, result.status());
    return *result;
  }
  absl::StatusOr<FlagValues> flags = ParserFor(command).Parse(args);
  if (!flags.ok()) return PrintError(command, Fail(flags.status().message(), kExitBadInput));
  if (flags->Has("help")) {
    std::cout << CommandHelp(command);
    return kExitOk;
  }
  CommandResult result = command.run(*flags, args);
  if (!result.ok()) return PrintError(command, result.status());
  return *result;
}

int Dispatch(const std::vector<Command>& commands, const std::string& name,
             const std::vector<std::string>& args) {
  if (const Command* command = FindCommand(commands, name)) return RunCommand(*command, args);
  if (IsHelp(name)) {
    std::cout << MainHelp(commands);
    return kExitOk;
  }
  std::cerr << "reshard: unknown command \"" << Utf8Valid(Abbreviate(name, 64))
            << "\" (commands: " << CommandNames(commands) << "; see reshard --help)\n";
  return kExitBadInput;
}

// Why stdout failed: errno when the failing write was this flush's, else
// (an earlier write failed and the stream remembers only that) what stdout is.
std::string StdoutFailure(int error) {
  if (error != 0) return std::strerror(error);
  struct stat info;
  if (fstat(STDOUT_FILENO, &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
    return "the pipe's reader closed it";
  }
  return "a write failed";
}

// Output that could not be written (a full disk, a closed pipe, /dev/full)
// must not pass for success: flush everything and fail if any write failed.
int FlushOutput(int code) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return code;
  std::cerr << "reshard: cannot write the output to stdout: " << StdoutFailure(errno) << "\n";
  return code == kExitOk ? kExitInternal : code;
}

}  // namespace

int RunReshard(const std::vector<Command>& commands, const std::vector<std::string>& args) {
  // One rule for a closed pipe, whatever the command: a failed write (EPIPE)
  // instead of death by signal; FlushOutput reports it.
  signal(SIGPIPE, SIG_IGN);
  if (args.empty()) {
    std::cerr << MainHelp(commands);
    return kExitBadInput;
  }
  const std::string& name = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  // "reshard help plan" is "reshard plan --help".
  if (IsHelp(name) && !rest.empty()) return FlushOutput(Dispatch(commands, rest[0], {"--help"}));
  return FlushOutput(Dispatch(commands, name, rest));
}

}  // namespace reshard
