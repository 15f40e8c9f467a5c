// Timing cross-mesh moves (spec §14) for `reshard bench --dst-mesh ...`:
// each mode (native: the cross-mesh plan; naive: the baseline,
// planner/cross_mesh/naive_plan.h) run on the same data with every
// participant a Gloo thread (cross_mesh_runner.h, OnParticipantThreads), as
// bench_run.h times one-mesh plans: one untimed run per mode (connecting
// groups), then `repeat` interleaved rounds (odd rounds in reverse mode
// order), each run after a barrier over the participants; a participant
// times its own call, a run's time is the slowest participant's. The last
// run's results are checked with CheckAcross. A sibling of bench_run.h,
// not part of it: its ranks are participants of three communicators, not
// ranks of one mesh.
//
//   std::vector<AcrossMode> modes = {{"native", plan, std::nullopt}, {"naive", naive.plain,
//   naive}}; std::vector<AcrossMeasurement> m = RunAcrossBench(request, modes, global, seed, 7,
//   gloo);
#ifndef RESHARD_HARNESS_CROSS_MESH_BENCH_H_
#define RESHARD_HARNESS_CROSS_MESH_BENCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/gloo/gloo_communicator.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/cross_mesh/naive_plan.h"

namespace reshard {

struct AcrossMode {
  std::string mode;                         // "native" or "naive"
  CrossMeshPlan plan;                       // native's plan; naive's plain plan
  std::optional<NaiveCrossMeshPlan> naive;  // set: run the naive baseline
};

// One mode's numbers over all participants.
struct AcrossMeasurement {
  std::vector<double> run_us;           // per timed round: the slowest participant's
  int64_t bytes_sent_max = 0;           // the whole move (steps and crossing), busiest participant
  int64_t crossing_bytes_sent_max = 0;  // the crossing (naive: its three hops) alone
  bool verified = false;                // every round ran everywhere and CheckAcross passed
  std::string detail;                   // why not verified
};

// Every mode's measurement, in `modes` order. The modes share their
// participants (the request's rank lists). `global` is the tensor source
// ranks take their blocks of (TestTensor, seed `seed`).
std::vector<AcrossMeasurement> RunAcrossBench(const CrossMeshRequest& request,
                                              const std::vector<AcrossMode>& modes,
                                              const LocalTensor& global, uint64_t seed,
                                              int64_t repeat, const GlooOptions& options);

}  // namespace reshard

#endif  // RESHARD_HARNESS_CROSS_MESH_BENCH_H_
