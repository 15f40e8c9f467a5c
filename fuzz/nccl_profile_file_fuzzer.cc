// Fuzzes nccl profile files (--profile with the nccl model, the default; the
// batch key "profile"; formats/nccl_profile_json.h) as they are read: any
// bytes must give a profile or an error message of valid, short text, never
// a crash, a hang or a deep recursion (issue 44: "[[[[..." crashed `batch`
// with SIGSEGV). An accepted profile must price a small native plan at a
// finite cost whose JSON line is valid (its ranges, spec §6.4).
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/nccl_profile_json.h"
#include "fuzz/profile_fuzz.h"
#include "planner/costs/nccl/nccl_cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reshard;
  const std::string path = fuzz::InputAsFile(data, size);
  if (path.empty()) return 0;
  const absl::StatusOr<NcclProfile> profile = ReadNcclProfile(path);
  if (!profile.ok()) {
    fuzz::CheckText(profile.status().message(), 2000);
    return 0;
  }
  fuzz::CheckModelPlans(MakeNcclCostModel(*profile, /*devices_per_host=*/2), profile->name);
  return 0;
}
