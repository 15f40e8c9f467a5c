// reshard costs: the cost of every (source, target) pair of a list of layouts,
// as JSON lines (CostMatrix, planner/cost_matrix.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "cli/case_json.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "planner/cost_matrix.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"

namespace reshard {
namespace {

// The layouts of `path` ("-": stdin), parsed for mesh/shape/dtype; errors
// name the line.
absl::StatusOr<std::vector<DistState>> ReadLayouts(const std::string& path,
                                                   const DeviceMesh& mesh,
                                                   const std::vector<int64_t>& shape,
                                                   DType dtype) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) {
      return absl::InvalidArgumentError(absl::StrCat("--layouts: cannot read \"", path, "\""));
    }
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<DistState> layouts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty()) continue;
    absl::StatusOr<DistSpec> spec = DistSpec::Parse(mesh, text, shape, dtype);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--layouts ", path, " line ", number, ": ",
                                                     spec.status().message()));
    }
    layouts.push_back(spec->state());
  }
  if (layouts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--layouts: no layout in \"", path, "\""));
  }
  return layouts;
}

absl::StatusOr<int64_t> PositiveFlag(const FlagValues& flags, const char* name, int64_t fallback) {
  if (!flags.Has(name)) return fallback;
  absl::StatusOr<int64_t> n = ParseInt(name, flags.Get(name));
  if (!n.ok()) return n.status();
  if (*n < 1) return absl::InvalidArgumentError(absl::StrCat("--", name, ": must be at least 1"));
  return *n;
}

// Everything but the layouts, validated; errors name the flag.
struct CostsRequest {
  DeviceMesh mesh;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  CostMatrixOptions options;
};

absl::StatusOr<CostsRequest> RequestFromFlags(const FlagValues& flags) {
  for (const char* required : {"mesh", "shape", "layouts"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard costs --help)"));
    }
  }
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseIntList("mesh", flags.Get("mesh")));
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
  if (!mesh.ok()) return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
  CostsRequest r{*mesh, {}, DType::kF32, CostMatrixOptions()};
  RESHARD_ASSIGN_OR_RETURN(r.shape, ParseIntList("shape", flags.Get("shape")));
  absl::StatusOr<DType> dtype = ParseDType(flags.Get("dtype", "f32"));
  if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype: ", dtype.status().message()));
  r.dtype = *dtype;
  if (absl::StatusOr<DistSpec> s = DistSpec::Create(r.mesh, DistState(r.mesh.ndim()), r.shape, r.dtype);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--shape: ", s.status().message()));
  }
  RESHARD_ASSIGN_OR_RETURN(int64_t per_host, PositiveFlag(flags, "devices-per-host", 8));
  // Mode and model as `reshard plan` takes them (native unless a pytorch
  // model or --mode pytorch is named).
  RequestFields model;
  model.mode = flags.Get("mode");
  model.cost_model = flags.Get("cost-model");
  model.devices_per_host = per_host;
  model.profile = flags.Get("profile");
  PlanOptions options;  // its rules are checked by CostMatrix
  RESHARD_RETURN_IF_ERROR(OptionsFromFields(model, FieldStyle::kFlag, nullptr, &options));
  r.options.mode = options.mode;
  r.options.cost_model = options.cost_model;
  RESHARD_ASSIGN_OR_RETURN(int64_t threads, PositiveFlag(flags, "threads", 1));
  r.options.threads = static_cast<int>(std::min<int64_t>(threads, 1024));
  RESHARD_ASSIGN_OR_RETURN(r.options.max_expanded_states,
                           PositiveFlag(flags, "max-states", r.options.max_expanded_states));
  return r;
}

