// RunBackendCommand in `reshard`: executes `reshard-backends`, which Bazel
// builds next to `reshard` (cli/BUILD.bazel: it is a data dependency).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/backend_commands.h"
#include "cli/commands.h"

namespace reshard {
namespace {

// This binary's directory, from /proc/self/exe (symbolic links resolved, so
// a runfiles link or a link in PATH finds the real build output's sibling).
std::string OwnDirectory() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  const std::string self(path, static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

}  // namespace

int RunBackendCommand(const std::string& command, const std::vector<std::string>& args) {
  const std::string backends = OwnDirectory() + "/reshard-backends";
  std::vector<std::string> strings = {backends, command};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv(backends.c_str(), argv.data());
  const int error = errno;
  std::cerr << "reshard: " << command << " runs " << backends
            << ", which could not be started: " << std::strerror(error)
            << " (build //cli:reshard, which builds it, or copy it next to reshard)\n";
  return kExitInternal;
}

}  // namespace reshard
