#include "planner/layout/dist_spec.h"

#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "planner/layout/chunk.h"
#include "planner/layout/notation.h"

namespace reshard {
namespace {

// "2^60", or "2^60.6" when the byte count is not a power of two.
std::string PowerOfTwo(absl::Span<const int64_t> shape, int item_size) {
  double lg = std::log2(static_cast<double>(item_size));
  for (int64_t s : shape) lg += std::log2(static_cast<double>(s));
  const double rounded = std::round(lg);
  if (std::fabs(lg - rounded) < 1e-9) return absl::StrFormat("2^%d", static_cast<int64_t>(rounded));
  return absl::StrFormat("2^%.1f", lg);
}

absl::Status ValidateShape(absl::Span<const int64_t> shape, DType dtype) {
  if (shape.empty()) {
    return absl::InvalidArgumentError("shape: needs at least one dim (e.g. [1024, 1024])");
  }
  if (static_cast<int>(shape.size()) > kMaxTensorDims) {
    return absl::InvalidArgumentError(absl::StrFormat("shape: %d dims, the supported maximum is %d",
                                                      shape.size(), kMaxTensorDims));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shape: dim %d has size %d; sizes must be >= 1", d, shape[d]));
    }
  }
  // bytes > max  <=>  partial product > floor(max / next factor) at some step;
  // checking before each multiplication keeps every product <= 2^53.
  int64_t bytes = ItemSize(dtype);
  for (int64_t s : shape) {
    if (bytes > kMaxTensorBytes / s) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape: %s bytes exceeds the supported maximum of 2^53 bytes ([%s] of %s)",
          PowerOfTwo(shape, ItemSize(dtype)), absl::StrJoin(shape, ", "), DTypeName(dtype)));
    }
    bytes *= s;
  }
  return absl::OkStatus();
}

absl::Status ValidateState(const DeviceMesh& mesh, const DistState& state, int tensor_ndim) {
  if (state.ndim() != mesh.ndim()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("state %s has %d mesh dims but the mesh (%s) has %d", state.ToString(),
                        state.ndim(), mesh.ToString(), mesh.ndim()));
  }
  unsigned ops = 0;
  for (int m = 0; m < state.ndim(); ++m) {
    Placement p = state.placement(m);
    if (p.is_shard() && p.dim() >= tensor_ndim) {
      return absl::InvalidArgumentError(
          absl::StrFormat("state %s: mesh dim %d holds %s but the tensor has %d dims",
                          state.ToString(), m, p.ToString(), tensor_ndim));
    }
    if (p.is_partial()) ops |= 1u << static_cast<int>(p.op());
  }
  if (!PartialOpsCompatible(ops)) {
    std::vector<std::string> names;
    for (int i = 0; i < kNumReduceOps; ++i) {
      if (ops & (1u << i)) names.emplace_back(ReduceOpName(static_cast<ReduceOp>(i)));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("state %s mixes Partial ops %s; only sum and avg may be mixed",
                        state.ToString(), absl::StrJoin(names, " and ")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DistSpec> DistSpec::Create(DeviceMesh mesh, DistState state,
                                          std::vector<int64_t> global_shape, DType dtype) {
  RESHARD_RETURN_IF_ERROR(ValidateShape(global_shape, dtype));
  RESHARD_RETURN_IF_ERROR(ValidateState(mesh, state, static_cast<int>(global_shape.size())));
  return DistSpec(std::move(mesh), state, std::move(global_shape), dtype);
}

absl::StatusOr<DistSpec> DistSpec::Parse(DeviceMesh mesh, absl::string_view notation,
                                         std::vector<int64_t> global_shape, DType dtype) {
  // The shape first: the parser needs a valid tensor rank.
  RESHARD_RETURN_IF_ERROR(ValidateShape(global_shape, dtype));
  RESHARD_ASSIGN_OR_RETURN(ParsedState parsed,
                           ParseDistState(notation, mesh, static_cast<int>(global_shape.size())));
  RESHARD_ASSIGN_OR_RETURN(DistSpec spec,
                           Create(std::move(mesh), parsed.state, std::move(global_shape), dtype));
  spec.strided_input_ = parsed.strided;
  return spec;
}

std::vector<int64_t> DistSpec::LocalShape(absl::Span<const int64_t> coordinate) const {
  return reshard::LocalShape(mesh_, state_, global_shape_, coordinate);
}

}  // namespace reshard
