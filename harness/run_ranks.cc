#include "harness/run_ranks.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/file_store.h"
#include "collectives/stores/redis_store.h"
#include "harness/child_processes.h"

namespace reshard {
namespace {

std::vector<absl::StatusOr<std::string>> OnThreads(const DeviceMesh& mesh, const LaunchOptions& o,
                                                   const RankFunction& fn) {
  std::vector<absl::StatusOr<std::string>> outputs(mesh.num_ranks(), absl::UnknownError("not run"));
  const std::vector<absl::Status> connect =
      RunRanksOnThreads(mesh, o.gloo, [&](GlooCommunicator& comm) {
        Rank rank{comm, [&comm] { comm.Abort(); }};
        outputs[comm.rank()] = fn(rank);
        return absl::OkStatus();
      });
  for (size_t r = 0; r < outputs.size(); ++r) {
    if (!connect[r].ok()) outputs[r] = connect[r];
  }
  return outputs;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string OutputPath(const std::string& dir, int64_t rank) {
  return absl::StrCat(dir, "/output.", rank);
}
std::string ErrorPath(const std::string& dir, int64_t rank) {
  return absl::StrCat(dir, "/error.", rank);
}
std::string LogPath(const std::string& dir, int64_t rank) {
  return absl::StrCat(dir, "/log.", rank);
}

// How a rank's process ended (WaitForRanks' exit code), for messages.
std::string DescribeExit(int exit_code) {
  if (exit_code == 127) return "could not be started (exit code 127)";
  if (exit_code > 128) {
    return absl::StrFormat("was killed by signal %d (%s)", exit_code - 128,
                           strsignal(exit_code - 128));
  }
  return absl::StrFormat("exited with %d", exit_code);
}

// What a host tells the others about one of its ranks: "R<output>", or
// "E<why it failed>" (never empty). `stopped` says why this host killed its
// ranks, if it did.
std::string Outcome(const std::string& dir, int64_t rank, int exit_code,
                    const std::string& stopped) {
  if (exit_code == 0) return absl::StrCat("R", ReadFile(OutputPath(dir, rank)));
  std::string why = ReadFile(ErrorPath(dir, rank));
  if (why.empty()) why = ReadFile(LogPath(dir, rank));
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (why.empty()) why = stopped.empty() ? "it left no message" : stopped;
  return absl::StrFormat("Eprocess %s: %s", DescribeExit(exit_code), why);
}

// OK while the other hosts (if any) are alive and the job goes on.
absl::Status JobAlive(const LaunchOptions& o) {
  return o.job_membership == nullptr ? absl::OkStatus() : o.job_membership->Check();
}

absl::StatusOr<std::string> FromOutcome(absl::string_view outcome, int64_t rank) {
  if (!outcome.empty() && outcome[0] == 'R') return std::string(outcome.substr(1));
  if (!outcome.empty() && outcome[0] == 'E') return absl::InternalError(outcome.substr(1));
  return absl::InternalError(absl::StrCat("rank ", rank, ": malformed result in the store"));
}

// The other hosts' ranks (those still unknown), as their hosts published them.
void GatherOtherHosts(const LaunchOptions& o, const std::string& dir,
                      std::vector<absl::StatusOr<std::string>>& outputs) {
  absl::StatusOr<std::shared_ptr<Store>> store = OpenRankStore(o, dir);
  // The other hosts' ranks may still run: wait as long as they may take,
  // unless a host or the store dies first (polled, never one long Get).
  const absl::Time deadline = absl::Now() + o.wait + absl::Seconds(20);
  std::vector<size_t> waiting;
  for (size_t r = 0; r < outputs.size(); ++r) {
    if (outputs[r].status().code() != absl::StatusCode::kUnknown) continue;
    if (!store.ok()) {
      outputs[r] = store.status();
    } else {
      waiting.push_back(r);
    }
  }
  while (!waiting.empty()) {
    std::vector<size_t> still;
    for (size_t r : waiting) {
      absl::StatusOr<std::vector<char>> bytes =
          (*store)->Get(absl::StrCat(o.job, "/result/", r), absl::ZeroDuration());
      if (bytes.ok()) {
        outputs[r] = FromOutcome(absl::string_view(bytes->data(), bytes->size()), r);
      } else if (bytes.status().code() == absl::StatusCode::kDeadlineExceeded) {
        still.push_back(r);
      } else {
        outputs[r] = bytes.status();
      }
    }
    waiting = std::move(still);
    if (waiting.empty()) return;
    absl::Status alive = JobAlive(o);
    if (alive.ok() && absl::Now() >= deadline) {
      alive = absl::DeadlineExceededError(
          absl::StrCat("its host published no result within ",
                       absl::FormatDuration(o.wait + absl::Seconds(20))));
    }
    if (!alive.ok()) {
      for (size_t r : waiting) outputs[r] = alive;
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

// This host's ranks as child processes; on several hosts, published for the
// others and theirs read back.
std::vector<absl::StatusOr<std::string>> InProcesses(const DeviceMesh& mesh,
                                                     const LaunchOptions& o) {
  const int64_t n = mesh.num_ranks();
  std::vector<absl::StatusOr<std::string>> outputs(n, absl::UnknownError("no result"));
  char pattern[] = "/tmp/reshard-ranks-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    for (auto& out : outputs) out = absl::InternalError("cannot create a temporary directory");
    return outputs;
  }
  const std::string dir = pattern;
  const bool hosts = o.on == RanksOn::kHosts;
  const int64_t first = hosts ? std::min(o.first_rank, n) : 0;
  const int64_t last = hosts && o.last_rank >= 0 ? std::min(o.last_rank, n - 1) : n - 1;
  std::vector<pid_t> pids;
  for (int64_t rank = first; rank <= last; ++rank) {
    std::vector<std::string> args = o.child_args;
    args.insert(args.end(), {"--rank", absl::StrCat(rank), "--store-dir", dir, "--job", o.job});
    pids.push_back(SpawnRank(args, LogPath(dir, rank)));
  }
  // A dead host or store stops the wait (and the ranks) at once.
  const absl::Time deadline = absl::Now() + o.wait;
  absl::Status alive;
  const std::vector<int> exit_codes = WaitForRanks(pids, deadline, [&] {
    alive = JobAlive(o);
    return !alive.ok();
  });
  std::string stopped;
  if (!alive.ok()) {
    stopped = absl::StrCat("this host stopped it: ", alive.message());
  } else if (absl::Now() >= deadline) {
    stopped = absl::StrCat("this host stopped it after ", absl::FormatDuration(o.wait));
  }
  absl::StatusOr<std::shared_ptr<Store>> store =
      hosts ? OpenRankStore(o, dir) : absl::StatusOr<std::shared_ptr<Store>>(nullptr);
  for (int64_t rank = first; rank <= last; ++rank) {
    const std::string outcome = Outcome(dir, rank, exit_codes[rank - first], stopped);
    outputs[rank] = FromOutcome(outcome, rank);
    if (hosts && store.ok()) {
      (*store)
          ->Set(absl::StrCat(o.job, "/result/", rank),
                std::vector<char>(outcome.begin(), outcome.end()))
          .IgnoreError();
    }
  }
  if (hosts) GatherOtherHosts(o, dir, outputs);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return outputs;
}

}  // namespace

std::vector<absl::StatusOr<std::string>> RunRanks(const DeviceMesh& mesh,
                                                  const LaunchOptions& options,
                                                  const RankFunction& fn) {
  if (options.on == RanksOn::kThreads) return OnThreads(mesh, options, fn);
  return InProcesses(mesh, options);
}

int RunChildRank(const DeviceMesh& mesh, const ChildRank& child, const LaunchOptions& options,
                 const RankFunction& fn) {
  absl::StatusOr<std::shared_ptr<Store>> store = OpenRankStore(options, child.dir);
  if (!store.ok()) return FailChildRank(child, store.status());
  // A failed rank is done too: its peers need not wait for it at the end.
  auto fail = [&](const absl::Status& s) {
    (*store)->Set(absl::StrCat(child.job, "/done/", child.rank), {'1'}).IgnoreError();
    return FailChildRank(child, s);
  };
  GlooOptions gloo = options.gloo;
  gloo.prefix = absl::StrCat(child.job, "/gloo");
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Connect(mesh, child.rank, *store, gloo);
  if (!comm.ok()) return fail(comm.status());
  Rank rank{**comm, [] { _exit(9); }};
  absl::StatusOr<std::string> output = fn(rank);
  if (!output.ok()) return fail(output.status());
  if (absl::Status s = WriteFile(OutputPath(child.dir, child.rank), *output); !s.ok()) {
    return fail(s);
  }
  // Keep the connections open until every rank is done (a peer may still be
  // reading what this rank sent). Our own output is written; a peer that
  // never finished fails the run itself, so a store error here is no error
  // of this rank.
  const absl::Time deadline = absl::Now() + options.gloo.timeout;
  if ((*store)->Set(absl::StrCat(child.job, "/done/", child.rank), {'1'}).ok()) {
    for (int64_t k = 0; k < mesh.num_ranks(); ++k) {
      if (!(*store)->Get(absl::StrCat(child.job, "/done/", k), deadline - absl::Now()).ok()) break;
    }
  }
  return 0;
}

absl::StatusOr<std::shared_ptr<Store>> OpenRankStore(const LaunchOptions& options,
                                                     const std::string& dir) {
  if (options.store_url.empty()) return NewFileStore(dir);
  return NewStoreFromUrl(options.store_url, options.gloo.timeout);
}

int FailChildRank(const ChildRank& child, const absl::Status& error) {
  std::ofstream(ErrorPath(child.dir, child.rank)) << error.ToString();
  return 1;
}

absl::Status FirstRankError(const std::vector<absl::StatusOr<std::string>>& outputs) {
  for (size_t rank = 0; rank < outputs.size(); ++rank) {
    if (!outputs[rank].ok()) {
      return absl::Status(outputs[rank].status().code(),
                          absl::StrCat("rank ", rank, ": ", outputs[rank].status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard
