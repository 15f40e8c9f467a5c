#include "harness/cross_mesh_bench.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/cross_mesh_executor.h"
#include "collectives/naive_cross_mesh_executor.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/check.h"
#include "harness/cross_mesh_runner.h"
#include "harness/ground_truth.h"
#include "harness/mesh_barrier.h"

namespace reshard {
namespace {

// What one participant measured, per mode.
struct ParticipantRuns {
  std::vector<std::vector<double>> us;
  std::vector<ParticipantResult> last;
};

// Participant `index`'s source block (empty for a participant that is no
// source rank).
absl::StatusOr<LocalTensor> SourceOf(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                                     const LocalTensor& global, uint64_t seed, int64_t index) {
  const auto src =
      std::find(plan.src_ranks.begin(), plan.src_ranks.end(), plan.participants[index]);
  if (src == plan.src_ranks.end()) return LocalTensor::Zeros(r.src.dtype(), {0});
  return ShardOf(global, r.src, r.src.mesh().Coordinate(src - plan.src_ranks.begin()), seed);
}

// One run of `m` on participant `index`, as bench_run.cc's: a barrier, an
// untimed copy of `source` into the copy engine's cache, a barrier over the
// participants, the move, timed.
absl::Status RunOnce(const CrossMeshRequest& r, const AcrossMode& m, const LocalTensor& source,
                     int64_t index, const ParticipantComms& c, ParticipantResult* out, double* us) {
  const CrossMeshPlan& plan = m.plan;
  const int64_t rank = plan.participants[index];
  RESHARD_RETURN_IF_ERROR(MeshBarrier(*c.union_comm));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor t, CopyOf(c.union_comm->copy_engine(), source));
  RESHARD_RETURN_IF_ERROR(MeshBarrier(*c.union_comm));
  CrossingStats stats;
  const auto start = std::chrono::steady_clock::now();
  RESHARD_RETURN_IF_ERROR(
      m.naive.has_value()
          ? RedistributeAcrossNaive(t, r, *m.naive, rank, c.src, c.dst, *c.union_comm, &stats)
          : RedistributeAcross(t, r, plan, rank, c.src, c.dst, *c.union_comm, &stats));
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  out->tensor = std::move(t);
  out->stats = stats;
  out->status = absl::OkStatus();
  return absl::OkStatus();
}

// Participant `index`'s part: a warm-up run per mode, then the rounds. A
// mode that fails is dropped from later rounds (its last result says why).
ParticipantRuns RunParticipant(const CrossMeshRequest& r, const std::vector<AcrossMode>& modes,
                               const LocalTensor& global, uint64_t seed, int64_t repeat,
                               int64_t index, const ParticipantComms& c) {
  ParticipantRuns runs;
  runs.us.resize(modes.size());
  runs.last.resize(modes.size());
  // Once, not per round: the same block for every mode (bench_run.cc says why).
  absl::StatusOr<LocalTensor> source = SourceOf(r, modes.front().plan, global, seed, index);
  for (size_t m = 0; m < modes.size(); ++m) {
    double us = 0;
    absl::Status s = source.status();
    if (s.ok()) s = RunOnce(r, modes[m], *source, index, c, &runs.last[m], &us);
    if (!s.ok()) runs.last[m].status = s;
  }
  for (int64_t round = 0; round < repeat; ++round) {
    for (size_t i = 0; i < modes.size(); ++i) {
      // Odd rounds in reverse, as bench_run.h: a run's place in its round
      // changes its time on a loaded machine.
      const size_t m = round % 2 == 0 ? i : modes.size() - 1 - i;
      if (!runs.last[m].status.ok()) continue;
      double us = 0;
      absl::Status s = RunOnce(r, modes[m], *source, index, c, &runs.last[m], &us);
      if (!s.ok()) {
        runs.last[m].status = s;
        continue;
      }
      runs.us[m].push_back(us);
    }
  }
  return runs;
}

// Mode `m`'s measurement from every participant's runs.
AcrossMeasurement Measure(const CrossMeshRequest& r, const AcrossMode& mode,
                          const LocalTensor& global, uint64_t seed, int64_t repeat,
                          std::vector<ParticipantRuns>& runs, size_t m) {
  AcrossMeasurement out;
  std::vector<ParticipantResult> results;
  size_t rounds = static_cast<size_t>(repeat);
  for (ParticipantRuns& p : runs) {
    rounds = std::min(rounds, p.us[m].size());
    for (size_t i = 0; i < p.us[m].size(); ++i) {
      if (out.run_us.size() <= i) out.run_us.push_back(0);
      out.run_us[i] = std::max(out.run_us[i], p.us[m][i]);
    }
    const CrossingStats& s = p.last[m].stats;
    out.bytes_sent_max = std::max(out.bytes_sent_max, s.bytes_sent + s.steps_bytes_sent);
    out.crossing_bytes_sent_max = std::max(out.crossing_bytes_sent_max, s.bytes_sent);
    results.push_back(std::move(p.last[m]));
  }
  out.run_us.resize(std::min(out.run_us.size(), rounds));
  const CaseReport report = mode.naive.has_value()
                                ? CheckAcross(r, mode.plan, global, seed, results,
                                              mode.naive->BytesSent(), mode.naive->BytesReceived())
                                : CheckAcross(r, mode.plan, global, seed, results);
  const bool complete = rounds == static_cast<size_t>(repeat);
  out.verified = complete && report.outcome == Outcome::kPassed;
  out.detail = report.detail;
  if (!complete && out.detail.empty()) out.detail = "a participant did not run every round";
  return out;
}

}  // namespace

std::vector<AcrossMeasurement> RunAcrossBench(const CrossMeshRequest& request,
                                              const std::vector<AcrossMode>& modes,
                                              const LocalTensor& global, uint64_t seed,
                                              int64_t repeat, const GlooOptions& options) {
  const CrossMeshPlan& plan = modes.front().plan;
  std::vector<ParticipantRuns> runs(plan.participants.size());
  const std::vector<absl::Status> status =
      OnParticipantThreads(request, plan, options, [&](int64_t index, const ParticipantComms& c) {
        runs[index] = RunParticipant(request, modes, global, seed, repeat, index, c);
        return absl::OkStatus();
      });
  for (size_t i = 0; i < runs.size(); ++i) {
    if (status[i].ok()) continue;  // never connected: every mode failed there
    runs[i].us.assign(modes.size(), {});
    runs[i].last = std::vector<ParticipantResult>(modes.size());
    for (ParticipantResult& p : runs[i].last) p.status = status[i];
  }
  std::vector<AcrossMeasurement> out;
  for (size_t m = 0; m < modes.size(); ++m) {
    out.push_back(Measure(request, modes[m], global, seed, repeat, runs, m));
  }
  return out;
}

}  // namespace reshard
