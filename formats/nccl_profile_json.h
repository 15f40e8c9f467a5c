// NCCL profiles (planner/costs/nccl/nccl_profile.h) for --profile / the batch key
// "profile" with the nccl cost model: a built-in name or a JSON file
// (docs/planner-semantics.md §6.4):
//
//   {"name": "my-h100", "model": "nccl", "arch": "hopper", "gpus_per_host": 8,
//    "nvlink_gbps": 370.8, "nvswitch": true, "nics_per_host": 8, "nic_gbps": 50,
//    "amd_cpu": false, "memory_gbps": 1675}
//
// Every key but "model" (which, if present, must be "nccl") is required;
// other keys are errors naming the file and the key.
#ifndef RESHARD_FORMATS_NCCL_PROFILE_JSON_H_
#define RESHARD_FORMATS_NCCL_PROFILE_JSON_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "planner/costs/nccl/nccl_profile.h"

namespace reshard {

// InvalidArgument "<source>: key \"nic_gbps\": ..." for a missing, unknown or
// mistyped key or an invalid value.
absl::StatusOr<NcclProfile> NcclProfileFromJson(const nlohmann::json& object,
                                                absl::string_view source);
nlohmann::json NcclProfileToJson(const NcclProfile& profile);

// A built-in profile by name (NcclProfileNames), else the file at that path;
// NotFound naming the path and the built-in names when it is neither.
absl::StatusOr<NcclProfile> ReadNcclProfile(const std::string& name_or_path);

}  // namespace reshard

#endif  // RESHARD_FORMATS_NCCL_PROFILE_JSON_H_
