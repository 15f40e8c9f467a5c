// reshard plan: flags -> PlanRequest -> plan -> text, JSON or Graphviz.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/plan/plan_format.h"
#include "cli/request_flags.h"
#include "formats/cross_mesh_json.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "planner/costs/alpha_beta_cost_model.h"

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
  RESHARD_RETURN_IF_ERROR(ReadRequestFlags(flags, &request));
  if (flags.Has("coordinate")) {
    RESHARD_ASSIGN_OR_RETURN(request.coordinate,
                             ParseIntList("coordinate", flags.Get("coordinate")));
  }
  RESHARD_RETURN_IF_ERROR(ReadCostModelFlags(flags, &request));
  if (flags.Has("max-edges")) {
    RESHARD_ASSIGN_OR_RETURN(request.max_edges, ParseInt("max-edges", flags.Get("max-edges")));
  }
  if (flags.Has("max-states")) {
    RESHARD_ASSIGN_OR_RETURN(request.max_states, ParseInt("max-states", flags.Get("max-states")));
  }
  request.algorithm = flags.Get("algorithm", request.algorithm);
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

--mesh, --shape, --src and --dst are required. A cross-mesh move (--dst-mesh,
--src-ranks, --dst-ranks) splits its crossing into rounds under --max-memory,
and takes neither --format dot nor --coordinate.
)txt";

// plan's flags: every request flag, and how to print the plan.
std::vector<FlagSpec> Flags() {
  std::vector<FlagSpec> flags =
      RequestFlags({"mesh", "shape", "src", "dst", "dtype", "algorithm", "mode", "cost-model",
                    "devices-per-host", "profile", "dst-mesh", "src-ranks", "dst-ranks"});
  flags.push_back({"coordinate", "C", "0,...; the rank whose logical shapes are reported"});
  for (FlagSpec& f : RequestFlags({"max-memory"})) flags.push_back(std::move(f));
  flags.push_back(
      {"format", "FORMAT",
       "text; text (a table), json (one object, as reshard batch prints) or dot (Graphviz: "
       "| dot -Tpng > plan.png). Every format names the mode, the plan's peak bytes per "
       "rank (input + output + scratch of its largest step) and the cost model it was "
       "priced with (json: cost_model, the model's name, profile and parameters)"});
  for (FlagSpec& f : RequestFlags({"max-states", "max-edges"})) flags.push_back(std::move(f));
  return flags;
}

}  // namespace

Command PlanCommand() {
  return {
      "plan",  "plan one redistribution and print it (table, JSON or Graphviz)",       kAbout,
      Flags(), absl::StrCat(ModesHelp(), "\n", NotationHelp(), "\n", ExitCodesHelp()), "reshard",
      RunPlan};
}

}  // namespace reshard
