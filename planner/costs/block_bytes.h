// BlockBytes: the bytes a cost model counts for one step (spec §6.2
// "Bytes"): the padded local block of the rank with coordinate 0 in the
// current state (the largest chunk at every split, as the executor pads),
// with the dim a reduce_scatter / all_to_all splits padded to n equal chunks,
// a chunk's output cut to one of them, and an all_gather's gathered block
// (n blocks). This is also NCCL's nBytes for all_gather (the receive
// buffer), reduce_scatter (the send buffer) and all_reduce (the buffer).
//
//   BlockBytes bytes(problem);
//   bytes(current, step, n)   // n: the step's group size
//
// Built once per problem; the call does not allocate (it runs per edge). The
// search prices a state's edges one after another, so the state's padded
// block is kept (per thread) for the next call on the same state.
#ifndef RESHARD_PLANNER_COSTS_BLOCK_BYTES_H_
#define RESHARD_PLANNER_COSTS_BLOCK_BYTES_H_

#include <cstdint>

#include "planner/costs/cost_model.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/step.h"

namespace reshard {

class BlockBytes {
 public:
  explicit BlockBytes(const CostProblem& problem);
  double operator()(const DistState& current, const Step& step, int64_t n) const;

 private:
  // The padded block of rank 0 in `state`, per tensor dim.
  void BlockOf(const DistState& state, int64_t* block) const;

  uint64_t id_;  // tells this object's cached block from another's
  int ndim_;
  int mesh_ndim_;
  double itemsize_;
  int64_t shape_[kMaxTensorDims] = {};
  int64_t size_[kMaxMeshDims] = {};
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_BLOCK_BYTES_H_
