// Fuzzes profile files (--profile, the batch key "profile"; formats/profile_json.h)
// as they are read: any bytes in the file must give a profile or an error
// message of valid, short text, never a crash, a hang or a deep recursion
// (issue 19: "[[[[..." overflowed the stack). A profile that is accepted
// must price a small native plan at a finite cost whose JSON line is valid
// (JSON has no inf: its ranges keep every price finite, spec §6.2).
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/profile_json.h"
#include "fuzz/profile_fuzz.h"
#include "planner/costs/alpha_beta_cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reshard;
  const std::string path = fuzz::InputAsFile(data, size);
  if (path.empty()) return 0;
  const absl::StatusOr<CostProfile> profile = ReadProfileFile(path);
  if (!profile.ok()) {
    fuzz::CheckText(profile.status().message(), 2000);
    return 0;
  }
  fuzz::CheckModelPlans(MakeAlphaBetaCostModel(*profile, /*devices_per_host=*/2), profile->name);
  return 0;
}
