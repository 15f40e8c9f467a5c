#include "cli/backend_exec.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/backend_command_summaries.h"

namespace reshard {

absl::StatusOr<std::string> ReshardBackendsPath() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot find this executable's directory (/proc/self/exe: ", std::strerror(errno),
        "), where ", kReshardBackends, " should be"));
  }
  const std::string path(self, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return absl::StrCat(path.substr(0, slash == std::string::npos ? 0 : slash + 1), kReshardBackends);
}

namespace {

absl::Status CannotRun(const std::string& command, const std::string& path, int error) {
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot run ", path, " (", std::strerror(error), "): `reshard ", command,
      "` runs in reshard-backends, which links the execution backends (Gloo, hiredis) that "
      "reshard does not; build both with `bazel build //cli:reshard` (bazel-bin/cli/ then "
      "holds reshard and reshard-backends) and keep the two in one directory"));
}

}  // namespace

CommandResult ExecReshardBackends(const std::string& command,
                                  const std::vector<std::string>& args) {
  absl::StatusOr<std::string> path = ReshardBackendsPath();
  if (!path.ok()) return path.status();
  if (access(path->c_str(), X_OK) != 0) return CannotRun(command, *path, errno);
  std::vector<std::string> argv = {*path, command};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  std::cout.flush();
  execv(path->c_str(), c_argv.data());
  return CannotRun(command, *path, errno);
}

std::vector<Command> ForwardedBackendCommands() {
  std::vector<Command> commands;
  for (const auto& [name, summary] : {std::pair<std::string, const char*>{"verify", kVerifySummary},
                                      {"calibrate", kCalibrateSummary},
                                      {"bench", kBenchSummary}}) {
    Command c;
    c.name = name;
    c.summary = summary;
    c.error_prefix = absl::StrCat("reshard ", name);
    c.pass_through = [name = name](const std::vector<std::string>& args) {
      return ExecReshardBackends(name, args);
    };
    commands.push_back(std::move(c));
  }
  return commands;
}

}  // namespace reshard
