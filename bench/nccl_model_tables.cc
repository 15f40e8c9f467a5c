// Prints the nccl cost model next to published results (bench/README.md):
//   nccl_model_tables published bench/nccl_tests_published.csv
//     the model (spec §6.4) next to published nccl-tests results, error per row;
//   nccl_model_tables cases bench/nccl_cases.jsonl
//     realistic cases, native vs pytorch plans, both priced by the model.
// No GPU is involved: every number is the model's or a published one.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/costs/nccl/nccl_cost_model.h"
#include "planner/costs/nccl/nccl_profile.h"
#include "planner/costs/nccl/nccl_tuning.h"
#include "planner/layout/dist_spec.h"
#include "planner/layout/dtype.h"
#include "planner/planner.h"

namespace reshard {
namespace {

struct Published {
  std::string collective, profile;
  int64_t gpus = 0, per_host = 0;
  double bytes = 0, value = 0;
  std::string unit, source;
};

// nccl-tests' definitions: the size is the whole buffer (all_gather: the
// output; reduce_scatter: the input; all_reduce: the buffer; alltoall: one
// rank's send buffer); busbw = size / time * (n-1)/n, all_reduce 2(n-1)/n.
double ModelTimeUs(const Published& p, const NcclProfile& profile) {
  const int64_t hosts = (p.gpus + p.per_host - 1) / p.per_host;
  const NcclTuning t(profile, p.gpus, hosts);
  if (p.collective == "all_gather") return t.Time(NcclFunc::kAllGather, p.bytes).time_us;
  if (p.collective == "reduce_scatter") return t.Time(NcclFunc::kReduceScatter, p.bytes).time_us;
  if (p.collective == "all_reduce") return t.Time(NcclFunc::kAllReduce, p.bytes).time_us;
  const int64_t local = std::min(p.gpus, p.per_host);
  const double share = p.bytes / static_cast<double>(p.gpus);
  NcclP2pCall call{local - 1, p.gpus - local, share * (local - 1), share * (p.gpus - local)};
  return NcclP2pTimeUs(NcclP2pLinksFor(profile), call);
}

double BusBw(const Published& p, double time_us) {
  const double n = static_cast<double>(p.gpus);
  const double factor = p.collective == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
  return p.bytes / (time_us * 1e3) * factor;
}

std::string Size(double bytes) {
  if (bytes >= 1 << 30) return absl::StrCat(bytes / (1 << 30), " GiB");
  if (bytes >= 1 << 20) return absl::StrCat(bytes / (1 << 20), " MiB");
  if (bytes >= 1 << 10) return absl::StrCat(bytes / (1 << 10), " KiB");
  return absl::StrCat(bytes, " B");
}

int PublishedTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot read\n";
    return 2;
  }
  std::printf(
      "| collective | GPUs (hosts x per host) | size | published | model | error | "
      "model's choice | source |\n|---|---|---|---|---|---|---|---|\n");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != 8) {
      std::cerr << path << ": 8 fields expected: " << line << "\n";
      return 2;
    }
    Published p{f[0], f[1], std::stoll(f[2]), std::stoll(f[3]), std::stod(f[4]), std::stod(f[5]),
                f[6], f[7]};
    absl::StatusOr<NcclProfile> profile = BuiltinNcclProfile(p.profile);
    if (!profile.ok()) {
      std::cerr << profile.status() << "\n";
      return 2;
    }
    profile->gpus_per_host = static_cast<int>(p.per_host);
    const double t = ModelTimeUs(p, *profile);
    const double model = p.unit == "us" ? t : BusBw(p, t);
    const int64_t hosts = (p.gpus + p.per_host - 1) / p.per_host;
    std::string choice = "send/recv";
    if (p.collective != "alltoall") {
      const NcclTuning tuning(*profile, p.gpus, hosts);
      const NcclFunc fn = p.collective == "all_gather"       ? NcclFunc::kAllGather
                          : p.collective == "reduce_scatter" ? NcclFunc::kReduceScatter
                                                             : NcclFunc::kAllReduce;
      const NcclChoice c = tuning.Time(fn, p.bytes);
      choice = absl::StrCat(NcclAlgoName(c.algo), "/", NcclProtoName(c.proto));
    }
    std::printf("| %s | %lld (%lld x %lld) %s | %s | %s %s | %.4g %s | %+.0f%% | %s | %s |\n",
                p.collective.c_str(), static_cast<long long>(p.gpus), static_cast<long long>(hosts),
                static_cast<long long>(std::min(p.gpus, p.per_host)), p.profile.c_str(),
                Size(p.bytes).c_str(), absl::StrFormat("%g", p.value).c_str(),
                p.unit == "us" ? "us" : "GB/s busbw", model, p.unit == "us" ? "us" : "GB/s",
                (model / p.value - 1) * 100, choice.c_str(), p.source.c_str());
  }
  return 0;
}

