// Verifying a cross-mesh move (spec §14) end to end on Gloo threads: every
// participant (the union of both rank sets) a thread of this process with
// the communicators RedistributeAcross needs (source mesh, destination mesh,
// union), the source shards of a deterministic global tensor
// (harness/ground_truth.h; Partial sources get local values whose reduction
// is the tensor), and every destination rank's result compared with its
// block of the tensor (a Partial destination: the results' reduction).
// What `reshard verify --dst-mesh ...` and collectives/cross_mesh_executor_test.cc run.
//
//   CrossMeshReport r = VerifyCrossMeshOnThreads(RandomCrossMeshCase(7, 8, 12), GlooOptions());
//   if (r.report.outcome == Outcome::kFailed) std::cerr << r.report.detail;
//
// Participants are threads, or child processes (RunRanks, harness/run_ranks.h,
// connects the union communicator; each child connects its meshes' on the
// same store): of this host (a file store), or of several hosts meeting
// through a shared store (RanksOn::kHosts: each host runs the participant
// indices launch.first_rank..last_rank and reads the others' results back).
#ifndef RESHARD_HARNESS_CROSS_MESH_RUNNER_H_
#define RESHARD_HARNESS_CROSS_MESH_RUNNER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "collectives/cross_mesh_executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/check.h"
#include "harness/cross_mesh_case.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"
#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

// One participant's outcome: its status, its tensor at the end (a
// destination rank's shard of request.dst; empty otherwise) and its
// crossing's counters.
struct ParticipantResult {
  absl::Status status = absl::UnknownError("not run");
  LocalTensor tensor;
  CrossingStats stats;
};

// A participant's communicators: on the source and destination meshes
// (null where it is not on that mesh) and over the participants; `die`
// aborts them all (fault injection).
struct ParticipantComms {
  Communicator* src = nullptr;
  Communicator* dst = nullptr;
  Communicator* union_comm = nullptr;
  std::function<void()> die;
};
// What a participant thread runs once connected (`index` in plan.participants).
using ParticipantBody = std::function<absl::Status(int64_t index, const ParticipantComms& comms)>;

// Every participant of `plan` a thread of this process, connected on one
// in-process store, running `body`; the statuses (a failed connection's, or
// body's), indexed as plan.participants. Connections stay open until every
// participant is done. What RunAcrossOnThreads and the cross-mesh bench
// (cross_mesh_bench.h) run on.
std::vector<absl::Status> OnParticipantThreads(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                                               const GlooOptions& options,
                                               const ParticipantBody& body);

// Runs `plan` with every participant a thread (indexed as
// plan.participants), source ranks starting from ShardOf(global, r.src, ...,
// seed). `fault.rank` is a global rank: that participant dies (closes its
// connections) just before its crossing's call (fault.at_call must be 0).
std::vector<ParticipantResult> RunAcrossOnThreads(const CrossMeshRequest& r,
                                                  const CrossMeshPlan& plan,
                                                  const LocalTensor& global, uint64_t seed,
                                                  const GlooOptions& options,
                                                  const Fault& fault = Fault());

// The results against the ground truth: every participant ran; every
// destination rank's shard equals ShardOf(global, r.dst, ...) (exactly, or to
// ReductionTolerance after a floating-point reduction before), or for a
// Partial destination the destination ranks' values reduce to `global`;
// every participant's crossing sent plan.BytesSent() and received exactly
// plan.BytesReceived() (its ReceiveLowerBoundBytes() unless it stages for
// others, spec §14 "Rails").
CaseReport CheckAcross(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                       const LocalTensor& global, uint64_t seed,
                       const std::vector<ParticipantResult>& results);
// The same with the crossing's expected counters per participant given, for
// a run whose crossing is not plan.routes (the naive baseline's hops,
// planner/cross_mesh/naive_plan.h, over plan's participants).
CaseReport CheckAcross(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                       const LocalTensor& global, uint64_t seed,
                       const std::vector<ParticipantResult>& results,
                       const std::vector<int64_t>& sent, const std::vector<int64_t>& received);

// A verified case, with what its crossing moved (for coverage).
struct CrossMeshReport {
  CaseReport report;  // steps_by_kind: the steps before and after the crossing
  RankSets rank_sets = RankSets::kDisjoint;
  bool remesh = false;  // equal rank sets, a different mesh
  int64_t participants = 0;
  int64_t slices = 0;      // the crossing's routes, local copies included
  int64_t bytes_sent = 0;  // between participants
  int64_t rounds = 1;      // the crossing's exchanges (spec §14 "Memory")
  bool relayed = false;    // CrossMeshPlan::Relayed (spec §14 "Relaying", "Rails")
  bool staged = false;     // CrossMeshPlan::Staged (spec §14 "Rails")
};

// Plans the case (skipped, as Prepare's IsSkip errors, when no plan exists
// or a step needs R->P(prod)), runs it as `launch` says and checks it.
// InvalidArgument cases are failed as bad cases (NotRun). Threads, or
// processes (launch.child_args: this binary again with the case's flags;
// its children call RunCrossMeshChild): every participant a child process
// meeting the others through a file store, handing back its tensor and
// counters; or hosts (RanksOn::kHosts: this host's participants as
// processes, the others' results read from the hosts' store, so every host
// checks every destination block).
CrossMeshReport VerifyCrossMesh(const CrossMeshCase& c, const LaunchOptions& launch,
                                const Fault& fault = Fault());

// VerifyCrossMesh with every participant a thread.
CrossMeshReport VerifyCrossMeshOnThreads(const CrossMeshCase& c, const GlooOptions& options,
                                         const Fault& fault = Fault());

// A child participant's side of VerifyCrossMesh with processes: the union
// communicator is RunChildRank's (participant index = its rank), the meshes'
// are connected on the same store. Returns the process exit code.
int RunCrossMeshChild(const CrossMeshCase& c, const ChildRank& child, const LaunchOptions& launch,
                      const Fault& fault = Fault());

// The case's plan, as VerifyCrossMeshOnThreads makes it (c.mode, with
// c.cost_model or the mode's default; under c.max_memory when set).
absl::StatusOr<CrossMeshPlan> PlanCrossMeshCase(const CrossMeshCase& c);

}  // namespace reshard

#endif  // RESHARD_HARNESS_CROSS_MESH_RUNNER_H_
