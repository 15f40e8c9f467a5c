// `reshard bench --dst-mesh/--src-ranks/--dst-ranks`: a cross-mesh move
// (spec §14) timed in native mode (PlanCrossMesh) and against the naive
// baseline (gather on one source rank, send, scatter:
// planner/cross_mesh/naive_plan.h), every participant a Gloo thread
// (harness/cross_mesh_bench.h), results checked as `reshard verify` checks
// cross-mesh moves. Output as the one-mesh bench's (bench_command.cc) where
// its keys apply, plus the crossing's.
#ifndef RESHARD_CLI_BENCH_BENCH_CROSS_MESH_H_
#define RESHARD_CLI_BENCH_BENCH_CROSS_MESH_H_

#include "cli/bench/bench_settings.h"
#include "cli/commands.h"

namespace reshard {

// Runs (or with s.dry_run plans) the move; s.cross_mesh is true and s.modes
// hold only native and naive. The exit code, or Fail(...) with it.
CommandResult RunCrossMeshBench(const BenchSettings& s);

}  // namespace reshard

#endif  // RESHARD_CLI_BENCH_BENCH_CROSS_MESH_H_
