#include "harness/mesh_barrier.h"

#include "mesh/mesh_dim_set.h"

namespace reshard {

absl::Status MeshBarrier(Communicator& comm) {
  MeshDimSet everyone;
  for (int m = 0; m < comm.mesh().ndim(); ++m) everyone = everyone.With(m);
  float token = 0;
  return comm.AllReduce(everyone, &token, 1, DType::kF32, ReduceOp::kSum);
}

}  // namespace reshard
