// The bytes spec §6.2 counts for a step, the size a cost model prices: the
// padded local block of rank 0 (the largest chunk at every split, as the
// executor pads), for all_gather the gathered block, for reduce_scatter and
// all_to_all the unscattered input. Bound to one problem; does not allocate
// (cost models call it once per graph edge).
//
//   CountedBytes counted(problem);
//   double bytes = counted.Of(state, step, group_size);
//
// The same count as alpha-beta's (planner/alpha_beta_cost_model.cc) so that
// the measured model (spec §6.3) looks its tables up at the sizes calibrate
// measured. TODO(lead): alpha-beta should use this once planner/ is in floors.
#ifndef RESHARD_PLANNER_COSTS_COUNTED_BYTES_H_
#define RESHARD_PLANNER_COSTS_COUNTED_BYTES_H_

#include <cstdint>

#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

class CountedBytes {
 public:
  explicit CountedBytes(const CostProblem& problem);
  // `n` is the step's group size.
  double Of(const DistState& current, const Step& step, int64_t n) const;

 private:
  int ndim_;
  int mesh_ndim_;
  double itemsize_;
  int64_t shape_[kMaxTensorDims] = {};
  int64_t size_[kMaxMeshDims] = {};
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_COUNTED_BYTES_H_
