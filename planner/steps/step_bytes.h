// What one step moves at one rank: the bytes the executor sends and
// receives (spec §11) for the logical shape its group sees (spec §10,
// logical_shape.h).
#ifndef RESHARD_PLANNER_STEPS_STEP_BYTES_H_
#define RESHARD_PLANNER_STEPS_STEP_BYTES_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/steps/logical_shape.h"
#include "planner/steps/step.h"

namespace reshard {

// Bytes one rank sends to and receives from the rest of the group for a step
// with logical shape `logical` (spec §11), at the padded chunk the executor
// uses: the logical shape with each split tensor dim cut to its largest
// member slice (ceil(L / n) for one mesh dim; NestedChunk for several), n
// the group's size:
//   all_gather, all_to_all, reduce_scatter: (n - 1) * chunk elements each way
//   all_reduce: 2 * (n - 1) * ceil(count / n) each way (reduce-scatter + all-gather)
//   chunk, partition, and any step on a group of size 1: 0
//   permute, exchange: exactly the elements it exchanges with the other
//     members at the rank with `coordinate` (permute_exchange.h; no padding,
//     none to itself)
// `coordinate` matters for permutes and exchanges only.
struct StepBytes {
  int64_t sent = 0;
  int64_t received = 0;
};
StepBytes BytesOfStep(const DistState& state, const Step& step, absl::Span<const int64_t> logical,
                      const DeviceMesh& mesh, absl::Span<const int64_t> coordinate, DType dtype);

// The padded chunk of BytesOfStep: the logical shape with the tensor dims the
// step splits or gathers cut to their largest member slice.
std::vector<int64_t> PaddedChunkShape(const DistState& state, const Step& step,
                                      absl::Span<const int64_t> logical, const DeviceMesh& mesh);

}  // namespace reshard

#endif  // RESHARD_PLANNER_STEPS_STEP_BYTES_H_
