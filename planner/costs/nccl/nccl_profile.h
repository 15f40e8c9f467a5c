// NcclProfile: the machine NCCL's cost model (nccl_tuning.h) is evaluated
// for: the GPU generation, the host's NVLink and network, in the units NCCL's
// topology code sees them (docs/planner-semantics.md §6.4).
//
//   absl::StatusOr<NcclProfile> p = BuiltinNcclProfile("h100-8x400g");
//   NcclProfileNames()   // every built-in name, for --help and errors
//
// The profile holds physical facts; which channels and per-channel speeds
// NCCL's graph search would find for a group is derived from them
// (nccl_tuning.h, NcclGraphFor).
#ifndef RESHARD_PLANNER_COSTS_NCCL_NCCL_PROFILE_H_
#define RESHARD_PLANNER_COSTS_NCCL_NCCL_PROFILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// NCCL's compute-capability buckets (tuning.cc's compCapIndex).
enum class GpuArch { kVolta = 0, kAmpere = 1, kHopper = 2, kBlackwell = 3 };

// "volta", "ampere", "hopper", "blackwell"; nullopt-like false for others.
absl::string_view GpuArchName(GpuArch arch);
bool ParseGpuArch(absl::string_view name, GpuArch* arch);

struct NcclProfile {
  std::string name;
  GpuArch arch = GpuArch::kHopper;
  // GPUs one host holds; the NICs are shared among them (a group with p GPUs
  // on a host reaches p * nics_per_host / gpus_per_host NICs, at least one).
  int gpus_per_host = 8;
  // One GPU's NVLink bandwidth, GB/s, as NCCL's topology counts it: links x
  // SMxx_NVLINK_BW (src/graph/topo.h), e.g. H100 18 x 20.6.
  double nvlink_gbps = 370.8;
  // All GPUs of a host meet in NVSwitches (needed for NVLS).
  bool nvswitch = true;
  int nics_per_host = 8;
  // One NIC's speed, GB/s, as NCCL reads it (line rate / 8: 400 Gb/s = 50).
  double nic_gbps = 50;
  // AMD hosts: 2 us network overhead per ring step and AMD's LL caps
  // (tuning.cc getNetOverhead, llMaxBws); Intel otherwise.
  bool amd_cpu = false;
  // Local copies (chunk, partition): bytes written per second / 1e9.
  double memory_gbps = 1675;

  friend bool operator==(const NcclProfile& a, const NcclProfile& b) {
    return a.name == b.name && a.arch == b.arch && a.gpus_per_host == b.gpus_per_host &&
           a.nvlink_gbps == b.nvlink_gbps && a.nvswitch == b.nvswitch &&
           a.nics_per_host == b.nics_per_host && a.nic_gbps == b.nic_gbps &&
           a.amd_cpu == b.amd_cpu && a.memory_gbps == b.memory_gbps;
  }
  friend bool operator!=(const NcclProfile& a, const NcclProfile& b) { return !(a == b); }
};

// The most GPUs (and NICs) a host may hold: an NVL72 rack's NVLink domain.
inline constexpr int kMaxNcclGpusPerHost = 72;

// InvalidArgument naming the bad field and its range ("nccl profile: nic_gbps
// is 1e-320; must be from 0.1 to 10000 GB/s"): gpus_per_host and
// nics_per_host 1 to 72, nvlink_gbps 1 to 1e4, nic_gbps 0.1 to 1e4,
// memory_gbps 1 to 1e5 (spec §6.4).
absl::Status ValidateNcclProfile(const NcclProfile& profile);

// The built-in profiles, first the default: "h100-8x400g", "h200-8x400g",
// "a100-8x200g", "b200-8x400g" (sources: docs/planner-semantics.md §6.4).
std::vector<std::string> NcclProfileNames();
// InvalidArgument listing the names for an unknown one.
absl::StatusOr<NcclProfile> BuiltinNcclProfile(absl::string_view name);
// "h100-8x400g": DGX H100, 8 GPUs on NVSwitch, 8 x 400 Gb/s NICs.
NcclProfile DefaultNcclProfile();

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_NCCL_NCCL_PROFILE_H_
