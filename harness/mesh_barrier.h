// A barrier over every rank of a mesh, made of one collective: what timed
// runs start after (`reshard bench`, `reshard calibrate`).
#ifndef RESHARD_HARNESS_MESH_BARRIER_H_
#define RESHARD_HARNESS_MESH_BARRIER_H_

#include "absl/status/status.h"
#include "collectives/communicator.h"

namespace reshard {

// Returns once every rank of the mesh has called it (an all_reduce of one
// value over all mesh dims). Collective: every rank must call it.
absl::Status MeshBarrier(Communicator& comm);

}  // namespace reshard

#endif  // RESHARD_HARNESS_MESH_BARRIER_H_
