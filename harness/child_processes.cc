#include "harness/child_processes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "absl/time/clock.h"

namespace reshard {

pid_t SpawnRank(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    if (freopen(log.c_str(), "w", stdout) == nullptr ||
        freopen(log.c_str(), "a", stderr) == nullptr) {
      _exit(127);
    }
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

std::vector<int> WaitForRanks(const std::vector<pid_t>& pids, absl::Time deadline,
                              const std::function<bool()>& stop) {
  const size_t n = pids.size();
  std::vector<int> exit_codes(n, -1);
  for (size_t r = 0; r < n; ++r) {
    if (pids[r] <= 0) exit_codes[r] = 127;
  }
  auto running = [&] { return std::count(exit_codes.begin(), exit_codes.end(), -1); };
  while (running() > 0 && absl::Now() < deadline) {
    for (size_t r = 0; r < n; ++r) {
      int status = 0;
      if (exit_codes[r] == -1 && waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        exit_codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    if (running() == 0 || (stop && stop())) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  for (size_t r = 0; r < n; ++r) {
    if (exit_codes[r] != -1) continue;
    kill(pids[r], SIGKILL);
    waitpid(pids[r], nullptr, 0);
    exit_codes[r] = 128 + SIGKILL;
  }
  return exit_codes;
}

}  // namespace reshard
