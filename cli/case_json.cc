#include "cli/case_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/cross_mesh_json.h"
#include "cli/nccl_profile_json.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/costs/nccl/nccl_cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/layout/dtype.h"
#include "planner/planner.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

using json = nlohmann::json;

// string_views: a key is compared with each of these, length first.
constexpr absl::string_view kKeys[] = {"id",        "mesh",       "shape",
                                       "dtype",     "src",        "dst",
                                       "algorithm", "cost_model", "devices_per_host",
                                       "profile",   "coordinate", "expected",
                                       "mode",      "max_memory", "max_edges",
                                       "dst_mesh",  "src_ranks",  "dst_ranks"};
// Deeper JSON than this is not a case; refusing it early keeps a hostile line
// from exhausting the stack in the recursive parts of the JSON library.
constexpr int kMaxJsonDepth = 16;

// The value as JSON text, shortened (at a character boundary) for an error message.
std::string Shown(const json& v) { return Abbreviate(v.dump(), 40); }

absl::Status GetInt(const json& v, absl::string_view key, int64_t* out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return FieldError(key, FieldStyle::kJsonKey, absl::StrCat(Shown(v), " is out of range"));
    }
    *out = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return absl::OkStatus();
  }
  return FieldError(key, FieldStyle::kJsonKey, absl::StrCat("expected an integer, got ", Shown(v)));
}

absl::Status GetIntList(const json& v, absl::string_view key, std::vector<int64_t>* out) {
  if (!v.is_array()) {
    return FieldError(key, FieldStyle::kJsonKey,
                      absl::StrCat("expected a list of integers, got ", Shown(v)));
  }
  out->clear();
  for (const json& item : v) {
    int64_t x;
    if (absl::Status s = GetInt(item, key, &x); !s.ok()) {
      return FieldError(key, FieldStyle::kJsonKey,
                        absl::StrCat("expected a list of integers, got ", Shown(v)));
    }
    out->push_back(x);
  }
  return absl::OkStatus();
}

absl::Status GetString(const json& v, absl::string_view key, std::string* out) {
  if (!v.is_string()) {
    return FieldError(key, FieldStyle::kJsonKey, absl::StrCat("expected a string, got ", Shown(v)));
  }
  *out = v.get<std::string>();
  return absl::OkStatus();
}

absl::StatusOr<Algorithm> AlgorithmOrError(absl::string_view name) {
  std::optional<Algorithm> a = ParseAlgorithm(name);
  if (a) return *a;
  return absl::InvalidArgumentError(absl::StrCat("unknown algorithm \"", Abbreviate(name, 64),
                                                 "\" (known: auto, graph, greedy)"));
}

// Deepest nesting of [ and { outside strings; stops counting past the limit.
int JsonDepth(absl::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth && (max_depth = depth) > kMaxJsonDepth) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

// The JSON parser keeps integers beyond 64 bits only as doubles; echoing such
// an id would print other digits than the request's.
absl::Status CheckId(const json& id) {
  if (!id.is_number_float()) return absl::OkStatus();
  const double v = id.get<double>();
  if (std::abs(v) < 0x1p63 || v != std::floor(v)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("id: ", Shown(id), " is an integer too large to echo exactly (more than ",
                   "64 bits); give big ids as strings"));
}

}  // namespace

