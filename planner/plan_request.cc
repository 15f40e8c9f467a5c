#include "planner/plan_request.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/costs/cost_model_registry.h"

namespace reshard {
namespace {

absl::Status CheckSameTensor(const DistSpec& src, const DistSpec& dst) {
  if (src.mesh() != dst.mesh()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dst: mesh ", dst.mesh().ToString(), " differs from `src`'s mesh ", src.mesh().ToString()));
  }
  if (src.global_shape() != dst.global_shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dst: shape [", absl::StrJoin(dst.global_shape(), ","),
                     "] differs from `src`'s [", absl::StrJoin(src.global_shape(), ","), "]"));
  }
  if (src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("dst: dtype ", DTypeName(dst.dtype()),
                                                   " differs from `src`'s dtype ",
                                                   DTypeName(src.dtype())));
  }
  return absl::OkStatus();
}

absl::Status CheckLimits(const PlanOptions& options, const DeviceMesh& mesh) {
  if (options.max_expanded_states < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_expanded_states: must be at least 1, got ", options.max_expanded_states));
  }
  if (options.max_search_edges < 1 || options.max_search_edges > kMaxSearchEdgesLimit) {
    return absl::InvalidArgumentError(absl::StrCat("max_search_edges: must be 1 to ",
                                                   kMaxSearchEdgesLimit, ", got ",
                                                   options.max_search_edges));
  }
  if (options.max_memory < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_memory: must be a positive number of bytes, got ", options.max_memory));
  }
  // ValidateCoordinate's messages start with "coordinate: ".
  if (!options.coordinate.empty()) return mesh.ValidateCoordinate(options.coordinate);
  return absl::OkStatus();
}

// Spec §13: native mode plans with a model that prices native steps, on its
// graph only.
absl::Status CheckMode(const PlanOptions& options) {
  if (ResolvedMode(options) != PlanMode::kNative) return absl::OkStatus();
  const std::shared_ptr<const CostModel>& model = ResolvedCostModel(options);
  if (model == nullptr) return absl::InternalError("no native cost model is built in");
  if (!model->prices_native_steps()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mode: native planning needs a cost model that prices native steps; `cost_model` \"",
        model->name(), "\" prices compat steps only (drop `cost_model`, or give `mode` ",
        "pytorch)"));
  }
  if (options.algorithm == Algorithm::kGreedy) {
    return absl::InvalidArgumentError(
        "algorithm: greedy is a pytorch-mode planner; native mode always searches its graph "
        "(give `mode` pytorch, or leave `mode` out, for greedy plans)");
  }
  return absl::OkStatus();
}

}  // namespace

PlanMode ResolvedMode(const PlanOptions& options) {
  if (options.mode != PlanMode::kAuto) return options.mode;
  const bool compat_model =
      options.cost_model != nullptr && !options.cost_model->prices_native_steps();
  return compat_model || options.algorithm == Algorithm::kGreedy ? PlanMode::kPyTorch
                                                                 : PlanMode::kNative;
}

const std::shared_ptr<const CostModel>& ResolvedCostModel(const PlanOptions& options) {
  if (options.cost_model != nullptr) return options.cost_model;
  static const auto* const native = new std::shared_ptr<const CostModel>(DefaultNativeCostModel());
  static const auto* const pytorch = new std::shared_ptr<const CostModel>(DefaultCostModel());
  return ResolvedMode(options) == PlanMode::kNative ? *native : *pytorch;
}

absl::string_view DefaultCostModelName(PlanMode resolved_mode) {
  return resolved_mode == PlanMode::kNative ? DefaultNativeCostModel()->name()
                                            : DefaultCostModel()->name();
}

absl::Status ValidatePlanOptions(const PlanOptions& options, const DeviceMesh& mesh) {
  RESHARD_RETURN_IF_ERROR(CheckLimits(options, mesh));
  return CheckMode(options);
}

absl::Status ValidatePlanRequest(const PlanRequest& request) {
  RESHARD_RETURN_IF_ERROR(CheckSameTensor(request.src, request.dst));
  return ValidatePlanOptions(request.options, request.src.mesh());
}

}  // namespace reshard
