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
#ifndef RESHARD_PLANNER_COSTS_NCCL_NCCL_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_NCCL_NCCL_COST_MODEL_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/nccl/nccl_profile.h"

namespace reshard {

// InvalidArgument for an invalid profile or devices_per_host < 1. The
// fingerprint names every parameter.
absl::StatusOr<std::shared_ptr<const CostModel>> MakeNcclCostModel(const NcclProfile& profile,
                                                                   int64_t devices_per_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_NCCL_NCCL_COST_MODEL_H_