// A JSON string literal: quotes, backslashes and control characters escaped,
// bytes that are not UTF-8 replaced (messages may quote raw input).
void AppendJsonString(absl::string_view text, std::string* out) {
  std::string valid;
  absl::string_view s = text;
  if (!IsValidUtf8(text)) s = valid = Utf8Valid(text);
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(out, absl::StrFormat("\\u%04x", static_cast<unsigned char>(c)));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendCost(double cost, std::string* out) {
  char buf[64];
  // Shortest round trip (C++17 <charconv>), like Python's repr.
  char* end = std::to_chars(buf, buf + sizeof(buf), cost).ptr;
  const bool integral = std::find_if(buf, end, [](char c) {
                          return c == '.' || c == 'e' || c == 'n';
                        }) == end;  // not inf/nan either
  out->append(buf, end);
  if (integral) out->append(".0");  // "2" -> "2.0"
}

std::string FormatCost(double cost) {
  std::string s;
  AppendCost(cost, &s);
  return s;
}

namespace {

// A model named by a profile: "alpha-beta" (either version) or "measured"
// (version 2, spec §6.3), read through `profiles` if given.
absl::StatusOr<std::shared_ptr<const CostModel>> ModelFromProfile(const RequestFields& r,
                                                                  absl::string_view name,
                                                                  FieldStyle style,
                                                                  ProfileCache* profiles) {
  ProfileCache once;
  const absl::StatusOr<LoadedProfile>& profile = (profiles ? profiles : &once)->Get(r.profile);
  if (!profile.ok()) return FieldError("profile", style, profile.status().message());
  if (name == "alpha-beta") {
    return MakeAlphaBetaCostModel(profile->measured.machine, r.devices_per_host);
  }
  if (profile->version < 2) {
    return FieldError("profile", style,
                      absl::StrCat(Abbreviate(r.profile, 200),
                                   " is a version 1 (alpha-beta) profile with no measured "
                                   "tables; the measured model needs version 2 (reshard "
                                   "calibrate writes it), or use ",
                                   FieldName("cost_model", style), " alpha-beta"));
  }
  return MakeMeasuredCostModel(profile->measured, r.devices_per_host);
}

}  // namespace

// `default_name` is the model of the request's mode (DefaultCostModelName),
// used when the request names none: a profile without a model names the
// nccl model's parameters when it is a built-in NCCL profile's name, else
// alpha-beta's (a file, as reshard calibrate writes).
absl::StatusOr<std::shared_ptr<const CostModel>> CostModelFromFields(const RequestFields& r,
                                                                     absl::string_view default_name,
                                                                     FieldStyle style,
                                                                     ProfileCache* profiles) {
  // Issue 15: a built-in NCCL profile's name means the nccl model.
  const std::vector<std::string> nccl_profiles = NcclProfileNames();
  const bool nccl_profile =
      std::find(nccl_profiles.begin(), nccl_profiles.end(), r.profile) != nccl_profiles.end();
  const std::string name = !r.cost_model.empty() ? r.cost_model
                           : nccl_profile        ? "nccl"
                           : !r.profile.empty()  ? "alpha-beta"
                                                 : std::string(default_name);
  std::vector<std::string> models = CostModelNames();
  models.push_back("measured");  // needs a profile, so MakeCostModel does not make it
  if (std::find(models.begin(), models.end(), name) == models.end()) {
    return FieldError("cost_model", style,
                      absl::StrCat("unknown cost model \"", Abbreviate(name, 64),
                                   "\" (known: ", absl::StrJoin(models, ", "), ")"));
  }
  if (r.devices_per_host < 1) {
    return FieldError("devices_per_host", style,
                      absl::StrCat("must be at least 1, got ", r.devices_per_host));
  }
  if (name == "measured" && r.profile.empty()) {
    return FieldError(
        "profile", style,
        absl::StrCat("the measured cost model prices from a calibrated profile; "
                     "give one (",
                     FieldName("profile", style), " FILE, written by reshard calibrate)"));
  }
  if (r.profile.empty()) {
    absl::StatusOr<std::shared_ptr<const CostModel>> model =
        MakeCostModel(name, r.devices_per_host);
    if (!model.ok()) return FieldError("cost_model", style, model.status().message());
    return model;
  }
  if (name == "nccl") {
    // A built-in NCCL profile by name, or an nccl profile file (spec §6.4).
    absl::StatusOr<NcclProfile> profile = ReadNcclProfile(r.profile);
    if (!profile.ok()) return FieldError("profile", style, profile.status().message());
    return MakeNcclCostModel(*profile, r.devices_per_host);
  }
  if (name != "alpha-beta" && name != "measured") {
    return FieldError(
        "profile", style,
        absl::StrCat("a profile sets the alpha-beta, nccl or measured cost model's "
                     "parameters, but ",
                     FieldName("cost_model", style), " is \"", Abbreviate(name, 64), "\" (use ",
                     FieldName("cost_model", style), " alpha-beta, nccl or measured)"));
  }
  return ModelFromProfile(r, name, style, profiles);
}

namespace {

// `ranks` is empty or 0 .. size - 1 of `mesh` (whose size may overflow).
bool DefaultRanks(const std::vector<int64_t>& ranks, const std::vector<int64_t>& mesh) {
  if (ranks.empty()) return true;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != static_cast<int64_t>(i)) return false;
  }
  uint64_t size = 1;
  for (int64_t s : mesh) {
    if (s <= 0) return false;
    size *= static_cast<uint64_t>(s);
    if (size > ranks.size()) return false;
  }
  return size == ranks.size();
}

}  // namespace