// One line per source: {"src":i,"costs":[...]}, null where no plan exists.
void PrintMatrix(const CostMatrixResult& matrix) {
  std::string out;
  for (size_t i = 0; i < matrix.size(); ++i) {
    out.clear();
    absl::StrAppend(&out, "{\"src\":", i, ",\"costs\":[");
    for (size_t j = 0; j < matrix[i].size(); ++j) {
      const std::optional<double>& cost = matrix[i][j];
      absl::StrAppend(&out, j ? "," : "", cost ? FormatCost(*cost) : "null");
    }
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
}

CommandResult RunCosts(const FlagValues& flags, const std::vector<std::string>&) {
  absl::StatusOr<CostsRequest> r = RequestFromFlags(flags);
  if (!r.ok()) return Fail(r.status().message(), kExitBadInput);
  absl::StatusOr<std::vector<DistState>> layouts =
      ReadLayouts(flags.Get("layouts"), r->mesh, r->shape, r->dtype);
  if (!layouts.ok()) return Fail(layouts.status().message(), kExitBadInput);
  absl::StatusOr<CostMatrixResult> matrix =
      CostMatrix(r->mesh, r->shape, r->dtype, *layouts, *layouts, r->options);
  if (!matrix.ok()) {
    const absl::Status status = InFrontEndTerms(matrix.status(), FieldStyle::kFlag);
    return Fail(status.message(), absl::IsResourceExhausted(status)    ? kExitNoPlan
                                  : absl::IsInvalidArgument(status) ? kExitBadInput
                                                                    : kExitInternal);
  }
  PrintMatrix(*matrix);
  return kExitOk;
}

// reshard costs --help before FLAGS.
constexpr char kAbout[] = R"txt(reshard costs: the cost of every redistribution between a list of layouts.

For auto-parallel solvers that price many (source, target) layout pairs of one
tensor: reads N layouts and prints the N x N matrix of graph-plan costs, one
JSON line per source. Entry j of line i is exactly the cost `reshard plan
--algorithm graph` reports for layout i -> layout j (null where no plan
exists), but each row comes from one search instead of N.

USAGE
  printf 'S(0)RR\nRS(1)R\nP(sum)RS(0)\n' > layouts.txt
  reshard costs --mesh 2,2,2 --shape 1024,4096 --layouts layouts.txt
  out (native mode, the default; one line per layout, in file order):
    {"src":0,"costs":[0.0,14.440018846308995,30.73206873739411]}
    {"src":1,"costs":[14.440018846308995,0.0,16.944080935861233]}
    {"src":2,"costs":[33.24395398144412,26.97597560306575,0.0]}
  reshard costs --mesh 2,2,2 --shape 1024,4096 --layouts layouts.txt --mode pytorch
)txt";

}  // namespace

Command CostsCommand() {
  return {
      "costs",
      "the cost of every (source, target) pair of a list of layouts",
      kAbout,
      {
          {"mesh", "SIZES", "required; mesh dim sizes, e.g. 2,2,2"},
          {"shape", "SIZES", "required; global tensor shape, e.g. 1024,4096"},
          {"layouts", "FILE",
           "required; one layout per line (see NOTATION), - for stdin; blank lines are "
           "skipped, indices count layouts"},
          {"dtype", "NAME", "f32; as for reshard plan"},
          {"mode", "MODE",
           "native or pytorch, as for reshard plan: native unless --cost-model names a "
           "pytorch model"},
          {"cost-model", "NAME",
           absl::StrCat("the mode's: nccl (native) or pytorch; one of: ",
                        absl::StrJoin(CostModelNames(), ", "))},
          {"devices-per-host", "N",
           "8; ranks per host, for the pytorch, alpha-beta and nccl cost models"},
          {"profile", "NAME|FILE", "the nccl or alpha-beta model's profile (see reshard plan --help)"},
          {"threads", "N", "1; rows are computed on N threads"},
          {"max-states", "N", "1000000; bound on the states each row's search expands"},
      },
      absl::StrCat(R"txt(Entry j of row i is the cost `reshard plan --algorithm graph` reports for
layout i -> layout j in the same mode: pytorch mode runs one search per row
(spec §5.1); native mode one A* pass per pair over states and edges shared by
all pairs, since its graph depends on the target (spec §5.2).

)txt",
                   NotationHelp(), "\n", ExitCodesHelp()),
      "reshard",
      RunCosts};
}

}  // namespace reshard
