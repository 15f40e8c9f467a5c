// Checking the executor on data: what `reshard verify` runs for each case.
//
// A case is a redistribution (mesh, shape, dtype, src, dst, planner) plus a
// data seed. Verifying it: build a deterministic global tensor
// (shard_util.h, TestTensor), give every rank its source shard (Partial
// sources get local values whose reduction is the global tensor), plan once,
// run the plan on every rank, and compare
//   * each rank's result with its destination shard computed directly
//     (exact for integers and for data that was only moved, a tight
//     tolerance after floating-point reductions); for a Partial destination,
//     the reduction of the ranks' results with the global tensor;
//   * each rank's per-step logical shapes and byte counters with the plan
//     made for that rank's coordinate (planner/steps/step_bytes.h: LogicalShape and
//     BytesOfStep on the plan's states).
// Cases without a plan, or whose plan needs R->P(prod) (spec §11), are
// skipped and reported as such.
//
//   VerifyCase c = RandomCase(/*seed=*/7, /*max_ranks=*/8);
//   CaseReport r = VerifyOnThreads(c, GlooOptions());
//   if (r.outcome == Outcome::kFailed) std::cerr << c.CommandLine() << "\n" << r.detail;
#ifndef RESHARD_COLLECTIVES_VERIFY_VERIFY_H_
#define RESHARD_COLLECTIVES_VERIFY_VERIFY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"
#include "planner/planner.h"

namespace reshard {

struct VerifyCase {
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  std::string src;
  std::string dst;
  Algorithm algorithm = Algorithm::kAuto;
  // kPyTorch (compat steps, spec §4) or kNative (group steps and permutes,
  // spec §4.2, with the native default cost model).
  PlanMode mode = PlanMode::kPyTorch;
  uint64_t data_seed = 0;

  // The flags that run this case alone, e.g. "--mesh 2,2 --shape 13,8
  // --dtype f32 --src 'S(0)R' --dst 'RS(1)' --algorithm graph --mode native
  // --seed 5".
  std::string Flags() const;
  // "reshard verify " + Flags(): a line to paste back into a shell.
  std::string CommandLine() const;
};

// A random case, deterministic in `seed`: meshes of 1 to 4 dims with at most
// `max_ranks` ranks (size-1 dims included), tensors of 1 to 4 dims small
// enough for uneven and zero-size shards, random shard orders, every
// placement kind, every dtype and reduce op (one op per case, or sum+avg),
// graph, greedy and auto planners. In native mode the graph and auto
// planners only, and layouts biased to what native steps do: more Shard
// mesh dims; a third of the destinations the source with its Shard mesh
// dims rearranged (orders reversed, tensor dims swapped), which permutes
// move, and a third with several mesh dims (and every Partial) collapsed
// into one placement, which one collective over them does.
VerifyCase RandomCase(uint64_t seed, int64_t max_ranks, PlanMode mode = PlanMode::kPyTorch);

// A case ready to run: parsed specs, the plan (made for coordinate 0; every
// rank runs it) and the global tensor.
struct PreparedCase {
  VerifyCase spec_case;
  DistSpec src;
  DistSpec dst;
  PlanOptions options;
  Plan plan;
  LocalTensor global;
};

enum class Outcome { kPassed, kFailed, kSkipped };

// InvalidArgument for a malformed case; NotFound / ResourceExhausted when no
// plan exists (skip); Unimplemented when the plan needs R->P(prod) (skip).
absl::StatusOr<PreparedCase> Prepare(const VerifyCase& c);

// One rank's part: its source shard, Redistribute, the result.
struct RankResult {
  LocalTensor tensor;
  ExecutionStats stats;
};
absl::StatusOr<RankResult> RunRank(const PreparedCase& p, Communicator& comm);

struct CaseReport {
  Outcome outcome = Outcome::kPassed;
  // Why it failed or was skipped; empty when it passed.
  std::string detail;
  // Skipped because the plan needs R->P(prod), rather than for want of a plan.
  bool unsupported = false;
  // Steps of a passed case's plan by StepKind (step.h order), for coverage;
  // and those of them over several mesh dims (group steps, spec §4.2).
  std::array<int64_t, kNumStepKinds> steps_by_kind{};
  std::array<int64_t, kNumStepKinds> group_steps_by_kind{};
};

// Compares every rank's result (indexed by rank) with the ground truth.
CaseReport Check(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results);

// True for Prepare's errors that mean "skip the case" (above).
bool IsSkip(const absl::Status& s);

// Fault injection for `reshard verify --kill-rank`: rank `rank` dies just
// before its collective call `at_call` (0-based); -1 means no fault.
struct Fault {
  int64_t rank = -1;
  int64_t at_call = 0;
};

// What `reshard verify` refuses up front, before allocating anything.
struct VerifyLimits {
  // Ranks run as threads or processes of one host, each with sockets to its
  // peers: thousands of them exhaust descriptors and time before failing.
  int64_t max_ranks = 64;
  // Host memory the case may take, as EstimatedBytes counts it.
  double max_bytes = 1e18;
};

// Host memory that verifying a case takes at its peak with every rank in one
// process, counted from the plan: the global tensor; per rank three times
// its largest local tensor or step buffer (a step's input, output and
// buffers; coordinate 0 holds the largest chunks); an expected shard; and
// for a Partial destination the reduction in doubles. Meant as an upper
// bound (measured peaks were 0.4 to 0.85 of it), not a measurement.
double EstimatedBytes(const DistSpec& src, const DistSpec& dst, const Plan& plan);

// Collective calls each rank makes running `plan` (size-1 mesh dims and local
// steps make none, spec §11): the range of a Fault's at_call.
int64_t CollectiveCalls(const Plan& plan, const DeviceMesh& mesh);

// The checks `reshard verify` makes before running a case: InvalidArgument,
// naming the flag to change, when the case has more ranks or needs more
// memory than `limits` allow, or `fault` would inject nothing (a rank outside
// the mesh, a call past the plan's last collective); otherwise Prepare's
// errors without its allocations.
absl::Status CheckCase(const VerifyCase& c, const VerifyLimits& limits, const Fault& fault);

// Prepare, run every rank as a thread on Gloo, Check. A faulted rank closes
// its connections (GlooCommunicator::Abort) as a dead process would.
CaseReport VerifyOnThreads(const VerifyCase& c, const GlooOptions& options,
                           const Fault& fault = Fault());

// A rank's result as files in `dir` (for ranks that are processes):
// result.<rank> holds the tensor's bytes, stats.<rank> one line per step.
absl::Status WriteRankResult(const std::string& dir, int64_t rank, const RankResult& r);
// Reads them back; the tensor's shape is the dst shard's at the rank.
absl::StatusOr<RankResult> ReadRankResult(const std::string& dir, int64_t rank,
                                          const PreparedCase& p);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_VERIFY_VERIFY_H_