bool IsCrossMesh(const RequestFields& r) {
  const std::vector<int64_t>& dst_mesh = r.dst_mesh.empty() ? r.mesh : r.dst_mesh;
  return dst_mesh != r.mesh || !DefaultRanks(r.src_ranks, r.mesh) ||
         !DefaultRanks(r.dst_ranks, dst_mesh);
}

absl::Status OptionsFromFields(const RequestFields& r, FieldStyle style, ProfileCache* profiles,
                               PlanOptions* options) {
  std::optional<PlanMode> mode = ParsePlanMode(r.mode.empty() ? "auto" : r.mode);
  if (!mode) {
    return FieldError("mode", style,
                      absl::StrCat("unknown mode \"", Abbreviate(r.mode, 64),
                                   "\" (known: native, pytorch, auto)"));
  }
  options->mode = *mode;
  absl::StatusOr<Algorithm> algorithm = AlgorithmOrError(r.algorithm);
  if (!algorithm.ok()) return FieldError("algorithm", style, algorithm.status().message());
  options->algorithm = *algorithm;
  if (r.max_memory.has_value()) options->max_memory = *r.max_memory;
  options->max_expanded_states = r.max_states;
  options->max_search_edges = r.max_edges;
  options->coordinate = r.coordinate;
  // The mode's default model applies when the request names none (spec §13).
  RESHARD_ASSIGN_OR_RETURN(
      options->cost_model,
      CostModelFromFields(r, DefaultCostModelName(ResolvedMode(*options)), style, profiles));
  return absl::OkStatus();
}

absl::StatusOr<PlanRequest> RequestFromFields(const RequestFields& r, FieldStyle style,
                                              ProfileCache* profiles) {
  if (IsCrossMesh(r)) {
    const char* field = !r.dst_mesh.empty() && r.dst_mesh != r.mesh ? "dst_mesh"
                        : !r.src_ranks.empty()                      ? "src_ranks"
                                                                    : "dst_ranks";
    return FieldError(field, style,
                      "a cross-mesh move is planned by reshard plan and reshard batch and run "
                      "by reshard verify only (not yet here)");
  }
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(r.mesh);
  if (!mesh.ok()) return FieldError("mesh", style, mesh.status().message());
  absl::StatusOr<DType> dtype = ParseDType(r.dtype);
  if (!dtype.ok()) return FieldError("dtype", style, dtype.status().message());
  // The shape alone, checked on an all-Replicate spec so that its errors are
  // not blamed on --src.
  if (absl::StatusOr<DistSpec> s =
          DistSpec::Create(*mesh, DistState(mesh->ndim()), r.shape, *dtype);
      !s.ok()) {
    return FieldError("shape", style, s.status().message());
  }
  PlanOptions options;
  RESHARD_RETURN_IF_ERROR(OptionsFromFields(r, style, profiles, &options));
  absl::StatusOr<DistSpec> src = DistSpec::Parse(*mesh, r.src, r.shape, *dtype);
  if (!src.ok()) return FieldError("src", style, src.status().message());
  absl::StatusOr<DistSpec> dst = DistSpec::Parse(*mesh, r.dst, r.shape, *dtype);
  if (!dst.ok()) return FieldError("dst", style, dst.status().message());
  PlanRequest request{*std::move(src), *std::move(dst), std::move(options)};
  if (absl::Status s = ValidatePlanRequest(request); !s.ok()) return InFrontEndTerms(s, style);
  return request;
}

absl::StatusOr<Plan> PlanFromFields(const RequestFields& r, FieldStyle style,
                                    ProfileCache* profiles) {
  RESHARD_ASSIGN_OR_RETURN(PlanRequest request, RequestFromFields(r, style, profiles));
  absl::StatusOr<Plan> plan = PlanRedistribution(request);
  if (!plan.ok()) return InFrontEndTerms(plan.status(), style);
  return plan;
}

