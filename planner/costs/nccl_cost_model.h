// The "nccl" cost model (docs/planner-semantics.md §6.4): every step priced
// as NCCL would run it on the machine an NcclProfile describes, in
// microseconds. Native mode's default model.
//
//   std::shared_ptr<const CostModel> model = *MakeNcclCostModel(DefaultNcclProfile(), 8);
//   PlanOptions options;
//   options.cost_model = model;
//
// A step's group is one NCCL communicator: its size n and the hosts it
// spans (devices_per_host consecutive ranks per host) decide NCCL's
// algorithm and protocol tables (nccl_tuning.h). Collectives are priced by
// NCCL's model with the bytes of spec §6.2; all_to_all and permute as
// grouped send/recv, per peer message (NcclP2pTimeUs); chunk and partition
// as local copies at the profile's memory bandwidth.
#ifndef RESHARD_PLANNER_COSTS_NCCL_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_NCCL_COST_MODEL_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/nccl_profile.h"

namespace reshard {

// InvalidArgument for an invalid profile or devices_per_host < 1. The
// fingerprint names every parameter.
absl::StatusOr<std::shared_ptr<const CostModel>> MakeNcclCostModel(const NcclProfile& profile,
                                                                   int64_t devices_per_host);

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

#endif  // RESHARD_PLANNER_COSTS_NCCL_COST_MODEL_H_
