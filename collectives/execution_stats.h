// What a run of a plan did on one rank, step by step (Redistribute,
// executor.h, fills it): the shapes it computed and the bytes it moved.
#ifndef RESHARD_COLLECTIVES_EXECUTION_STATS_H_
#define RESHARD_COLLECTIVES_EXECUTION_STATS_H_

#include <cstdint>
#include <vector>

#include "planner/steps/step.h"

namespace reshard {

// What one step did on this rank. Bytes count the data this rank sent to /
// received from the other group members, measured from the buffers the
// collective was given; BytesOfStep (planner/steps/step_bytes.h) states the rule they
// must follow.
struct StepStats {
  Step step;
  std::vector<int64_t> logical_shape;  // as computed for this rank
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
};

struct ExecutionStats {
  std::vector<StepStats> steps;
  int64_t bytes_sent() const;
  int64_t bytes_received() const;
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_EXECUTION_STATS_H_
