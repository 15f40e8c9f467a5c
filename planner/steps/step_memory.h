// Peak memory per rank (spec §12): what the executor holds at once while it
// runs a step, and the largest such amount over a plan. Sizes are those of
// the rank with coordinate 0 on every mesh dim, which holds the largest
// chunks (torch.chunk), so they are the maximum over ranks.
//
//   StepPeakBytes(state, step, mesh, shape, dtype)   // one step
//   PlanPeakBytes(plan, mesh, shape, dtype)          // a whole plan
#ifndef RESHARD_PLANNER_STEPS_STEP_MEMORY_H_
#define RESHARD_PLANNER_STEPS_STEP_MEMORY_H_

#include <cstdint>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/steps/plan.h"
#include "planner/steps/step.h"

namespace reshard {

// Whose buffers a step's peak is counted for (spec §12): Gloo as the
// executor runs it (separate send and receive buffers), or NCCL, whose
// all_gather and reduce_scatter run in place. The cost model says which
// (BoundCostModel::memory_backend, planner/costs/cost_model.h).
enum class MemoryBackend : uint8_t { kGloo, kNccl };

// Bytes of the largest local shard of a tensor in `state`.
int64_t LocalBytes(const DistState& state, const DeviceMesh& mesh,
                   absl::Span<const int64_t> global_shape, DType dtype);

// Input + output + scratch of one step, with c the padded chunk
// (PaddedChunkShape, step_bytes.h) and n the group's size:
//   all_gather      in + c + n*c + out      (send, receive buffers)
//   all_to_all      in + 2*n*c + out
//   reduce_scatter  in + n*c + c + out
//   all_reduce      in                      (in place)
//   chunk           in + out                (a copy)
//   partition       in                      (in place)
//   permute         2 * (in + out)          (packed sends, received slices)
//   exchange        in + out + the most a member of the group at coordinate 0
//                   sends plus receives (ExchangeLoadOf: with replicas a rank
//                   may send its block to several members, more than in)
//   any step on a group of size 1: in (nothing moves)
// NCCL (spec §12) runs all_gather and reduce_scatter in place, the rank's
// piece being its slot of the n*c buffer:
//   all_gather      n*c, plus out when the buffer is not the output as it is
//   reduce_scatter  n*c, plus in when the input is not the buffer as it is,
//                   plus out when the slot is not the output as it is
// and every other kind as Gloo.
int64_t StepPeakBytes(const DistState& state, const Step& step, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype,
                      MemoryBackend backend = MemoryBackend::kGloo);

// The exchange rule (spec §12), shared by exchange steps and cross-mesh
// crossings (spec §14): a rank holds its source block (`in`), its target
// block (`out`) and buffers for what it sends plus receives (`moved`) at once.
int64_t ExchangePeakBytes(int64_t in, int64_t out, int64_t moved);

// The largest of the source shard and every step's StepPeakBytes.
int64_t PlanPeakBytes(const Plan& plan, const DeviceMesh& mesh,
                      absl::Span<const int64_t> global_shape, DType dtype,
                      MemoryBackend backend = MemoryBackend::kGloo);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_STEP_MEMORY_H_
