#include "planner/costs/nccl/nccl_profile.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {
namespace {

// Spec §6.4, "Profile ranges": every field of a real machine, with room to
// spare, and nothing NCCL's arithmetic would silently clamp or overflow
// (channel counts are ints of bandwidth ratios).
absl::Status InRange(absl::string_view field, double value, double least, double most,
                     absl::string_view unit) {
  if (std::isfinite(value) && value >= least && value <= most) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("nccl profile: ", field, " is ", value,
                                                 "; must be from ", least, " to ", most, unit));
}

// An 8-GPU NVSwitch host with 8 NICs; the rest per generation.
NcclProfile EightGpuHost(std::string name, GpuArch arch, double nvlink_gbps, double nic_gbps,
                         double memory_gbps) {
  NcclProfile p;
  p.name = std::move(name);
  p.arch = arch;
  p.nvlink_gbps = nvlink_gbps;
  p.nic_gbps = nic_gbps;
  p.memory_gbps = memory_gbps;
  return p;
}

}  // namespace

absl::string_view GpuArchName(GpuArch arch) {
  switch (arch) {
    case GpuArch::kVolta:
      return "volta";
    case GpuArch::kAmpere:
      return "ampere";
    case GpuArch::kHopper:
      return "hopper";
    case GpuArch::kBlackwell:
      return "blackwell";
  }
  return "?";
}

bool ParseGpuArch(absl::string_view name, GpuArch* arch) {
  for (GpuArch a : {GpuArch::kVolta, GpuArch::kAmpere, GpuArch::kHopper, GpuArch::kBlackwell}) {
    if (name == GpuArchName(a)) {
      *arch = a;
      return true;
    }
  }
  return false;
}

absl::Status ValidateNcclProfile(const NcclProfile& p) {
  const struct {
    absl::string_view field;
    double value, least, most;
    absl::string_view unit;
  } fields[] = {
      {"gpus_per_host", static_cast<double>(p.gpus_per_host), 1, kMaxNcclGpusPerHost, ""},
      {"nics_per_host", static_cast<double>(p.nics_per_host), 1, kMaxNcclGpusPerHost, ""},
      {"nvlink_gbps", p.nvlink_gbps, 1, 1e4, " GB/s"},
      {"nic_gbps", p.nic_gbps, 0.1, 1e4, " GB/s"},
      {"memory_gbps", p.memory_gbps, 1, 1e5, " GB/s"},
  };
  for (const auto& f : fields) {
    if (absl::Status s = InRange(f.field, f.value, f.least, f.most, f.unit); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<std::string> NcclProfileNames() {
  return {"h100-8x400g", "h200-8x400g", "a100-8x200g", "b200-8x400g"};
}

// NVLink: links x SMxx_NVLINK_BW from NVIDIA/nccl src/graph/topo.h (H100 and
// H200 18 x 20.6, A100 12 x 20.0, B200 18 x 40.1). NICs: line rate / 8
// (ConnectX-7 400 Gb/s = 50 GB/s; HDR 200 Gb/s = 25). Memory: half the HBM
// peak (a copy reads and writes every byte): H100 SXM 3.35 TB/s, H200 4.8,
// A100 80GB SXM 2.039, B200 8. Sources in docs/planner-semantics.md §6.4.
absl::StatusOr<NcclProfile> BuiltinNcclProfile(absl::string_view name) {
  if (name == "h100-8x400g") return DefaultNcclProfile();
  if (name == "h200-8x400g") return EightGpuHost("h200-8x400g", GpuArch::kHopper, 370.8, 50, 2400);
  if (name == "a100-8x200g") {
    return EightGpuHost("a100-8x200g", GpuArch::kAmpere, 240.0, 25, 1019.5);
  }
  if (name == "b200-8x400g") {
    return EightGpuHost("b200-8x400g", GpuArch::kBlackwell, 721.8, 50, 4000);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "nccl profile: unknown \"", name, "\"; built in: ", absl::StrJoin(NcclProfileNames(), ", ")));
}

NcclProfile DefaultNcclProfile() {
  return EightGpuHost("h100-8x400g", GpuArch::kHopper, 370.8, 50, 1675);
}

}  // namespace reshard
