// reshard._reshard: the C++ planner for Python. The Pythonic layer
// (python/lib/reshard/__init__.py) wraps these functions; each takes a
// request as the dict of a `reshard batch` line (formats/request_json.h) so that
// Python and the CLI read, validate and answer requests the same way.
//
// Errors cross as Python exceptions, the one place reshard throws:
// InvalidArgument -> ValueError (the message names the field), NotFound and
// ResourceExhausted -> NoPlanError (the reason), anything else RuntimeError.
// The GIL is released while a request is validated and planned.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "formats/cross_mesh_json.h"
#include "formats/request_fields.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "mesh/device_mesh.h"
#include "planner/cost_matrix.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dist_spec.h"
#include "planner/plan_cache.h"
#include "planner/planner.h"
#include "python/py_json.h"

namespace reshard {
namespace {

namespace py = pybind11;
using json = nlohmann::json;

// One cache for the process: thread-safe (plan_cache.h), never destroyed so
// that interpreter shutdown cannot race a planning thread.
PlanCache& Cache() {
  static PlanCache* cache = new PlanCache(1 << 16);
  return *cache;
}

py::object& NoPlanError() {
  // Leaked: destroying it after the interpreter is gone would crash at exit.
  static py::object* type = new py::object();
  return *type;
}

[[noreturn]] void Raise(const absl::Status& status) {
  PyObject* type = PyExc_RuntimeError;
  if (absl::IsInvalidArgument(status)) type = PyExc_ValueError;
  if (absl::IsNotFound(status) || absl::IsResourceExhausted(status)) {
    type = NoPlanError().ptr();
  }
  PyErr_SetString(type, std::string(status.message()).c_str());
  throw py::error_already_set();
}

template <typename T>
T ValueOrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

// The keyword arguments as a batch line's object; errors name the key.
json ObjectFrom(const py::dict& request) {
  json object = json::object();
  for (auto [key, value] : request) {
    const std::string name = py::str(key).cast<std::string>();
    object[name] = ValueOrRaise(JsonFromPython(value, name));
  }
  return object;
}

// The batch-line object's fields (with the GIL). Besides the batch keys,
// "max_states" (the batch command's --max-states) bounds the graph search.
RequestFields FieldsOf(json object) {
  RequestFields fields;
  if (object.contains("max_states")) {
    const json& n = object["max_states"];
    if (!n.is_number_integer()) {
      Raise(absl::InvalidArgumentError(
          absl::StrCat("max_states: expected an integer, got ", n.dump())));
    }
    fields.max_states = n.get<int64_t>();
    object.erase("max_states");
  }
  if (absl::Status s = RequestFromJson(object, &fields); !s.ok()) Raise(s);
  return fields;
}

// Validated without the GIL; a cross-mesh request is refused here, naming
// its field (PlanAcross plans those).
PlanRequest Validate(const RequestFields& fields) {
  absl::StatusOr<PlanRequest> valid;
  {
    py::gil_scoped_release release;
    valid = RequestFromFields(fields, FieldStyle::kJsonKey);
  }
  return ValueOrRaise(std::move(valid));
}

// A cross-mesh move (spec §14), planned without the GIL.
CrossMeshPlan PlanAcross(const RequestFields& fields) {
  absl::StatusOr<CrossMeshPlan> plan;
  {
    py::gil_scoped_release release;
    plan = CrossMeshPlanFromFields(fields, FieldStyle::kJsonKey);
  }
  return ValueOrRaise(std::move(plan));
}

// The planner's errors name fields as the batch command prints them.
std::shared_ptr<const Plan> PlanOf(const PlanRequest& valid) {
  absl::StatusOr<std::shared_ptr<const Plan>> plan;
  {
    py::gil_scoped_release release;
    plan = Cache().GetOrPlan(valid);
  }
  if (!plan.ok()) Raise(InFrontEndTerms(plan.status(), FieldStyle::kJsonKey));
  return *std::move(plan);
}

// (the batch result object as JSON text, the states the data goes through;
// none for a cross-mesh move, whose steps run on two meshes).
std::tuple<std::string, std::vector<std::string>> PlanRequestDict(const py::dict& request) {
  const json object = ObjectFrom(request);
  const json id = object.contains("id") ? object["id"] : json();
  const RequestFields fields = FieldsOf(object);
  std::string text;
  if (IsCrossMesh(fields)) {
    AppendCrossMeshResultJson(id, PlanAcross(fields), &text);
    return {std::move(text), {}};
  }
  std::shared_ptr<const Plan> plan = PlanOf(Validate(fields));
  AppendResultJson(id, *plan, &text);
  std::vector<std::string> states;
  for (const DistState& s : plan->states) states.push_back(s.ToString());
  return {std::move(text), std::move(states)};
}

// A cross-mesh move's cost is its CrossMeshPlan's, which a model that prices
// no exchange (the pytorch models) leaves unset: an error naming cost_model.
double CostOf(const py::dict& request) {
  const RequestFields fields = FieldsOf(ObjectFrom(request));
  if (!IsCrossMesh(fields)) return PlanOf(Validate(fields))->cost;
  const CrossMeshPlan plan = PlanAcross(fields);
  if (!plan.cost) {
    Raise(absl::InvalidArgumentError(
        "cost_model: this model prices no cross-mesh crossing (spec §14); use a native mode "
        "model: nccl (the default), alpha-beta or measured"));
  }
  return *plan.cost;
}

// Graph-plan costs between every pair of `layouts` (planner/cost_matrix.h);
// the request names one of them as src and dst for validation.
std::vector<std::vector<std::optional<double>>> CostMatrixOf(
    const py::dict& request, const std::vector<std::string>& layouts) {
  const PlanRequest valid = Validate(FieldsOf(ObjectFrom(request)));
  const DistSpec& any = valid.src;
  std::vector<DistState> states;
  for (size_t i = 0; i < layouts.size(); ++i) {
    absl::StatusOr<DistSpec> spec =
        DistSpec::Parse(any.mesh(), layouts[i], any.global_shape(), any.dtype());
    if (!spec.ok()) {
      Raise(
          absl::InvalidArgumentError(absl::StrCat("layouts[", i, "]: ", spec.status().message())));
    }
    states.push_back(spec->state());
  }
  CostMatrixOptions options;
  options.mode = ResolvedMode(valid.options);
  options.cost_model = ResolvedCostModel(valid.options);
  options.max_expanded_states = valid.options.max_expanded_states;
  absl::StatusOr<CostMatrixResult> matrix;
  {
    py::gil_scoped_release release;
    matrix = CostMatrix(any.mesh(), any.global_shape(), any.dtype(), states, states, options);
  }
  if (!matrix.ok()) Raise(InFrontEndTerms(matrix.status(), FieldStyle::kJsonKey));
  return *std::move(matrix);
}

// The (offset, size) of each tensor dim that the rank at `coordinate` holds
// in `state` (spec §2: nested torch.chunk in shard order; planner/chunk.h).
std::vector<std::pair<int64_t, int64_t>> LocalBlock(const std::vector<int64_t>& mesh_sizes,
                                                    const std::vector<int64_t>& shape,
                                                    const std::string& state,
                                                    const std::vector<int64_t>& coordinate) {
  DeviceMesh mesh = ValueOrRaise(DeviceMesh::Create(mesh_sizes));
  if (absl::Status s = mesh.ValidateCoordinate(coordinate); !s.ok()) Raise(s);
  DistSpec spec = ValueOrRaise(DistSpec::Parse(mesh, state, shape, DType::kF32));
  std::vector<std::pair<int64_t, int64_t>> block;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    std::vector<int64_t> sizes, indices;
    for (int m : spec.state().OrderOf(d)) {
      sizes.push_back(mesh.size(m));
      indices.push_back(coordinate[m]);
    }
    Slice slice = NestedChunk(shape[d], sizes, indices);
    block.emplace_back(slice.offset, slice.size);
  }
  return block;
}

py::dict CacheStats() {
  PlanCache::Stats s = Cache().stats();
  py::dict stats;
  stats["hits"] = s.hits;
  stats["misses"] = s.misses;
  stats["size"] = s.size;
  return stats;
}

}  // namespace
}  // namespace reshard

PYBIND11_MODULE(_reshard, m) {
  namespace py = pybind11;
  m.doc() = "reshard's C++ planner; use the `reshard` package, which wraps it.";
  static py::exception<std::runtime_error> no_plan(m, "NoPlanError", PyExc_RuntimeError);
  reshard::NoPlanError() = no_plan;
  m.def("plan", &reshard::PlanRequestDict, py::arg("request"),
        "(batch result JSON text, state texts) for a dict of batch-line keys.");
  m.def("cost", &reshard::CostOf, py::arg("request"), "The plan's cost, through the plan cache.");
  m.def("cost_matrix", &reshard::CostMatrixOf, py::arg("request"), py::arg("layouts"),
        "Graph-plan costs between every pair of layouts (None: no plan).");
  m.def("local_block", &reshard::LocalBlock, py::arg("mesh"), py::arg("shape"), py::arg("state"),
        py::arg("coordinate"), "[(offset, size)] per tensor dim of a rank's shard.");
  m.def("cache_stats", &reshard::CacheStats, "The C++ plan cache's hits, misses and size.");
}
