// HostSpan: the hosts a communicator spans, on machines of devices_per_host
// consecutive ranks each. The nccl, alpha-beta and measured models price a
// step by it (spec §6.2-§6.4).
#ifndef RESHARD_PLANNER_COSTS_HOST_SPAN_H_
#define RESHARD_PLANNER_COSTS_HOST_SPAN_H_

#include <cstdint>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"

namespace reshard {

// The communicator a step on `group` forms, seen from rank 0 (every group
// along the same mesh dims is a translate of it): its size, how many hosts
// it spans and how many of its ranks share rank 0's host. Ranks are
// row-major, rank r on host r / devices_per_host.
struct HostSpan {
  int64_t ranks = 1;
  int64_t nodes = 1;
  int64_t local = 1;  // members on rank 0's host, rank 0 included
};
HostSpan HostSpanOf(const DeviceMesh& mesh, MeshDimSet group, int64_t devices_per_host);
// The same for the communicator of the global ranks `ranks` (ascending,
// distinct; a cross-mesh crossing's participants, spec §14), seen from
// ranks[0]: its size, its hosts, and how many of it share ranks[0]'s host.
HostSpan HostSpanOfRanks(absl::Span<const int64_t> ranks, int64_t devices_per_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_HOST_SPAN_H_
