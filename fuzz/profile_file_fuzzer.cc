// Fuzzes profile files (--profile, the batch key "profile"; formats/profile_json.h)
// as they are read: any bytes in the file must give a profile or an error
// message of valid, short text, never a crash, a hang or a deep recursion
// (issue 19: "[[[[..." overflowed the stack). A profile that is accepted
// must price a small native plan at a finite cost whose JSON line is valid
// (JSON has no inf: its ranges keep every price finite, spec §6.2).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/profile_json.h"
#include "formats/result_json.h"
#include "fuzz/fuzz_checks.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

namespace {

// One temporary file for the whole run, rewritten per input.
const std::string& ProfilePath() {
  static const std::string* path = [] {
    char name[] = "/tmp/reshard-profile-fuzz.XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return new std::string(name);
  }();
  return *path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reshard;
  std::FILE* f = std::fopen(ProfilePath().c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  const absl::StatusOr<CostProfile> profile = ReadProfileFile(ProfilePath());
  if (!profile.ok()) {
    fuzz::CheckText(profile.status().message(), 2000);
    return 0;
  }
  const absl::StatusOr<std::shared_ptr<const CostModel>> model =
      MakeAlphaBetaCostModel(*profile, /*devices_per_host=*/2);
  if (!model.ok()) fuzz::Fail("an accepted profile was refused by the model", profile->name);
  const DeviceMesh mesh = *DeviceMesh::Create({4, 2});
  const std::vector<int64_t> shape = {1 << 20, 4096};
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *model;
  const absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, "S(0)P", shape, DType::kF64),
                         *DistSpec::Parse(mesh, "S(1)S(0)", shape, DType::kF64), options);
  if (!plan.ok()) fuzz::Fail("no plan under an accepted profile", plan.status().ToString());
  if (!std::isfinite(plan->cost)) fuzz::Fail("a profile gave an infinite cost", profile->name);
  std::string line;
  AppendResultJson(nullptr, plan, &line);
  fuzz::CheckResultLine(line);
  return 0;
}
