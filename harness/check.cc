#include "harness/check.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/tensor/host_math.h"
#include "harness/ground_truth.h"
#include "mesh/device_mesh.h"
#include "planner/layout/notation.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
bool HasReduction(const Plan& plan) {
  for (const TransformInfo& info : plan.steps) {
    const StepKind k = info.step.kind;
    if (k == StepKind::kAllReduce || k == StepKind::kReduceScatter) return true;
  }
  return false;
}

namespace {

std::string Steps(const Plan& plan) {
  std::vector<std::string> parts;
  for (const TransformInfo& info : plan.steps) parts.push_back(info.step.ToString());
  return absl::StrJoin(parts, " ");
}

// The rank's result against the plan made for its own coordinate: same
// steps, same logical shapes, and the bytes those shapes imply.
std::string CheckCounters(const PreparedCase& p, int64_t rank, const RankResult& r) {
  PlanOptions options = p.options;
  options.coordinate = p.src.mesh().Coordinate(rank);
  absl::StatusOr<Plan> mine = PlanRedistribution(p.src, p.dst, options);
  if (!mine.ok()) return absl::StrCat("planning for rank ", rank, ": ", mine.status().message());
  if (Steps(*mine) != Steps(p.plan)) {
    return absl::StrFormat("rank %d: the plan for its coordinate differs: %s vs %s", rank,
                           mine->Trace(), p.plan.Trace());
  }
  if (r.stats.steps.size() != mine->steps.size()) {
    return absl::StrFormat("rank %d: %d step counters for %d steps", rank, r.stats.steps.size(),
                           mine->steps.size());
  }
  const std::vector<int64_t> coord = p.src.mesh().Coordinate(rank);
  for (size_t i = 0; i < mine->steps.size(); ++i) {
    const TransformInfo& info = mine->steps[i];
    const StepStats& got = r.stats.steps[i];
    // Spec §10 in the state the step starts from: what graph plans report;
    // greedy plans report PyTorch's shapes instead (spec §8), which ignore
    // shard order, so the plan's states are the reference for both.
    const std::vector<int64_t> want_shape =
        LogicalShape(mine->states[i], info.step, p.src.mesh(), p.src.global_shape(), coord);
    if (got.step != info.step || got.logical_shape != want_shape) {
      return absl::StrFormat(
          "rank %d step %d: ran %s on logical shape [%s], the plan says %s on [%s]", rank, i + 1,
          got.step.ToString(), absl::StrJoin(got.logical_shape, ","), info.step.ToString(),
          absl::StrJoin(want_shape, ","));
    }
    const StepBytes want =
        BytesOfStep(mine->states[i], info.step, want_shape, p.src.mesh(), coord, p.src.dtype());
    if (got.bytes_sent != want.sent || got.bytes_received != want.received) {
      return absl::StrFormat("rank %d step %d: sent/received %d/%d bytes, the plan implies %d/%d",
                             rank, i + 1, got.bytes_sent, got.bytes_received, want.sent,
                             want.received);
    }
  }
  return "";
}

std::string Describe(const LocalTensor& t, int64_t i) {
  return absl::StrFormat("%g", LoadAsDouble(t.data(), i, t.dtype()));
}

// Element index -> "[i,j,k]" in `shape`.
std::string Index(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return absl::StrCat("[", absl::StrJoin(idx, ","), "]");
}

// Every rank's shard against the one computed directly; "" when all match.
std::string CheckShards(const PreparedCase& p,
                        const std::vector<absl::StatusOr<RankResult>>& results, double tolerance) {
  for (size_t r = 0; r < results.size(); ++r) {
    const std::vector<int64_t> coord = p.src.mesh().Coordinate(r);
    absl::StatusOr<LocalTensor> want = ShardOf(p.global, p.dst, coord, p.spec_case.data_seed);
    if (!want.ok()) return std::string(want.status().message());
    const LocalTensor& got = results[r]->tensor;
    absl::StatusOr<int64_t> bad = FirstMismatch(got, *want, tolerance);
    if (!bad.ok()) return absl::StrCat("rank ", r, ": ", bad.status().message());
    if (*bad >= 0) {
      return absl::StrFormat("rank %d: element %s of its shard is %s, expected %s", r,
                             Index(got.shape(), *bad), Describe(got, *bad), Describe(*want, *bad));
    }
  }
  return "";
}

// Local values of a Partial are not unique: what the ranks' results reduce
// to against the global tensor; "" when it matches.
std::string CheckReduced(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results,
                         double tolerance) {
  std::vector<LocalTensor> shards;
  for (auto& r : results) {
    shards.push_back(LocalTensor::View(r->tensor.data(), r->tensor.dtype(), r->tensor.shape(),
                                       r->tensor.space()));
  }
  absl::StatusOr<LocalTensor> back = Reassemble(shards, p.dst);
  if (!back.ok()) return std::string(back.status().message());
  absl::StatusOr<int64_t> bad = FirstMismatch(*back, p.global, tolerance);
  if (!bad.ok()) return std::string(bad.status().message());
  if (*bad >= 0) {
    return absl::StrFormat("the ranks' results reduce to %s at global element %s, expected %s",
                           Describe(*back, *bad), Index(p.global.shape(), *bad),
                           Describe(p.global, *bad));
  }
  return "";
}

// Every rank's data against the ground truth; "" when it matches.
std::string CheckData(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results) {
  const double tolerance = HasReduction(p.plan) ? ReductionTolerance(p.dst.dtype(), 64) : 0;
  for (const Placement& q : p.dst.state().placements()) {
    if (q.is_partial()) return CheckReduced(p, results, tolerance);
  }
  return CheckShards(p, results, tolerance);
}

// The ranks' errors, one per line; "" when every rank ran.
std::string RankErrors(const std::vector<absl::StatusOr<RankResult>>& results) {
  std::string errors;
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].ok()) {
      absl::StrAppend(&errors, "\n      rank ", r, ": ", results[r].status().ToString());
    }
  }
  return errors;
}

