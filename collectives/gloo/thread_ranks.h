// Running every rank of a mesh as a thread of this process, each with its
// own GlooCommunicator over one in-process store: the embedded way to run a
// plan (tests, `reshard verify`, benchmarks).
//
//   std::vector<absl::Status> results = RunRanksOnThreads(mesh, GlooOptions(),
//       [&](GlooCommunicator& comm) { return Redistribute(...); });
#ifndef RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_
#define RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "collectives/gloo/gloo_communicator.h"
#include "mesh/device_mesh.h"

namespace reshard {

// Starts one thread per rank, connects it and calls fn; returns each rank's
// status (a failed Connect is that rank's status), indexed by rank.
// fn runs concurrently on all ranks and must be thread-safe across them.
std::vector<absl::Status> RunRanksOnThreads(
    const DeviceMesh& mesh, const GlooOptions& options,
    const std::function<absl::Status(GlooCommunicator& comm)>& fn);

// The first non-OK status with its rank ("rank 3: ..."), or OK.
absl::Status FirstError(const std::vector<absl::Status>& statuses);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_
