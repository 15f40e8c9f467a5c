// The executor's data movement, one function per kind of step (spec §11,
// §4.2): what executor.cc runs for each step of a plan. Internal to
// //collectives:executor.
//
// Collectives over a group of several mesh dims act on the flattened group
// (Communicator, member order DeviceMesh::GroupOf) but split the tensor as
// nested chunks (planner/layout/chunk.h, GroupSlices): every member's slice is
// padded to the largest for the collective and placed or trimmed by the
// real slices. Permutes exchange exact pieces (planner/steps/permute_exchange.h)
// with AllToAllV.
#ifndef RESHARD_COLLECTIVES_STEP_RUNNERS_H_
#define RESHARD_COLLECTIVES_STEP_RUNNERS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/execution_stats.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

// What every kind of step needs: the step and the state it leaves, its
// logical shape L for this rank (spec §10), the group's size n and this
// rank's index in it.
struct StepContext {
  const DistState& state;
  const Step& step;
  const std::vector<int64_t>& L;
  int64_t n;
  int64_t me;
  Communicator& comm;
  CopyEngine& engine;
  StepStats& stats;

  // Bytes of `count` elements of t's dtype, each way.
  void CountBytes(int64_t count, const LocalTensor& t) {
    stats.bytes_sent = stats.bytes_received = count * ItemSize(t.dtype());
  }
};

// One step on the current local tensor, by kind; `cur` is this rank's shard
// in c.state.
absl::StatusOr<LocalTensor> RunStep(LocalTensor cur, StepContext& c);

// Permutes and exchanges (permute_step.cc).
absl::StatusOr<LocalTensor> RunSliceExchange(LocalTensor cur, StepContext& c);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_STEP_RUNNERS_H_
