// The one-line summaries (reshard --help) of the commands that run in
// reshard-backends: verify, calibrate and bench declare them
// (cli/<name>/<name>_command.cc), and `reshard`, which runs them by executing
// reshard-backends (cli/backend_exec.h), lists them without linking them.
#ifndef RESHARD_CLI_BACKEND_COMMAND_SUMMARIES_H_
#define RESHARD_CLI_BACKEND_COMMAND_SUMMARIES_H_

namespace reshard {

inline constexpr char kVerifySummary[] =
    "run plans on real data (Gloo on this machine, ranks as threads or processes, or on "
    "several hosts) and check every rank's result";
inline constexpr char kCalibrateSummary[] =
    "time the collectives on this machine and write a measured cost profile "
    "(version 2: --cost-model measured or alpha-beta --profile FILE; spec §6.2, §6.3)";
inline constexpr char kBenchSummary[] =
    "run each mode's plan on real data (Gloo on this machine), check it and compare the "
    "modes, measured";

}  // namespace reshard

#endif  // RESHARD_CLI_BACKEND_COMMAND_SUMMARIES_H_