// "all_gather{0,1}" for a step on mesh dims 0 and 1; "permute{0,1}
// staged/2" for one staged over rails in 2 chunks (spec §11.2).
std::string Steps(const Plan& plan) {
  std::vector<std::string> out;
  for (const TransformInfo& t : plan.steps) {
    std::vector<int> dims;
    for (int m = 0; m < kMaxMeshDims; ++m) {
      if (t.step.group.Contains(m)) dims.push_back(m);
    }
    out.push_back(absl::StrCat(
        StepKindName(t.step.kind), "{", absl::StrJoin(dims, ","), "}",
        t.step.staging.staged() ? absl::StrCat(" staged/", t.step.staging.chunks) : ""));
  }
  return out.empty() ? "-" : absl::StrJoin(out, " ");
}

bool HasGroupStep(const Plan& plan) {
  for (const TransformInfo& t : plan.steps) {
    if (t.step.group.size() > 1 || MovesSlices(t.step.kind)) return true;
  }
  return false;
}

absl::StatusOr<std::string> CaseRow(const nlohmann::json& c) {
  const std::vector<int64_t> mesh_sizes = c.at("mesh").get<std::vector<int64_t>>();
  const std::vector<int64_t> shape = c.at("shape").get<std::vector<int64_t>>();
  const int64_t per_host = c.value("devices_per_host", 8);
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(mesh_sizes);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<DType> dtype = ParseDType(c.at("dtype").get<std::string>());
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<DistSpec> src =
      DistSpec::Parse(*mesh, c.at("src").get<std::string>(), shape, *dtype);
  absl::StatusOr<DistSpec> dst =
      DistSpec::Parse(*mesh, c.at("dst").get<std::string>(), shape, *dtype);
  if (!src.ok()) return src.status();
  if (!dst.ok()) return dst.status();
  absl::StatusOr<std::shared_ptr<const CostModel>> model =
      MakeNcclCostModel(DefaultNcclProfile(), per_host);
  if (!model.ok()) return model.status();
  PlanOptions native_options;
  native_options.mode = PlanMode::kNative;
  native_options.cost_model = *model;
  absl::StatusOr<Plan> native = PlanRedistribution(*src, *dst, native_options);
  PlanOptions pytorch_options;
  pytorch_options.mode = PlanMode::kPyTorch;
  pytorch_options.cost_model = *MakeCostModel("pytorch", per_host);
  absl::StatusOr<Plan> pytorch = PlanRedistribution(*src, *dst, pytorch_options);
  if (!native.ok()) return native.status();
  if (!pytorch.ok()) return pytorch.status();
  // PyTorch's plan, priced step by step by the nccl model.
  const std::unique_ptr<const BoundCostModel> bound =
      (*model)->Bind(CostProblem{*mesh, shape, ItemSize(*dtype)});
  double repriced = 0;
  for (size_t k = 0; k < pytorch->steps.size(); ++k) {
    repriced += bound->StepCost(pytorch->states[k], pytorch->steps[k].step);
  }
  const int64_t bytes = ItemSize(*dtype) * [&] {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }();
  return absl::StrFormat("| %s | %s | %s | %s -> %s | %s | %.1f | %s | %.1f | %.2fx | %s |",
                         c.at("name").get<std::string>(), absl::StrJoin(mesh_sizes, "x"),
                         Size(static_cast<double>(bytes)), c.at("src").get<std::string>(),
                         c.at("dst").get<std::string>(), Steps(*native), native->cost,
                         Steps(*pytorch), repriced, repriced / native->cost,
                         HasGroupStep(*native) ? "yes" : "");
}

int CasesTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot read\n";
    return 2;
  }
  std::printf(
      "| case | mesh | tensor | src -> dst | native plan | native us | pytorch plan | "
      "pytorch us | pytorch / native | group step |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    absl::StatusOr<std::string> row = CaseRow(nlohmann::json::parse(line));
    if (!row.ok()) {
      std::cerr << line << ": " << row.status() << "\n";
      return 2;
    }
    std::printf("%s\n", row->c_str());
  }
  return 0;
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  const std::string what = argc == 3 ? argv[1] : "";
  if (what == "published") return reshard::PublishedTable(argv[2]);
  if (what == "cases") return reshard::CasesTable(argv[2]);
  std::cerr << "usage: nccl_model_tables published|cases FILE (bench/README.md)\n";
  return 2;
}
