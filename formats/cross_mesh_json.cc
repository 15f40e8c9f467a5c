#include "formats/cross_mesh_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dtype.h"

namespace reshard {
namespace {

// The mesh of `field` ("mesh" or "dst_mesh"), errors naming it.
absl::StatusOr<DeviceMesh> MeshOf(const std::vector<int64_t>& sizes, absl::string_view field,
                                  FieldStyle style) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
  if (mesh.ok()) return mesh;
  absl::string_view message = mesh.status().message();
  absl::ConsumePrefix(&message, "mesh: ");  // DeviceMesh's errors say "mesh: "
  return FieldError(field, style, message);
}

// What a cross-mesh request cannot have.
absl::Status CheckUnsupported(const RequestFields& r, FieldStyle style) {
  if (!r.coordinate.empty()) {
    return FieldError("coordinate", style,
                      "not supported for cross-mesh moves (their steps are on two meshes)");
  }
  return absl::OkStatus();
}

void AppendPlanCost(const std::optional<double>& cost, std::string* out) {
  absl::StrAppend(out, cost.has_value() ? FormatCost(*cost) : "null");
}

// The crossing's object (AppendCrossMeshResultJson).
void AppendCrossingJson(const CrossMeshPlan& plan, std::string* out) {
  absl::StrAppend(out, "{\"src\":\"", plan.crossing_src.state().ToString(), "\",\"dst\":\"",
                  plan.crossing_dst.state().ToString(), "\",\"cost\":");
  AppendPlanCost(plan.crossing_cost, out);
  const absl::string_view why = plan.RoundsFor();
  absl::StrAppend(out, ",\"participants\":[", absl::StrJoin(plan.participants, ","),
                  "],\"slices\":", plan.routes.size(), ",\"rounds\":", plan.rounds,
                  ",\"rounds_for\":", why.empty() ? "null" : absl::StrCat("\"", why, "\""),
                  ",\"pairs\":[");
  const std::vector<CrossingPair> pairs = CrossingPairs(plan);
  for (size_t i = 0; i < pairs.size(); ++i) {
    absl::StrAppend(out, i > 0 ? "," : "", "{\"src\":", pairs[i].src, ",\"dst\":", pairs[i].dst,
                    ",\"bytes\":", pairs[i].bytes, "}");
  }
  const std::vector<int64_t> sent = plan.BytesSent();
  const std::vector<int64_t> bound = plan.ReceiveLowerBoundBytes();
  int64_t total = 0;
  for (int64_t b : sent) total += b;
  absl::StrAppend(out, "],\"bytes_sent\":", total, ",\"max_bytes_sent\":",
                  sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end()),
                  ",\"receive_lower_bound_max\":",
                  bound.empty() ? 0 : *std::max_element(bound.begin(), bound.end()), "}");
}

}  // namespace

absl::StatusOr<CrossMeshPlan> CrossMeshPlanFromFields(const RequestFields& r, FieldStyle style,
                                                      ProfileCache* profiles) {
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh mesh, MeshOf(r.mesh, "mesh", style));
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh dst_mesh,
                           MeshOf(r.dst_mesh.empty() ? r.mesh : r.dst_mesh, "dst_mesh", style));
  absl::StatusOr<DType> dtype = ParseDType(r.dtype);
  if (!dtype.ok()) return FieldError("dtype", style, dtype.status().message());
  if (absl::StatusOr<DistSpec> s = DistSpec::Create(mesh, DistState(mesh.ndim()), r.shape, *dtype);
      !s.ok()) {
    return FieldError("shape", style, s.status().message());
  }
  RESHARD_RETURN_IF_ERROR(CheckUnsupported(r, style));
  PlanOptions options;
  RESHARD_RETURN_IF_ERROR(OptionsFromFields(r, style, profiles, &options));
  absl::StatusOr<DistSpec> src = DistSpec::Parse(mesh, r.src, r.shape, *dtype);
  if (!src.ok()) return FieldError("src", style, src.status().message());
  absl::StatusOr<DistSpec> dst = DistSpec::Parse(dst_mesh, r.dst, r.shape, *dtype);
  if (!dst.ok()) return FieldError("dst", style, dst.status().message());
  absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(
      CrossMeshRequest{*std::move(src), *std::move(dst), r.src_ranks, r.dst_ranks}, options);
  if (!plan.ok()) return InFrontEndTerms(plan.status(), style);
  return plan;
}

std::vector<CrossingPair> CrossingPairs(const CrossMeshPlan& plan) {
  std::map<std::pair<int64_t, int64_t>, CrossingPair> pairs;
  const int64_t itemsize = ItemSize(plan.crossing_src.dtype());
  for (size_t k = 0; k < plan.routes.size(); ++k) {
    const SliceRoute& route = plan.routes[k];
    if (route.sender == route.receiver) continue;
    const int64_t src = plan.participants[route.sender], dst = plan.participants[route.receiver];
    CrossingPair& pair = pairs[{src, dst}];
    pair.src = src;
    pair.dst = dst;
    pair.bytes += itemsize * BoxElements(route.box);
    pair.boxes.push_back(route.box);
    pair.rounds.push_back(plan.route_rounds[k]);
  }
  std::vector<CrossingPair> out;
  for (auto& [key, pair] : pairs) out.push_back(std::move(pair));
  return out;
}

void AppendCrossMeshResultJson(const nlohmann::json& id, const absl::StatusOr<CrossMeshPlan>& plan,
                               std::string* out) {
  if (plan.ok() && plan->cost.has_value() && !std::isfinite(*plan->cost)) {
    return AppendResultJson(
        id,
        absl::InvalidArgumentError(
            absl::StrCat("cost_model: the plan's cost is not finite (", FormatCost(*plan->cost),
                         "); the cost model's parameters make a step's price overflow")),
        out);
  }
  if (!plan.ok()) return AppendResultJson(id, plan.status(), out);
  absl::StrAppend(out, "{\"id\":", id.dump(), ",\"ok\":true,\"cross_mesh\":true,\"cost\":");
  AppendPlanCost(plan->cost, out);
  absl::StrAppend(out, ",\"peak_bytes\":", plan->peak_bytes, ",\"src_mesh\":[",
                  absl::StrJoin(plan->crossing_src.mesh().sizes(), ","), "],\"dst_mesh\":[",
                  absl::StrJoin(plan->crossing_dst.mesh().sizes(), ","), "],\"src_ranks\":[",
                  absl::StrJoin(plan->src_ranks, ","), "],\"dst_ranks\":[",
                  absl::StrJoin(plan->dst_ranks, ","), "],\"before\":");
  AppendStepsJson(plan->before, out);
  absl::StrAppend(out, ",\"after\":");
  AppendStepsJson(plan->after, out);
  absl::StrAppend(out, ",\"crossing\":");
  AppendCrossingJson(*plan, out);
  absl::StrAppend(out, ",\"mode\":\"", PlanModeName(plan->before.mode), "\",\"cost_model\":");
  // The steps before and after and the crossing are priced by one model.
  AppendJsonString(plan->before.cost_model, out);
  out->push_back('}');
}

}  // namespace reshard
