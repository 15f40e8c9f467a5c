// The `reshard` commands as a table. Each command declares its name, a
// one-line summary, its help text, its flags (each with its help line,
// declared once) and its run function; cli/command_runner.h does the rest
// once for all: parsing the flags (an unknown one is named), --help (built
// from the declaration, help.h CommandHelp), printing errors on stderr and
// turning them into exit codes, and checking that stdout was written.
//
//   Command PlanCommand() {
//     return {"plan", "plan one redistribution and print it", PlanAbout(),
//             {{"mesh", "SIZES", "required; mesh dim sizes, e.g. 2,2,2"}, ...},
//             PlanSections(), "reshard", RunPlan};
//   }
#ifndef RESHARD_CLI_COMMANDS_H_
#define RESHARD_CLI_COMMANDS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/flags.h"

namespace reshard {

// Exit codes (help.h, ExitCodesHelp).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // a case failed, or an internal error
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNoPlan = 3;

// The exit code of an error: bad input, no plan (none exists, the search
// bound, or --max-memory), or an internal error / a failed case.
inline int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return kExitBadInput;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
    // A plan that cannot run (R->P(prod), harness/prepared_case.h
    // CheckRunnable): verify skips such a case with 3, and bench exits 3 too.
    case absl::StatusCode::kUnimplemented:
      return kExitNoPlan;
    default:
      return kExitInternal;
  }
}

// An error that the runner prints as `message` and exits with `exit_code`
// (kExitBadInput, kExitNoPlan or kExitInternal).
absl::Status Fail(absl::string_view message, int exit_code);

// One flag: --name VALUE, or a switch when `value` is empty.
struct FlagSpec {
  std::string name;     // without the leading "--"
  std::string value;    // the value's placeholder in --help, e.g. "SIZES"
  std::string help;     // one paragraph, wrapped when printed
  bool hidden = false;  // internal (a child rank's flags): parsed, not in --help
};

// What a command's run returns: its exit code (results printed on stdout),
// or an error for the runner to print (Fail, or any status: ExitCodeFor).
using CommandResult = absl::StatusOr<int>;
using RunFunction =
    std::function<CommandResult(const FlagValues& flags, const std::vector<std::string>& args)>;
// A command that another program runs (cli/backend_exec.h): it gets the
// arguments after the command's name as given, --help included, unparsed.
using PassThroughFunction = std::function<CommandResult(const std::vector<std::string>& args)>;

struct Command {
  std::string name;
  std::string summary;          // one line for reshard --help
  std::string about;            // --help before FLAGS: title, description, USAGE
  std::vector<FlagSpec> flags;  // --help is added for every command
  std::string sections;         // --help after FLAGS (MODES, NOTATION, EXIT CODES, ...)
  std::string error_prefix;     // errors print as "<error_prefix>: <message>"
  RunFunction run;
  // Set instead of `run` (and of about, flags, sections) for a command that
  // another program runs: the runner hands it the arguments as given.
  PassThroughFunction pass_through = nullptr;
};

// Two programs run the table (docs/cli.md, "Building and running"): `reshard`
// links plan, batch and costs and no execution backend, and runs verify,
// calibrate and bench by executing `reshard-backends` (cli/backend_exec.h),
// which links every command. Both list the commands in this order.

// Every command, in the order reshard --help lists them: the table that
// reshard-backends runs (cli/command_table.cc, //cli:commands).
const std::vector<Command>& Commands();
// The command of Commands() named `name`, or null.
const Command* FindCommand(absl::string_view name);
// The command of `commands` named `name`, or null.
const Command* FindCommand(const std::vector<Command>& commands, absl::string_view name);

// plan, batch and costs (cli/planning_commands.cc): no execution backend.
std::vector<Command> PlanningCommands();
// verify, calibrate and bench (cli/backend_commands.cc): Gloo, hiredis, the
// harness.
std::vector<Command> BackendCommands();

// The entries of the table, one per command file (cli/<name>/<name>_command.cc).
Command PlanCommand();
Command BatchCommand();
Command VerifyCommand();
Command CostsCommand();
Command CalibrateCommand();
Command BenchCommand();

}  // namespace reshard

#endif  // RESHARD_CLI_COMMANDS_H_
