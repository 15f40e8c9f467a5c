#include "cli/bench_run.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/child_processes.h"
#include "cli/collective_timing.h"
#include "collectives/executor.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/file_store.h"
#include "collectives/verify/shard_util.h"

namespace reshard {
namespace {

// Every mode failed with `status` (e.g. the rank never connected).
RankRuns FailedRuns(size_t modes, const absl::Status& status) {
  RankRuns runs;
  runs.us.resize(modes);
  for (size_t m = 0; m < modes; ++m) runs.last.push_back(status);
  return runs;
}

// One run of `p` on this rank: its source shard (untimed), a barrier, then
// Redistribute, timed.
absl::Status RunOnce(const PreparedCase& p, Communicator& comm, RankResult* out, double* us) {
  absl::StatusOr<LocalTensor> t = ShardOf(p.global, p.src, comm.coordinate(), p.spec_case.data_seed);
  if (!t.ok()) return t.status();
  ExecutionStats stats;
  if (absl::Status s = MeshBarrier(comm); !s.ok()) return s;
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = Redistribute(*t, p.src, p.dst, p.plan, comm, &stats); !s.ok()) return s;
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  *out = RankResult{*std::move(t), std::move(stats)};
  return absl::OkStatus();
}

}  // namespace

RankRuns RunBenchRank(const std::vector<PreparedCase>& modes, int64_t repeat,
                      Communicator& comm) {
  RankRuns runs;
  runs.us.resize(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    RankResult warm;
    double us = 0;
    absl::Status s = RunOnce(modes[m], comm, &warm, &us);  // connects the plan's groups
    runs.last.push_back(s.ok() ? absl::StatusOr<RankResult>(std::move(warm))
                               : absl::StatusOr<RankResult>(s));
  }
  for (int64_t r = 0; r < repeat; ++r) {
    for (size_t i = 0; i < modes.size(); ++i) {
      // Odd rounds run the modes in reverse (A B, B A, ...): a run's position
      // in its round measurably changes its time on a loaded machine.
      const size_t m = r % 2 == 0 ? i : modes.size() - 1 - i;
      if (!runs.last[m].ok()) continue;
      RankResult result;
      double us = 0;
      if (absl::Status s = RunOnce(modes[m], comm, &result, &us); !s.ok()) {
        runs.last[m] = s;
        continue;
      }
      runs.us[m].push_back(us);
      runs.last[m] = std::move(result);
    }
  }
  return runs;
}

std::vector<RankRuns> RunOnThreads(const std::vector<PreparedCase>& modes, int64_t repeat,
                                   const GlooOptions& options) {
  const DeviceMesh& mesh = modes.front().src.mesh();
  std::vector<RankRuns> runs(mesh.num_ranks());
  const std::vector<absl::Status> connect =
      RunRanksOnThreads(mesh, options, [&](GlooCommunicator& comm) {
        runs[comm.rank()] = RunBenchRank(modes, repeat, comm);
        return absl::OkStatus();
      });
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!connect[r].ok()) runs[r] = FailedRuns(modes.size(), connect[r]);
  }
  return runs;
}

