// reshard plan: flags -> PlanRequest -> plan -> text, JSON or Graphviz.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "base/limit_status.h"
#include "cli/case_json.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/plan_format.h"

namespace reshard {
namespace {

int Fail(absl::string_view message, int code) {
  std::cerr << "reshard: " << Utf8Valid(message) << "\n";
  return code;
}

// The request the flags describe; InvalidArgument naming the flag.
absl::StatusOr<PlanRequest> RequestFromFlags(const FlagValues& flags) {
  for (const char* required : {"mesh", "shape", "src", "dst"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard plan --help)"));
    }
  }
  PlanRequest request;
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

}  // namespace

int RunPlanCommand(const std::vector<std::string>& args) {
  FlagParser parser("plan", {{"mesh", true},
                             {"shape", true},
                             {"dtype", true},
                             {"src", true},
                             {"dst", true},
                             {"algorithm", true},
                             {"cost-model", true},
                             {"devices-per-host", true},
                             {"profile", true},
                             {"coordinate", true},
                             {"format", true},
                             {"max-states", true},
                             {"max-edges", true},
                             {"mode", true},
                             {"max-memory", true},
                             {"help", false}});
  absl::StatusOr<FlagValues> flags = parser.Parse(args);
  if (!flags.ok()) return Fail(flags.status().message(), kExitBadInput);
  if (flags->Has("help")) {
    std::cout << PlanHelp();
    return kExitOk;
  }
  absl::StatusOr<PlanRequest> request = RequestFromFlags(*flags);
  if (!request.ok()) return Fail(request.status().message(), kExitBadInput);
  const std::string format = flags->Get("format", "text");
  if (format != "text" && format != "json" && format != "dot") {
    return Fail(absl::StrCat("--format: unknown format \"", Abbreviate(format, 64),
                             "\" (known: text, json, dot)"),
                kExitBadInput);
  }
  absl::StatusOr<Plan> plan = PlanFromRequest(*request, FieldStyle::kFlag);
  if (!plan.ok()) {
    std::string message(plan.status().message());
    const std::optional<std::string> limit = ExceededLimit(plan.status());
    if (limit == "max_expanded_states") absl::StrAppend(&message, " (--max-states)");
    if (limit == "max_search_edges") absl::StrAppend(&message, " (--max-edges)");
    return Fail(message, ExitCodeFor(plan.status()));
  }
  if (format == "json") {
    std::string out;
    AppendResultJson(nullptr, plan, &out);
    std::cout << out << "\n";
  } else if (format == "dot") {
    std::cout << FormatPlanDot(*plan, ModelNameOf(*request));
  } else {
    std::cout << FormatPlanText(*plan, ModelNameOf(*request), request->algorithm);
  }
  return kExitOk;
}

}  // namespace reshard
