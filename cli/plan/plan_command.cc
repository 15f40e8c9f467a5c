// reshard plan: flags -> PlanRequest -> plan -> text, JSON or Graphviz.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/plan/plan_format.h"
#include "formats/cross_mesh_json.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model_registry.h"

namespace reshard {
namespace {

// The request the flags describe; InvalidArgument naming the flag.
absl::StatusOr<RequestFields> RequestFromFlags(const FlagValues& flags) {
  for (const char* required : {"mesh", "shape", "src", "dst"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard plan --help)"));
    }
  }
  RequestFields request;
  RESHARD_ASSIGN_OR_RETURN(request.mesh, ParseIntList("mesh", flags.Get("mesh")));
  RESHARD_ASSIGN_OR_RETURN(request.shape, ParseIntList("shape", flags.Get("shape")));
  if (flags.Has("coordinate")) {
    RESHARD_ASSIGN_OR_RETURN(request.coordinate,
                             ParseIntList("coordinate", flags.Get("coordinate")));
  }
  if (flags.Has("devices-per-host")) {
    RESHARD_ASSIGN_OR_RETURN(request.devices_per_host,
                             ParseInt("devices-per-host", flags.Get("devices-per-host")));
  }
  if (flags.Has("max-edges")) {
    RESHARD_ASSIGN_OR_RETURN(request.max_edges, ParseInt("max-edges", flags.Get("max-edges")));
  }
  if (flags.Has("max-states")) {
    RESHARD_ASSIGN_OR_RETURN(request.max_states, ParseInt("max-states", flags.Get("max-states")));
  }
  if (flags.Has("dst-mesh")) {
    RESHARD_ASSIGN_OR_RETURN(request.dst_mesh, ParseIntList("dst-mesh", flags.Get("dst-mesh")));
  }
  for (const char* flag : {"src-ranks", "dst-ranks"}) {
    if (!flags.Has(flag)) continue;
    RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, ParseRankList(flag, flags.Get(flag)));
    (absl::string_view(flag) == "src-ranks" ? request.src_ranks : request.dst_ranks) =
        std::move(ranks);
  }
  request.src = flags.Get("src");
  request.dst = flags.Get("dst");
  request.dtype = flags.Get("dtype", request.dtype);
  request.algorithm = flags.Get("algorithm", request.algorithm);
  request.cost_model = flags.Get("cost-model");
  request.profile = flags.Get("profile");
  request.mode = flags.Get("mode");
  if (flags.Has("max-memory")) {
    RESHARD_ASSIGN_OR_RETURN(request.max_memory,
                             ParseByteSize("max-memory", flags.Get("max-memory")));
  }
  return request;
}

// A cross-mesh move (spec §14): text or JSON; a picture of two meshes and
// a crossing is not drawn yet.
CommandResult RunCrossMeshPlan(const RequestFields& fields, const std::string& format) {
  if (format == "dot") {
    return Fail(
        "--format dot: not available for cross-mesh moves (--dst-mesh, --src-ranks, "
        "--dst-ranks); use --format text or json",
        kExitBadInput);
  }
  absl::StatusOr<CrossMeshPlan> plan = CrossMeshPlanFromFields(fields, FieldStyle::kFlag);
  if (!plan.ok()) return Fail(plan.status().message(), ExitCodeFor(plan.status()));
  if (format == "json") {
    std::string out;
    AppendCrossMeshResultJson(nullptr, plan, &out);
    std::cout << out << "\n";
    return kExitOk;
  }
  PlanOptions options;
  if (absl::Status s = OptionsFromFields(fields, FieldStyle::kFlag, nullptr, &options); !s.ok()) {
    return Fail(s.message(), kExitBadInput);
  }
  std::cout << FormatCrossMeshText(*plan, ResolvedCostModel(options)->name());
  return kExitOk;
}

CommandResult RunPlan(const FlagValues& flags, const std::vector<std::string>&) {
  RESHARD_ASSIGN_OR_RETURN(RequestFields fields, RequestFromFlags(flags));
  const std::string format = flags.Get("format", "text");
  if (format != "text" && format != "json" && format != "dot") {
    return Fail(absl::StrCat("--format: unknown format \"", Abbreviate(format, 64),
                             "\" (known: text, json, dot)"),
                kExitBadInput);
  }
  if (IsCrossMesh(fields)) return RunCrossMeshPlan(fields, format);
  absl::StatusOr<PlanRequest> request = RequestFromFields(fields, FieldStyle::kFlag);
  if (!request.ok()) return Fail(request.status().message(), kExitBadInput);
  absl::StatusOr<Plan> plan = PlanRedistribution(*request);
  if (!plan.ok()) {
    const absl::Status status = InFrontEndTerms(plan.status(), FieldStyle::kFlag);
    return Fail(status.message(), ExitCodeFor(status));
  }
  const absl::string_view model = ResolvedCostModel(request->options)->name();
  if (format == "json") {
    std::string out;
    AppendResultJson(nullptr, plan, &out);
    std::cout << out << "\n";
  } else if (format == "dot") {
    std::cout << FormatPlanDot(*plan, model);
  } else {
    std::cout << FormatPlanText(*plan, model, fields.algorithm);
    if (!fields.profile.empty()) {
      std::cout << "profile:    " << Utf8Valid(fields.profile) << "\n";
    } else if (model == "alpha-beta") {
      std::cout << "profile:    built-in " << DefaultGpuProfile().name << "\n";
    }
  }
  return kExitOk;
}

