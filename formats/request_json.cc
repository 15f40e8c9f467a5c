#include "formats/request_json.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "formats/nccl_profile_json.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/costs/nccl/nccl_cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/layout/dtype.h"
#include "planner/planner.h"

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

}  // namespace

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
    // An empty string is not a name; omitting the key (or null) selects the default.
    if (field->empty()) {
      return FieldError(key, FieldStyle::kJsonKey,
                        "empty; omit the key or give null for the default");
    }
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

}  // namespace reshard
