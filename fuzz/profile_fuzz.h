// What the profile-file fuzz targets share (profile_file_fuzzer.cc: alpha-beta
// files; nccl_profile_file_fuzzer.cc: nccl files): each input written to one
// temporary file, and an accepted profile's model checked on a small native
// plan (a finite cost, a valid JSON line: the ranges keep every price finite).
#ifndef RESHARD_FUZZ_PROFILE_FUZZ_H_
#define RESHARD_FUZZ_PROFILE_FUZZ_H_

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/result_json.h"
#include "fuzz/fuzz_checks.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

namespace reshard::fuzz {

// The input in a temporary file (one for the whole run, rewritten per
// input); empty when it cannot be written.
inline std::string InputAsFile(const uint8_t* data, size_t size) {
  static const std::string* path = [] {
    char name[] = "/tmp/reshard-profile-fuzz.XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return new std::string(name);
  }();
  std::FILE* f = std::fopen(path->c_str(), "wb");
  if (f == nullptr) return "";
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  return *path;
}

// An accepted profile's model (`name` for messages) plans a small native
// case at a finite cost whose JSON line is valid.
inline void CheckModelPlans(const absl::StatusOr<std::shared_ptr<const CostModel>>& model,
                            const std::string& name) {
  if (!model.ok()) Fail("an accepted profile was refused by the model", name);
  const DeviceMesh mesh = *DeviceMesh::Create({4, 2});
  const std::vector<int64_t> shape = {1 << 20, 4096};
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *model;
  const absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, "S(0)P", shape, DType::kF64),
                         *DistSpec::Parse(mesh, "S(1)S(0)", shape, DType::kF64), options);
  if (!plan.ok()) Fail("no plan under an accepted profile", plan.status().ToString());
  if (!std::isfinite(plan->cost)) Fail("a profile gave an infinite cost", name);
  std::string line;
  AppendResultJson(nullptr, plan, &line);
  CheckResultLine(line);
}

}  // namespace reshard::fuzz

#endif  // RESHARD_FUZZ_PROFILE_FUZZ_H_
