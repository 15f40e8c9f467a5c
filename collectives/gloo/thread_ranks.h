// Running every rank of a mesh as a thread of this process, each with its
// own GlooCommunicator over one in-process store: the embedded way to run a
// plan (tests, `reshard verify`, benchmarks).
//
//   std::vector<absl::Status> results = RunRanksOnThreads(mesh, GlooOptions(),
//       [&](GlooCommunicator& comm) { return Redistribute(...); });
#ifndef RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_
#define RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "collectives/gloo/gloo_communicator.h"
#include "mesh/device_mesh.h"

namespace reshard {

// Calls fn(0) .. fn(n - 1) concurrently, one thread each, and returns their
// statuses. The threads start together: when one cannot be created (a
// memory or thread limit: ulimit -v, -u), none calls fn and every status is
// the same ResourceExhausted, so no thread waits for a peer that never came;
// a std::bad_alloc in fn is that call's ResourceExhausted (issue 44: verify
// and bench aborted with an uncaught std::system_error).
std::vector<absl::Status> RunTogetherOnThreads(int64_t n,
                                               const std::function<absl::Status(int64_t)>& fn);

// Starts one thread per rank (RunTogetherOnThreads), connects it and calls
// fn; returns each rank's status (a failed Connect is that rank's status),
// indexed by rank. Every status is one ResourceExhausted, before any rank
// starts, when the address space left (ulimit -v) cannot hold each rank's
// and its device thread's stacks and 16 MiB of buffers. fn runs
// concurrently on all ranks and must be thread-safe across them.
std::vector<absl::Status> RunRanksOnThreads(
    const DeviceMesh& mesh, const GlooOptions& options,
    const std::function<absl::Status(GlooCommunicator& comm)>& fn);

// The first non-OK status with its rank ("rank 3: ..."), or OK.
absl::Status FirstError(const std::vector<absl::Status>& statuses);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_GLOO_THREAD_RANKS_H_