namespace {

std::string ModeDir(const std::string& dir, size_t m) { return absl::StrCat(dir, "/mode", m); }
std::string TimesPath(const std::string& dir, size_t m, int64_t rank) {
  return absl::StrCat(ModeDir(dir, m), "/times.", rank);
}
std::string ErrorPath(const std::string& dir, size_t m, int64_t rank) {
  return absl::StrCat(ModeDir(dir, m), "/error.", rank);
}

// Per mode: its times (one per line) and result files, or the error.
absl::Status WriteRankRuns(const std::string& dir, int64_t rank, const RankRuns& runs) {
  for (size_t m = 0; m < runs.last.size(); ++m) {
    if (!runs.last[m].ok()) {
      std::ofstream(ErrorPath(dir, m, rank)) << runs.last[m].status().ToString();
      continue;
    }
    if (absl::Status s = WriteRankResult(ModeDir(dir, m), rank, *runs.last[m]); !s.ok()) return s;
    std::ofstream out(TimesPath(dir, m, rank));
    for (double us : runs.us[m]) out << absl::StrFormat("%.17g\n", us);
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", TimesPath(dir, m, rank)));
  }
  return absl::OkStatus();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// What rank `rank` wrote; a rank that wrote nothing fails every mode with its log.
RankRuns ReadRankRuns(const std::vector<PreparedCase>& modes, const std::string& dir,
                      int64_t rank) {
  RankRuns runs;
  runs.us.resize(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    if (std::filesystem::exists(ErrorPath(dir, m, rank))) {
      runs.last.push_back(absl::InternalError(ReadAll(ErrorPath(dir, m, rank))));
      continue;
    }
    std::ifstream in(TimesPath(dir, m, rank));
    for (double us; in >> us;) runs.us[m].push_back(us);
    absl::StatusOr<RankResult> r = ReadRankResult(ModeDir(dir, m), rank, modes[m]);
    if (!r.ok() && !in.is_open()) {
      r = absl::InternalError(absl::StrCat("rank ", rank, " gave no result: ",
                                           ReadAll(absl::StrCat(dir, "/log.", rank))));
    }
    runs.last.push_back(std::move(r));
  }
  return runs;
}

}  // namespace

int RunBenchChildRank(const std::vector<PreparedCase>& modes, int64_t repeat,
                      const GlooOptions& options, int64_t rank, const std::string& dir) {
  const DeviceMesh& mesh = modes.front().src.mesh();
  std::shared_ptr<Store> store = NewFileStore(dir);
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Connect(mesh, rank, store, options);
  RankRuns runs = comm.ok() ? RunBenchRank(modes, repeat, **comm)
                            : FailedRuns(modes.size(), comm.status());
  if (absl::Status s = WriteRankRuns(dir, rank, runs); !s.ok()) return 1;
  // Stay connected until every rank has written: peers may still be reading
  // what this rank sent.
  const absl::Time deadline = absl::Now() + options.timeout;
  if (comm.ok() && store->Set(absl::StrCat("done/", rank), {'1'}).ok()) {
    for (int64_t k = 0; k < mesh.num_ranks(); ++k) {
      if (!store->Get(absl::StrCat("done/", k), deadline - absl::Now()).ok()) break;
    }
  }
  return 0;
}

std::vector<RankRuns> RunInProcesses(const std::vector<PreparedCase>& modes, int64_t repeat,
                                     const GlooOptions& options,
                                     const std::vector<std::string>& child_args) {
  const int64_t n = modes.front().src.mesh().num_ranks();
  char pattern[] = "/tmp/reshard-bench-XXXXXX";
  std::vector<RankRuns> runs(n);
  if (mkdtemp(pattern) == nullptr) {
    for (RankRuns& r : runs) {
      r = FailedRuns(modes.size(), absl::InternalError("cannot create a temporary directory"));
    }
    return runs;
  }
  const std::string dir = pattern;
  for (size_t m = 0; m < modes.size(); ++m) std::filesystem::create_directory(ModeDir(dir, m));
  std::vector<pid_t> pids;
  for (int64_t rank = 0; rank < n; ++rank) {
    std::vector<std::string> args = child_args;
    args.insert(args.end(), {"--rank", absl::StrCat(rank), "--store-dir", dir});
    pids.push_back(SpawnRank(args, absl::StrCat(dir, "/log.", rank)));
  }
  // Every collective is bounded by the timeout; allow for many of them.
  const int64_t runs_per_rank = static_cast<int64_t>(modes.size()) * (repeat + 1);
  WaitForRanks(pids, absl::Now() + (2 + runs_per_rank) * options.timeout);
  for (int64_t rank = 0; rank < n; ++rank) runs[rank] = ReadRankRuns(modes, dir, rank);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return runs;
}

ModeMeasurement Measure(const PreparedCase& mode, std::vector<RankRuns>& runs, size_t index,
                        int64_t repeat) {
  ModeMeasurement out;
  std::vector<absl::StatusOr<RankResult>> results;
  bool complete = true;
  for (RankRuns& r : runs) {
    complete = complete && static_cast<int64_t>(r.us[index].size()) == repeat;
    for (size_t i = 0; i < r.us[index].size(); ++i) {
      if (out.run_us.size() <= i) out.run_us.push_back(0);
      out.run_us[i] = std::max(out.run_us[i], r.us[index][i]);
    }
    if (r.last[index].ok()) {
      out.bytes_sent_max = std::max(out.bytes_sent_max, r.last[index]->stats.bytes_sent());
    }
    results.push_back(std::move(r.last[index]));
  }
  const CaseReport report = Check(mode, results);
  out.verified = complete && report.outcome == Outcome::kPassed;
  out.detail = report.detail;
  if (!complete && out.detail.empty()) out.detail = "a rank did not run every repetition";
  // The slowest rank's time is only known for rounds every rank finished.
  size_t rounds = out.run_us.size();
  for (RankRuns& r : runs) rounds = std::min(rounds, r.us[index].size());
  out.run_us.resize(rounds);
  return out;
}

}  // namespace reshard