// Why the results are wrong, or "" when they pass.
std::string Problem(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results) {
  const DeviceMesh& mesh = p.src.mesh();
  if (static_cast<int64_t>(results.size()) != mesh.num_ranks()) {
    return absl::StrFormat("%d results for %d ranks", results.size(), mesh.num_ranks());
  }
  if (std::string errors = RankErrors(results); !errors.empty()) {
    return absl::StrCat("ranks failed:", errors);
  }
  if (std::string problem = CheckData(p, results); !problem.empty()) return problem;
  for (size_t r = 0; r < results.size(); ++r) {
    std::string problem = CheckCounters(p, static_cast<int64_t>(r), *results[r]);
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace

CaseReport Check(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results) {
  CaseReport report;
  // Out of memory or threads (ulimit): the machine's limit, not a wrong
  // result; one message, however many ranks said it.
  for (const absl::StatusOr<RankResult>& r : results) {
    if (absl::IsResourceExhausted(r.status())) {
      report.outcome = Outcome::kSkipped;
      report.detail = absl::StrCat("out of resources: ", r.status().message());
      return report;
    }
  }
  if (std::string problem = Problem(p, results); !problem.empty()) {
    report.outcome = Outcome::kFailed;
    report.detail = absl::StrCat("plan ", p.plan.Trace(), " (", AlgorithmName(p.plan.algorithm),
                                 "): ", std::move(problem));
    return report;
  }
  for (const TransformInfo& info : p.plan.steps) {
    ++report.steps_by_kind[static_cast<int>(info.step.kind)];
    report.group_steps_by_kind[static_cast<int>(info.step.kind)] += info.step.group.size() > 1;
  }
  return report;
}

CaseReport NotRun(const absl::Status& prepare_error) {
  CaseReport r;
  if (!IsSkip(prepare_error)) {
    r.outcome = Outcome::kFailed;
    r.detail = absl::StrCat("bad case: ", prepare_error.ToString());
    return r;
  }
  r.outcome = Outcome::kSkipped;
  r.detail = std::string(prepare_error.message());
  r.unsupported = prepare_error.code() == absl::StatusCode::kUnimplemented;
  return r;
}

}  // namespace reshard
