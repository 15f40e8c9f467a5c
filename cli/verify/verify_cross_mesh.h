// `reshard verify` for cross-mesh moves (spec §14): one case from --mesh,
// --dst-mesh, --src-ranks, --dst-ranks ..., or --random N --cross-mesh;
// every participant a Gloo thread, a child process (--processes) or, for one
// case, a process on one of several hosts (--store URL --ranks A-B, A-B
// global ranks; harness/cross_mesh_runner.h). Output and exit codes as
// verify's one-mesh cases (verify_command.cc).
#ifndef RESHARD_CLI_VERIFY_VERIFY_CROSS_MESH_H_
#define RESHARD_CLI_VERIFY_VERIFY_CROSS_MESH_H_

#include <cstdint>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "formats/request_json.h"
#include "harness/cross_mesh_case.h"
#include "harness/prepared_case.h"
#include "harness/run_ranks.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/planner.h"

namespace reshard {

// What verify's common flags say (verify_command.cc parses them).
struct CrossMeshVerifySettings {
  int64_t seed = 0;
  PlanMode mode = PlanMode::kNative;
  // Gloo options; with --store, the hosts' store and this host's --ranks
  // (first_rank..last_rank: global ranks, -1 for the last).
  LaunchOptions launch;
  Fault fault;  // fault.rank: a global rank
  VerifyLimits limits;
  std::string mode_flags;  // appended to a FAIL line to rerun it the same way
  bool processes = false;  // every participant a child process
  // Spec §14 "Memory" (RunCrossMeshVerify parses them): --plan-max-memory,
  // one case's planning limit (0: none); --memory-rounds, random cases each
  // under MemoryForRounds.
  int64_t plan_max_memory = 0;
  bool memory_rounds = false;
};

// What --memory-rounds plans a random case under, from its plan without a
// limit: halfway between the least limit its crossing splits under
// (LeastCrossingBytes) and its crossing's peak, and at least the peaks of
// the steps before and after, so the crossing usually runs in rounds.
int64_t MemoryForRounds(const CrossMeshPlan& unlimited);

// The case of a cross-mesh request's fields (validated by
// CrossMeshPlanFromFields: dtype parses), dst_mesh defaulting to mesh; mode,
// data seed and planning limit at their defaults. What verify and bench run.
CrossMeshCase CrossMeshCaseOf(const RequestFields& fields);

// Whether the flags ask for cross-mesh cases: --cross-mesh, --dst-mesh,
// --src-ranks or --dst-ranks.
bool WantsCrossMesh(const FlagValues& flags);

// InvalidArgument naming --plan-max-memory or --memory-rounds when given
// without a cross-mesh case (they bound a crossing).
absl::Status CheckNoCrossMeshOnlyFlags(const FlagValues& flags);

// What cross-mesh cases cannot do (yet): InvalidArgument naming the flag
// (--store with --random, --algorithm, a --kill-at other than 0,
// --cross-mesh without --random, --plan-max-memory with --random,
// --memory-rounds without it). Checked before verify's other flags.
absl::Status CheckCrossMeshFlags(const FlagValues& flags);

// The case or the random cases; flags passed CheckCrossMeshFlags.
CommandResult RunCrossMeshVerify(const FlagValues& flags, const CrossMeshVerifySettings& s);

}  // namespace reshard

#endif  // RESHARD_CLI_VERIFY_VERIFY_CROSS_MESH_H_
