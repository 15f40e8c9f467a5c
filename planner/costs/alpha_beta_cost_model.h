// The native cost model, "alpha-beta" (spec §6.2): per link a latency alpha
// and a bandwidth beta, standard ring formulas per collective, local copies
// priced by a memory bandwidth. Microseconds.
//
//   CostProfile profile = DefaultGpuProfile();   // or read one: formats/profile_json.h
//   std::shared_ptr<const CostModel> model = MakeAlphaBetaCostModel(profile, 8);
//   PlanOptions options;
//   options.cost_model = model;
//
// `reshard calibrate` measures a profile; the formulas below are the one
// place both the planner's prices and calibrate's fit come from.
#ifndef RESHARD_PLANNER_COSTS_ALPHA_BETA_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_ALPHA_BETA_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "planner/costs/cost_model.h"
#include "planner/steps/step.h"

namespace reshard {

// One kind of link: a message of b bytes takes alpha_us + b / beta.
struct LinkProfile {
  double alpha_us = 0;   // latency per hop, microseconds; >= 0
  double beta_gbps = 1;  // bandwidth per rank, GB/s (1e9 bytes/s); > 0
};

// The parameters of the model. Invariant (ValidateCostProfile): finite,
// alphas >= 0, bandwidths > 0.
struct CostProfile {
  std::string name;
  LinkProfile intra_host;  // mesh dims inside a host
  LinkProfile inter_host;  // mesh dims that cross hosts (spec §6's devices_per_host rule)
  double memory_gbps = 1;  // local copies (chunk, partition): bytes written per second / 1e9
  // Once per communicating call (a collective's launch and setup), whatever
  // its size: what makes an extra step cost something (spec §6.2); >= 0.
  double call_us = 0;
};

// InvalidArgument naming the bad field ("inter_host.beta_gbps: ...").
absl::Status ValidateCostProfile(const CostProfile& profile);

// 8-GPU hosts on NVLink, InfiniBand NDR (one 400 Gb/s NIC per GPU) between
// hosts; sources in docs/planner-semantics.md §6.2.
CostProfile DefaultGpuProfile();
// Gloo over TCP on loopback, measured by `reshard calibrate --mesh 2,4` on
// the development machine (bench/profiles/gloo-loopback.json).
CostProfile GlooLoopbackProfile();

// The alpha-beta model with `profile` (validated: InvalidArgument otherwise)
// and `devices_per_host` (>= 1). Its fingerprint names every parameter.
absl::StatusOr<std::shared_ptr<const CostModel>> MakeAlphaBetaCostModel(const CostProfile& profile,
                                                                        int64_t devices_per_host);

// Spec §6.2's formula for one communicating step, split into the part that
// scales with alpha and the part that scales with 1/beta:
//   time_us = hops * alpha_us + link_bytes / (beta_gbps * 1e3).
// `bytes` is what §6.2 counts for the kind (all_gather: the gathered block;
// reduce_scatter: the unscattered input; all_reduce, all_to_all, permute:
// the local block; exchange: its busiest member's, one message, the least
// an exchange costs: the model prices each exchange by its routes, spec
// §6.2); n the group's size. All zero for n <= 1 or a local kind.
// Ring kinds take n - 1 hops (all_reduce 2(n - 1)); all_to_all and permute
// are concurrent sends to every peer: one hop. The profile's call_us is
// added once per call on top (StepCost), not here.
struct AlphaBetaTerms {
  double hops = 0;
  double link_bytes = 0;
};
AlphaBetaTerms CommunicationTerms(StepKind kind, double n, double bytes);
// The time of `terms` on `link`, microseconds.
double TimeOnLinkUs(const AlphaBetaTerms& terms, const LinkProfile& link);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_ALPHA_BETA_COST_MODEL_H_
