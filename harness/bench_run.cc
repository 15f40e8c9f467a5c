#include "harness/bench_run.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collectives/executor.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/check.h"
#include "harness/ground_truth.h"
#include "harness/mesh_barrier.h"
#include "harness/rank_result_bytes.h"

namespace reshard {
namespace {

// Every mode failed with `status` (e.g. the rank never connected).
RankRuns FailedRuns(size_t modes, const absl::Status& status) {
  RankRuns runs;
  runs.us.resize(modes);
  for (size_t m = 0; m < modes; ++m) runs.last.push_back(status);
  return runs;
}

// One run of `p` on this rank: a barrier, a copy of `source` (its source
// shard) into a buffer of the communicator's copy engine, a barrier, then
// Redistribute, timed. The copy is the step's input as a training loop holds
// it, a buffer of its caching allocator, which Redistribute consumes (back to
// the engine's cache). The first barrier keeps that untimed work off the
// cores while a slower rank is still in its timed call, as calibrate's
// back-to-back probes are: recomputing the shard there (ShardOf, now once
// per mode) inflated Partial sources' medians about 2x (bench/README.md,
// issue 15).
absl::Status RunOnce(const PreparedCase& p, const LocalTensor& source, Communicator& comm,
                     RankResult* out, double* us) {
  if (absl::Status s = MeshBarrier(comm); !s.ok()) return s;
  absl::StatusOr<LocalTensor> t = CopyOf(comm.copy_engine(), source);
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

RankRuns RunBenchRank(const std::vector<PreparedCase>& modes, int64_t repeat, Communicator& comm) {
  RankRuns runs;
  runs.us.resize(modes.size());
  std::vector<LocalTensor> sources(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    const PreparedCase& p = modes[m];
    absl::StatusOr<LocalTensor> source =
        ShardOf(p.global, p.src, comm.coordinate(), p.spec_case.data_seed);
    RankResult warm;
    double us = 0;
    absl::Status s = source.status();
    if (s.ok()) {
      sources[m] = *std::move(source);
      s = RunOnce(p, sources[m], comm, &warm, &us);  // connects the plan's groups
    }
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
      if (absl::Status s = RunOnce(modes[m], sources[m], comm, &result, &us); !s.ok()) {
        runs.last[m] = s;
        continue;
      }
      runs.us[m].push_back(us);
      runs.last[m] = std::move(result);
    }
  }
  return runs;
}

namespace {

// Per mode "R<size>\n<times, comma-separated>\n<EncodeRankResult>" or
// "E<size>\n<why it failed>".
std::string EncodeRankRuns(const RankRuns& runs) {
  std::string out;
  for (size_t m = 0; m < runs.last.size(); ++m) {
    if (!runs.last[m].ok()) {
      const std::string why = runs.last[m].status().ToString();
      absl::StrAppend(&out, "E", why.size(), "\n", why);
      continue;
    }
    std::vector<std::string> times;
    for (double us : runs.us[m]) times.push_back(absl::StrFormat("%.17g", us));
    const std::string payload =
        absl::StrCat(absl::StrJoin(times, ","), "\n", EncodeRankResult(*runs.last[m]));
    absl::StrAppend(&out, "R", payload.size(), "\n", payload);
  }
  return out;
}

// One mode's record of EncodeRankRuns, consumed from `bytes`.
absl::Status DecodeMode(absl::string_view& bytes, const PreparedCase& mode, int64_t rank,
                        std::vector<double>* us, absl::StatusOr<RankResult>* last) {
  const size_t newline = bytes.find('\n');
  size_t size = 0;
  if (bytes.empty() || newline == absl::string_view::npos ||
      !absl::SimpleAtoi(bytes.substr(1, newline - 1), &size) || newline + 1 + size > bytes.size()) {
    return absl::DataLossError(absl::StrCat("rank ", rank, ": malformed bench result"));
  }
  const char kind = bytes[0];
  absl::string_view payload = bytes.substr(newline + 1, size);
  bytes.remove_prefix(newline + 1 + size);
  if (kind == 'E') {
    *last = absl::InternalError(payload);
    return absl::OkStatus();
  }
  const size_t end = payload.find('\n');
  if (kind != 'R' || end == absl::string_view::npos) {
    return absl::DataLossError(absl::StrCat("rank ", rank, ": malformed bench result"));
  }
  for (absl::string_view t : absl::StrSplit(payload.substr(0, end), ',', absl::SkipEmpty())) {
    double v = 0;
    if (!absl::SimpleAtod(t, &v)) return absl::DataLossError("malformed time in a bench result");
    us->push_back(v);
  }
  *last = DecodeRankResult(payload.substr(end + 1), mode, rank);
  return absl::OkStatus();
}

// A rank's output back as RankRuns; a rank that failed fails every mode.
RankRuns DecodeRankRuns(const std::vector<PreparedCase>& modes, int64_t rank,
                        const absl::StatusOr<std::string>& output) {
  if (!output.ok()) return FailedRuns(modes.size(), output.status());
  RankRuns runs;
  runs.us.resize(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) runs.last.emplace_back(absl::UnknownError("no result"));
  absl::string_view bytes = *output;
  for (size_t m = 0; m < modes.size(); ++m) {
    absl::Status s = DecodeMode(bytes, modes[m], rank, &runs.us[m], &runs.last[m]);
    if (!s.ok()) return FailedRuns(modes.size(), s);
  }
  return runs;
}

// The launch options with the wait bench needs: every collective is bounded
// by the timeout; allow for many of them.
LaunchOptions WithWait(const std::vector<PreparedCase>& modes, int64_t repeat,
                       LaunchOptions launch) {
  const int64_t runs_per_rank = static_cast<int64_t>(modes.size()) * (repeat + 1);
  launch.wait = (2 + runs_per_rank) * launch.gloo.timeout;
  return launch;
}

RankFunction BenchRank(const std::vector<PreparedCase>& modes, int64_t repeat) {
  return [&modes, repeat](Rank& rank) -> absl::StatusOr<std::string> {
    return EncodeRankRuns(RunBenchRank(modes, repeat, rank.comm));
  };
}

}  // namespace

std::vector<RankRuns> RunBench(const std::vector<PreparedCase>& modes, int64_t repeat,
                               const LaunchOptions& launch) {
  const DeviceMesh& mesh = modes.front().src.mesh();
  const std::vector<absl::StatusOr<std::string>> outputs =
      RunRanks(mesh, WithWait(modes, repeat, launch), BenchRank(modes, repeat));
  std::vector<RankRuns> runs;
  for (size_t r = 0; r < outputs.size(); ++r) runs.push_back(DecodeRankRuns(modes, r, outputs[r]));
  return runs;
}

int RunBenchChild(const std::vector<PreparedCase>& modes, int64_t repeat, const ChildRank& child,
                  const LaunchOptions& launch) {
  return RunChildRank(modes.front().src.mesh(), child, WithWait(modes, repeat, launch),
                      BenchRank(modes, repeat));
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
  out.out_of_resources = report.outcome == Outcome::kSkipped;
  if (!complete && out.detail.empty()) out.detail = "a rank did not run every repetition";
  // The slowest rank's time is only known for rounds every rank finished.
  size_t rounds = out.run_us.size();
  for (RankRuns& r : runs) rounds = std::min(rounds, r.us[index].size());
  out.run_us.resize(rounds);
  return out;
}

}  // namespace reshard
