#include "cli/request_flags.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/costs/cost_model_registry.h"

namespace reshard {
namespace {

// Every request flag, once: "DEFAULT; what it is" where it has a default.
std::vector<FlagSpec> AllRequestFlags() {
  return {
      {"mesh", "SIZES", "mesh dim sizes, e.g. 2,2,2"},
      {"shape", "SIZES", "global tensor shape, e.g. 8,8,8"},
      {"src", "LAYOUT", "the source layout (see NOTATION)"},
      {"dst", "LAYOUT", "the destination layout (see NOTATION)"},
      {"dtype", "NAME",
       "f32; one of f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool (or float32, bfloat16, int64, ...)"},
      {"mode", "MODE",
       "native (the default) or pytorch; see MODES, also for the pytorch cost models that "
       "pick pytorch mode"},
      {"algorithm", "NAME",
       "auto; auto, graph or greedy. Native mode always searches its graph (auto and graph "
       "are the same; greedy is refused: use --mode pytorch). In pytorch mode auto is greedy "
       "unless a shard order or StridedShard needs the graph planner, which then also "
       "overrides an explicit greedy"},
      {"cost-model", "NAME",
       absl::StrCat(
           "the mode's: nccl (native) or pytorch; one of: ", absl::StrJoin(CostModelNames(), ", "),
           ", measured (all in microseconds but pytorch-const; nccl is NCCL's own "
           "model of GPU clusters, spec §6.4; alpha-beta a textbook "
           "latency-bandwidth model, spec §6.2; measured interpolates the tables "
           "reshard calibrate writes, spec §6.3, given as --profile FILE)")},
      {"profile", "NAME|FILE",
       "the machine the model prices: for nccl a built-in profile (h100-8x400g, the "
       "default; h200-8x400g, a100-8x200g, b200-8x400g) or an nccl profile file; for "
       "alpha-beta a JSON profile as reshard calibrate writes. A file without "
       "--cost-model means alpha-beta"},
      {"devices-per-host", "N",
       "8; ranks per host, for the pytorch, alpha-beta and nccl cost models (which ranks "
       "share a host)"},
      {"dst-mesh", "SIZES",
       "--mesh; the destination's mesh sizes, for a cross-mesh move (spec §14): --dst is "
       "laid out on it"},
      {"src-ranks", "LIST",
       "0,...,size-1; the global ranks of --mesh's ranks (row-major order of their "
       "coordinates), e.g. 0,1,2,3"},
      {"dst-ranks", "LIST",
       "0,...,size-1; the global ranks of --dst-mesh's ranks, e.g. 8,9. With --dst-mesh or "
       "--src-ranks, a move between two rank sets (disjoint, overlapping or the same): "
       "steps on the source mesh, one exchange across, steps on the destination mesh"},
      {"max-memory", "BYTES",
       "no limit; bytes any rank may hold at once (an integer, optionally with K, M, G or "
       "T). Native mode plans only steps under it; pytorch mode fails if its plan is over; a "
       "cross-mesh move splits its crossing into rounds that fit (spec §14). No plan under "
       "it: exit code 3"},
      {"max-states", "N", "1000000; bound on the states the graph search expands"},
      {"max-edges", "N",
       "1000000; bound on the edges the graph search generates, which bounds its time and "
       "memory (about 1 s and under 150 MB on an 8-D mesh; 1 to 2^30)"},
  };
}

}  // namespace

std::vector<FlagSpec> ChildRankFlags() {
  return {{"rank", "R", "", /*hidden=*/true},
          {"store-dir", "DIR", "", /*hidden=*/true},
          {"job", "NAME", "", /*hidden=*/true}};
}

std::vector<FlagSpec> RequestFlags(std::initializer_list<absl::string_view> names) {
  static const std::vector<FlagSpec>* const all = new std::vector<FlagSpec>(AllRequestFlags());
  std::vector<FlagSpec> specs;
  for (absl::string_view name : names) {
    auto it = std::find_if(all->begin(), all->end(),
                           [name](const FlagSpec& f) { return f.name == name; });
    if (it == all->end()) {
      std::cerr << "RequestFlags: no request flag --" << name << "\n";
      std::abort();
    }
    specs.push_back(*it);
  }
  return specs;
}

absl::Status ReadRequestFlags(const FlagValues& flags, RequestFields* request) {
  RESHARD_ASSIGN_OR_RETURN(request->mesh, ParseIntList("mesh", flags.Get("mesh")));
  RESHARD_ASSIGN_OR_RETURN(request->shape, ParseIntList("shape", flags.Get("shape")));
  if (flags.Has("dst-mesh")) {
    RESHARD_ASSIGN_OR_RETURN(request->dst_mesh, ParseIntList("dst-mesh", flags.Get("dst-mesh")));
  }
  if (flags.Has("src-ranks")) {
    RESHARD_ASSIGN_OR_RETURN(request->src_ranks,
                             ParseRankList("src-ranks", flags.Get("src-ranks")));
  }
  if (flags.Has("dst-ranks")) {
    RESHARD_ASSIGN_OR_RETURN(request->dst_ranks,
                             ParseRankList("dst-ranks", flags.Get("dst-ranks")));
  }
  request->dtype = flags.Get("dtype", request->dtype);
  request->src = flags.Get("src");
  request->dst = flags.Get("dst");
  return absl::OkStatus();
}

absl::Status ReadCostModelFlags(const FlagValues& flags, RequestFields* request) {
  request->cost_model = flags.Get("cost-model");
  request->profile = flags.Get("profile");
  if (flags.Has("devices-per-host")) {
    RESHARD_ASSIGN_OR_RETURN(request->devices_per_host,
                             ParseInt("devices-per-host", flags.Get("devices-per-host")));
  }
  return absl::OkStatus();
}

}  // namespace reshard