absl::Status RequestFromJson(const json& object, RequestFields* r) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("expected a JSON object, got ", Shown(object)));
  }
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (absl::string_view k : kKeys) known = known || key == k;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown key \"", Abbreviate(key, 64),
          "\" (known: ", absl::StrJoin(std::begin(kKeys), std::end(kKeys), ", "), ")"));
    }
  }
  for (const char* required : {"mesh", "shape", "src", "dst"}) {
    if (!object.contains(required)) {
      return absl::InvalidArgumentError(absl::StrCat("missing key \"", required, "\""));
    }
  }
  // An optional key given as null keeps its default.
  auto given = [&](const char* key) { return object.contains(key) && !object[key].is_null(); };
  if (absl::Status s = GetIntList(object["mesh"], "mesh", &r->mesh); !s.ok()) return s;
  if (absl::Status s = GetIntList(object["shape"], "shape", &r->shape); !s.ok()) return s;
  if (absl::Status s = GetString(object["src"], "src", &r->src); !s.ok()) return s;
  if (absl::Status s = GetString(object["dst"], "dst", &r->dst); !s.ok()) return s;
  const std::pair<const char*, std::string*> strings[] = {{"dtype", &r->dtype},
                                                          {"algorithm", &r->algorithm},
                                                          {"cost_model", &r->cost_model},
                                                          {"profile", &r->profile},
                                                          {"mode", &r->mode}};
  for (const auto& [key, field] : strings) {
    if (!given(key)) continue;
    if (absl::Status s = GetString(object[key], key, field); !s.ok()) return s;
  }
  if (given("devices_per_host")) {
    RESHARD_RETURN_IF_ERROR(
        GetInt(object["devices_per_host"], "devices_per_host", &r->devices_per_host));
  }
  if (given("coordinate")) {
    RESHARD_RETURN_IF_ERROR(GetIntList(object["coordinate"], "coordinate", &r->coordinate));
  }
  if (given("max_edges")) {
    RESHARD_RETURN_IF_ERROR(GetInt(object["max_edges"], "max_edges", &r->max_edges));
  }
  const std::pair<const char*, std::vector<int64_t>*> lists[] = {
      {"dst_mesh", &r->dst_mesh}, {"src_ranks", &r->src_ranks}, {"dst_ranks", &r->dst_ranks}};
  for (const auto& [key, field] : lists) {
    if (given(key)) RESHARD_RETURN_IF_ERROR(GetIntList(object[key], key, field));
  }
  if (given("max_memory")) {
    int64_t bytes = 0;
    RESHARD_RETURN_IF_ERROR(GetInt(object["max_memory"], "max_memory", &bytes));
    r->max_memory = bytes;
  }
  return absl::OkStatus();
}

namespace {

// One step's object; keys beyond the compat ones (mesh_dims, order, moves)
// only for native steps, so compat results keep their exact text.
void AppendStepJson(const TransformInfo& info, std::string* out) {
  const Step& step = info.step;
  absl::StrAppend(out, "{\"mesh_dim\":", step.mesh_dim(), ",\"src\":\"", step.src.ToString(),
                  "\",\"dst\":\"", step.dst.ToString(), "\",\"collective\":\"",
                  StepKindName(step.kind), "\",\"logical_shape\":[",
                  absl::StrJoin(info.logical_shape, ","), "],\"cost\":", FormatCost(info.cost));
  const bool moves = MovesSlices(step.kind);  // a permute or an exchange
  if (step.group.size() > 1 || moves) {
    absl::StrAppend(out, ",\"mesh_dims\":[", absl::StrJoin(step.group.ToVector(), ","), "]");
  }
  std::vector<std::string> items;
  if (moves) {
    for (const auto& [m, p] : MovesOf(step)) {
      items.push_back(absl::StrCat("{\"mesh_dim\":", m, ",\"dst\":\"", p.ToString(), "\"}"));
    }
    absl::StrAppend(out, ",\"moves\":[", absl::StrJoin(items, ","), "]");
  } else if (!step.entries.empty()) {
    for (int i = 0; i < step.entries.size(); ++i)
      items.push_back(absl::StrCat(step.entries.mesh_dim(i)));
    absl::StrAppend(out, ",\"order\":[", absl::StrJoin(items, ","), "]");
  }
  out->push_back('}');
}

}  // namespace

