#include "cli/verify_processes.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "cli/child_processes.h"
#include "collectives/stores/file_store.h"
#include "collectives/stores/redis_store.h"
#include "collectives/verify/faulty_communicator.h"

namespace reshard {
namespace {

// The argv that runs one rank of `c` in a child process.
std::vector<std::string> ChildArgs(const VerifyCase& c, int64_t rank, const std::string& dir,
                                   const ProcessOptions& o, const std::string& job) {
  std::vector<std::string> args = {"reshard", "verify"};
  if (o.fault.rank >= 0) {
    args.insert(args.end(), {"--kill-rank", absl::StrCat(o.fault.rank), "--kill-at",
                             absl::StrCat(o.fault.at_call)});
  }
  if (!o.store_url.empty()) args.insert(args.end(), {"--store", o.store_url});
  if (!o.gloo.interface.empty()) args.insert(args.end(), {"--interface", o.gloo.interface});
  args.insert(args.end(), {"--hostname", o.gloo.hostname, "--mesh", absl::StrJoin(c.mesh, ","),
                           "--shape", absl::StrJoin(c.shape, ","), "--dtype",
                           std::string(DTypeName(c.dtype)), "--src=" + c.src, "--dst=" + c.dst,
                           "--algorithm", std::string(AlgorithmName(c.algorithm)), "--mode",
                           std::string(PlanModeName(c.mode)), "--seed",
                           absl::StrCat(c.data_seed), "--timeout",
                           absl::StrCat(absl::ToInt64Seconds(o.gloo.timeout)), "--rank",
                           absl::StrCat(rank), "--store-dir", dir, "--job", job});
  return args;
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

absl::StatusOr<std::shared_ptr<Store>> OpenStore(const ProcessOptions& o, const std::string& dir) {
  if (o.store_url.empty()) return NewFileStore(dir);
  return NewStoreFromUrl(o.store_url, o.gloo.timeout);
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

// What a host tells the others about one of its ranks: "R<size of the
// stats file>\n<stats><tensor bytes>", or "E<why it failed>". `stopped` says
// why this host killed its ranks, if it did.
std::string EncodeOutcome(const std::string& dir, int64_t rank, int exit_code,
                          const std::string& stopped) {
  if (exit_code == 0) {
    const std::string stats = ReadFile(absl::StrCat(dir, "/stats.", rank));
    return absl::StrCat("R", stats.size(), "\n", stats, ReadFile(absl::StrCat(dir, "/result.", rank)));
  }
  std::string why = ReadFile(absl::StrCat(dir, "/error.", rank));
  if (why.empty()) why = ReadFile(absl::StrCat(dir, "/log.", rank));
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (why.empty()) why = stopped.empty() ? "it left no message" : stopped;
  return absl::StrFormat("Eprocess %s: %s", DescribeExit(exit_code), why);
}

// OK while the other hosts (if any) are alive and the job goes on.
absl::Status JobAlive(const ProcessOptions& o) {
  return o.job == nullptr ? absl::OkStatus() : o.job->Check();
}

absl::StatusOr<RankResult> DecodeOutcome(absl::string_view bytes, const std::string& dir,
                                         int64_t rank, const PreparedCase& p) {
  if (!bytes.empty() && bytes[0] == 'E') return absl::InternalError(bytes.substr(1));
  const size_t newline = bytes.find('\n');
  size_t stats_size = 0;
  if (bytes.empty() || bytes[0] != 'R' || newline == absl::string_view::npos ||
      !absl::SimpleAtoi(bytes.substr(1, newline - 1), &stats_size) ||
      newline + 1 + stats_size > bytes.size()) {
    return absl::InternalError(absl::StrCat("rank ", rank, ": malformed result in the store"));
  }
  RESHARD_RETURN_IF_ERROR(
      WriteFile(absl::StrCat(dir, "/stats.", rank), bytes.substr(newline + 1, stats_size)));
  RESHARD_RETURN_IF_ERROR(
      WriteFile(absl::StrCat(dir, "/result.", rank), bytes.substr(newline + 1 + stats_size)));
  return ReadRankResult(dir, rank, p);
}

// Each of `waiting`'s results from the store, polling until all are there,
// the job fails (a host or the store died) or `deadline` passes.
void AwaitResults(Store& store, const std::string& job, const PreparedCase& p,
                  const ProcessOptions& o, const std::string& dir, absl::Time deadline,
                  std::vector<int64_t> waiting, std::vector<absl::StatusOr<RankResult>>& results) {
  while (!waiting.empty()) {
    std::vector<int64_t> still;
    for (int64_t r : waiting) {
      absl::StatusOr<std::vector<char>> bytes =
          store.Get(absl::StrCat(job, "/result/", r), absl::ZeroDuration());
      if (bytes.ok()) {
        results[r] = DecodeOutcome(absl::string_view(bytes->data(), bytes->size()), dir, r, p);
      } else if (bytes.status().code() == absl::StatusCode::kDeadlineExceeded) {
        still.push_back(r);
      } else {
        results[r] = bytes.status();
      }
    }
    waiting = std::move(still);
    if (waiting.empty()) return;
    absl::Status alive = JobAlive(o);
    if (alive.ok() && absl::Now() >= deadline) {
      alive = absl::DeadlineExceededError(
          "its host published no result within 2x the timeout + 30s");
    }
    if (!alive.ok()) {
      for (int64_t r : waiting) results[r] = alive;
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

// Every rank's result: this host's from its children's files, the others'
// from the store (published there by their hosts).
std::vector<absl::StatusOr<RankResult>> GatherResults(
    const PreparedCase& p, const ProcessOptions& o, const std::string& job,
    const std::string& dir, int64_t first, const std::vector<int>& exit_codes,
    const std::string& stopped) {
  const int64_t n = p.src.mesh().num_ranks();
  std::vector<absl::StatusOr<RankResult>> results;
  for (int64_t r = 0; r < n; ++r) results.emplace_back(absl::UnknownError("no result"));
  absl::StatusOr<std::shared_ptr<Store>> store = OpenStore(o, dir);
  for (int64_t r = 0; r < n; ++r) {
    const bool mine = r >= first && r < first + static_cast<int64_t>(exit_codes.size());
    if (mine) {
      const std::string outcome = EncodeOutcome(dir, r, exit_codes[r - first], stopped);
      results[r] = DecodeOutcome(outcome, dir, r, p);
      if (!o.store_url.empty() && store.ok()) {
        (*store)->Set(absl::StrCat(job, "/result/", r),
                      std::vector<char>(outcome.begin(), outcome.end())).IgnoreError();
      }
    }
  }
  // The other hosts' ranks may still run: wait as long as they may take,
  // unless a host or the store dies first.
  std::vector<int64_t> waiting;
  for (int64_t r = 0; r < n; ++r) {
    if (results[r].status().code() != absl::StatusCode::kUnknown) continue;
    if (!store.ok()) {
      results[r] = store.status();
    } else {
      waiting.push_back(r);
    }
  }
  if (store.ok()) {
    AwaitResults(**store, job, p, o, dir, absl::Now() + 2 * o.gloo.timeout + absl::Seconds(30),
                 std::move(waiting), results);
  }
  return results;
}

}  // namespace

int RunChildRank(const VerifyCase& c, int64_t rank, const std::string& dir,
                 const ProcessOptions& o, const std::string& job) {
  auto fail = [&](const absl::Status& s) {
    std::ofstream(absl::StrCat(dir, "/error.", rank)) << s.ToString();
    return 1;
  };
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) return fail(p.status());
  absl::StatusOr<std::shared_ptr<Store>> store = OpenStore(o, dir);
  if (!store.ok()) return fail(store.status());
  GlooOptions gloo = o.gloo;
  gloo.prefix = absl::StrCat(job, "/gloo");
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Connect(p->src.mesh(), rank, *store, gloo);
  if (!comm.ok()) return fail(comm.status());
  absl::StatusOr<RankResult> r = absl::UnknownError("not run");
  if (rank == o.fault.rank) {
    FaultyCommunicator faulty(**comm, o.fault.at_call, [] { _exit(9); });
    r = RunRank(*p, faulty);
  } else {
    r = RunRank(*p, **comm);
  }
  if (!r.ok()) return fail(r.status());
  if (absl::Status s = WriteRankResult(dir, rank, *r); !s.ok()) return fail(s);
  // Keep the connections open until every rank is done (a peer may still be
  // reading what this rank sent). Our own result is written; a peer that
  // never finished fails the case itself, so a store error here is no error
  // of this rank.
  const absl::Time deadline = absl::Now() + o.gloo.timeout;
  if ((*store)->Set(absl::StrCat(job, "/done/", rank), {'1'}).ok()) {
    for (int64_t k = 0; k < p->src.mesh().num_ranks(); ++k) {
      if (!(*store)->Get(absl::StrCat(job, "/done/", k), deadline - absl::Now()).ok()) break;
    }
  }
  return 0;
}

CaseReport VerifyInProcesses(const VerifyCase& c, const ProcessOptions& o, const std::string& job) {
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) {
    if (!IsSkip(p.status())) return {Outcome::kFailed, absl::StrCat("bad case: ", p.status().ToString())};
    CaseReport r{Outcome::kSkipped, std::string(p.status().message())};
    r.unsupported = p.status().code() == absl::StatusCode::kUnimplemented;
    return r;
  }
  char pattern[] = "/tmp/reshard-verify-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return {Outcome::kFailed, "cannot create a temporary directory"};
  const std::string dir = pattern;
  const int64_t n = p->src.mesh().num_ranks();
  const int64_t first = std::min(o.first_rank, n);
  const int64_t last = o.last_rank < 0 ? n - 1 : std::min(o.last_rank, n - 1);
  std::vector<pid_t> pids;
  for (int64_t rank = first; rank <= last; ++rank) {
    pids.push_back(SpawnRank(ChildArgs(c, rank, dir, o, job), absl::StrCat(dir, "/log.", rank)));
  }
  // Every rank gives up on its peers after the timeout; allow for start-up.
  // A dead host or store stops the wait (and the ranks) at once.
  const absl::Duration limit = 2 * o.gloo.timeout + absl::Seconds(10);
  const absl::Time deadline = absl::Now() + limit;
  absl::Status alive;
  const std::vector<int> exit_codes = WaitForRanks(pids, deadline, [&] {
    alive = JobAlive(o);
    return !alive.ok();
  });
  std::string stopped;
  if (!alive.ok()) {
    stopped = absl::StrCat("this host stopped it: ", alive.message());
  } else if (absl::Now() >= deadline) {
    stopped = absl::StrCat("this host stopped it after ", absl::FormatDuration(limit),
                           " (2x the timeout + 10s)");
  }
  std::vector<absl::StatusOr<RankResult>> results =
      GatherResults(*p, o, job, dir, first, exit_codes, stopped);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return Check(*p, results);
}

}  // namespace reshard