// reshard plan --help before FLAGS.
constexpr char kAbout[] = R"txt(reshard plan: plan one redistribution.

USAGE
  reshard plan --mesh 2,2,2 --shape 8,8,8 --src 'S(0)[1]S(0)[0]S(0)[2]' --dst 'RS(0)[0]S(0)[1]'
  reshard plan --mesh 2,2,2 --shape 8,8,8 --src 'S(0)RR' --dst 'RRS(0)' --mode pytorch
  reshard plan --mesh 4,2 --shape 16,12 --src 'S(0)S(1)' --dst-mesh 2 --dst 'S(1)' \
      --dst-ranks 8,9
)txt";

}  // namespace

Command PlanCommand() {
  return {
      "plan",
      "plan one redistribution and print it (table, JSON or Graphviz)",
      kAbout,
      {
          {"mesh", "SIZES", "required; mesh dim sizes, e.g. 2,2,2"},
          {"shape", "SIZES", "required; global tensor shape, e.g. 8,8,8"},
          {"src", "LAYOUT", "required; source layout (see NOTATION)"},
          {"dst", "LAYOUT", "required; destination layout"},
          {"dtype", "NAME",
           "f32; one of f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool (or float32, bfloat16, int64, "
           "...)"},
          {"algorithm", "NAME",
           "auto; auto, graph or greedy. Native mode always searches its graph (auto and graph "
           "are the same; greedy is refused: use --mode pytorch). In pytorch mode auto is greedy "
           "unless a shard order or StridedShard needs the graph planner, which then also "
           "overrides an explicit greedy"},
          {"mode", "MODE",
           "native or pytorch (see MODES); default: pytorch when --cost-model names a pytorch "
           "model, native otherwise"},
          {"cost-model", "NAME",
           absl::StrCat("the mode's: nccl (native) or pytorch; one of: ",
                        absl::StrJoin(CostModelNames(), ", "),
                        " (all in microseconds but pytorch-const; nccl is NCCL's own model of "
                        "GPU clusters, spec §6.4; alpha-beta a textbook latency-bandwidth "
                        "model, spec §6.2)")},
          {"devices-per-host", "N",
           "8; ranks per host, for the pytorch, alpha-beta and nccl cost models (which ranks "
           "share a host)"},
          {"profile", "NAME|FILE",
           "the machine the model prices: for nccl a built-in profile (h100-8x400g, the "
           "default; h200-8x400g, a100-8x200g, b200-8x400g) or an nccl profile file; for "
           "alpha-beta a JSON profile as reshard calibrate writes. A file without "
           "--cost-model means alpha-beta"},
          {"dst-mesh", "SIZES",
           "--mesh; the destination's mesh, for a cross-mesh move (spec §14): --dst is laid "
           "out on it"},
          {"src-ranks", "LIST",
           "0,...,size-1; the global ranks of --mesh's ranks (row-major order of their "
           "coordinates), e.g. 0,1,2,3"},
          {"dst-ranks", "LIST",
           "0,...,size-1; the global ranks of --dst-mesh's ranks, e.g. 8,9. With --dst-mesh or "
           "--src-ranks, a move between two rank sets (disjoint, overlapping or the same): "
           "steps on the source mesh, one exchange across (in rounds under --max-memory), steps "
           "on the destination mesh. Not with --format dot or --coordinate"},
          {"coordinate", "C", "0,...; the rank whose logical shapes are reported"},
          {"max-memory", "BYTES",
           "no limit; bytes any rank may hold at once (an integer, optionally with K, M, G or "
           "T). Native mode plans only steps under it; pytorch mode fails if its plan is over; a "
           "cross-mesh move splits its crossing into rounds that fit (spec §14). No plan under "
           "it: exit code 3"},
          {"format", "FORMAT",
           "text; text (a table), json (one object, as reshard batch prints) or dot (Graphviz: "
           "| dot -Tpng > plan.png). Every format names the mode, the plan's peak bytes per "
           "rank (input + output + scratch of its largest step) and the cost model it was "
           "priced with (json: cost_model, the model's name, profile and parameters)"},
          {"max-states", "N", "1000000; bound on the states the graph search expands"},
          {"max-edges", "N",
           "1000000; bound on the edges the graph search generates, which bounds its time and "
           "memory (about 1 s and under 150 MB on an 8-D mesh; 1 to 2^30)"},
      },
      absl::StrCat(ModesHelp(), "\n", NotationHelp(), "\n", ExitCodesHelp()),
      "reshard",
      RunPlan};
}

}  // namespace reshard