namespace {

// JSON has no inf or NaN: a plan whose cost overflowed is printed as an
// error. The planner refuses cost-model parameters that could overflow
// (spec §6.2); this is the last line of defence for models it cannot check.
absl::Status CheckFinite(const Plan& plan) {
  bool finite = std::isfinite(plan.cost);
  for (const TransformInfo& info : plan.steps) finite = finite && std::isfinite(info.cost);
  if (finite) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cost_model: the plan's cost is not finite (", FormatCost(plan.cost),
                   "); the cost model's parameters make a step's price overflow"));
}

}  // namespace

void AppendStepsJson(const Plan& plan, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendStepJson(plan.steps[i], out);
  }
  out->push_back(']');
}

void AppendResultJson(const json& id, const absl::StatusOr<Plan>& plan, std::string* out) {
  if (plan.ok()) {
    if (absl::Status finite = CheckFinite(*plan); !finite.ok()) {
      return AppendResultJson(id, finite, out);
    }
  }
  absl::StrAppend(out, "{\"id\":", id.dump(), ",\"ok\":", plan.ok() ? "true" : "false");
  if (!plan.ok()) {
    absl::StrAppend(out, ",\"error\":");
    AppendJsonString(plan.status().message(), out);
    if (std::optional<PlanLimit> limit = PlanLimitOf(plan.status())) {
      absl::StrAppend(out, ",\"limit\":");
      AppendJsonString(PlanLimitField(*limit), out);
    }
    out->push_back('}');
    return;
  }
  absl::StrAppend(out, ",\"algorithm\":\"", AlgorithmName(plan->algorithm),
                  "\",\"cost\":", FormatCost(plan->cost), ",\"trace\":");
  AppendJsonString(plan->Trace(), out);
  absl::StrAppend(out, ",\"steps\":");
  AppendStepsJson(*plan, out);
  absl::StrAppend(out, ",\"mode\":\"", PlanModeName(plan->mode),
                  "\",\"peak_bytes\":", plan->peak_bytes, ",\"cost_model\":");
  AppendJsonString(plan->cost_model, out);
  out->push_back('}');
}

void AppendCaseResult(const json& object, int64_t max_states, std::string* out,
                      ProfileCache* profiles, int64_t max_edges) {
  json id = object.is_object() && object.contains("id") ? object["id"] : json();
  if (absl::Status s = CheckId(id); !s.ok()) return AppendResultJson(json(), s, out);
  RequestFields request;
  request.max_states = max_states;
  request.max_edges = max_edges;
  if (absl::Status s = RequestFromJson(object, &request); !s.ok()) {
    return AppendResultJson(id, s, out);
  }
  if (IsCrossMesh(request)) {
    return AppendCrossMeshResultJson(
        id, CrossMeshPlanFromFields(request, FieldStyle::kJsonKey, profiles), out);
  }
  AppendResultJson(id, PlanFromFields(request, FieldStyle::kJsonKey, profiles), out);
}

void AppendCaseResult(absl::string_view line, int64_t max_states, std::string* out,
                      ProfileCache* profiles, int64_t max_edges) {
  if (JsonDepth(line) > kMaxJsonDepth) {
    return AppendResultJson(json(),
                            absl::InvalidArgumentError(
                                absl::StrCat("malformed JSON: nested deeper than ", kMaxJsonDepth)),
                            out);
  }
  json object;
  try {
    object = json::parse(line.begin(), line.end());
  } catch (const json::exception& e) {
    // The library's message says where and what ("parse error at line 1, column 5: ...",
    // "number overflow parsing '1e400'").
    return AppendResultJson(json(),
                            absl::InvalidArgumentError(absl::StrCat(
                                "malformed JSON: ", Abbreviate(e.what(), kMaxJsonErrorBytes))),
                            out);
  }
  AppendCaseResult(object, max_states, out, profiles, max_edges);
}

}  // namespace reshard
