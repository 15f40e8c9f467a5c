#include "collectives/nccl/nccl_layout.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/communicator.h"

namespace reshard {

absl::StatusOr<NcclSplit> NcclSplitFor(const DeviceMesh& mesh, MeshDimSet dims, int64_t rank) {
  if (rank < 0 || rank >= mesh.num_ranks()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("nccl: rank %d is not in mesh %s (ranks 0..%d)", rank, mesh.ToString(),
                        mesh.num_ranks() - 1));
  }
  if (dims.empty() || (dims.bits() >> mesh.ndim()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("nccl: mesh dims %s are not a non-empty set of the %d dims of mesh %s",
                        dims.ToString(), mesh.ndim(), mesh.ToString()));
  }
  // DeviceMesh caps the rank count at 2^24, so colors and keys fit NCCL's int.
  const std::vector<int64_t> coordinate = mesh.Coordinate(rank);
  int64_t color = 0;
  for (int dim = 0; dim < mesh.ndim(); ++dim) {
    if (!dims.Contains(dim)) color = color * mesh.size(dim) + coordinate[dim];
  }
  NcclSplit split;
  split.color = static_cast<int>(color);
  split.key = static_cast<int>(mesh.IndexInGroup(dims, rank));
  split.size = static_cast<int>(mesh.GroupSize(dims));
  return split;
}

NcclBuffer NcclMoveBuffer(DType dtype, int64_t count) {
  switch (dtype) {
    case DType::kF64:
      return {NcclType::kFloat64, count};
    case DType::kF32:
      return {NcclType::kFloat32, count};
    case DType::kF16:
      return {NcclType::kFloat16, count};
    case DType::kBF16:
      return {NcclType::kBfloat16, count};
    case DType::kI64:
      return {NcclType::kInt64, count};
    case DType::kI32:
      return {NcclType::kInt32, count};
    case DType::kI8:
      return {NcclType::kInt8, count};
    case DType::kU8:
      return {NcclType::kUint8, count};
    case DType::kI16:
    case DType::kBool:
      break;
  }
  // Moving bytes needs no arithmetic, so any dtype travels as bytes.
  return {NcclType::kUint8, count * ItemSize(dtype)};
}

absl::StatusOr<NcclType> NcclReduceType(DType dtype, absl::string_view collective,
                                        MeshDimSet group) {
  switch (dtype) {
    case DType::kI16:
      return absl::UnimplementedError(absl::StrFormat(
          "%s on %s: NCCL has no 16-bit integer type, so i16 cannot be reduced on the nccl "
          "backend (use i32, or the gloo backend)",
          collective, DescribeGroup(group)));
    case DType::kBool:
      return absl::UnimplementedError(absl::StrFormat(
          "%s on %s: reductions on bool are not supported", collective, DescribeGroup(group)));
    default:
      return NcclMoveBuffer(dtype, 0).type;
  }
}

NcclOp NcclReduceOpFor(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return NcclOp::kSum;
    case ReduceOp::kAvg:
      return NcclOp::kAvg;
    case ReduceOp::kMax:
      return NcclOp::kMax;
    case ReduceOp::kMin:
      return NcclOp::kMin;
    case ReduceOp::kProd:
      return NcclOp::kProd;
  }
  return NcclOp::kSum;  // unreachable: the switch covers every ReduceOp
}

namespace {

absl::string_view NcclResultName(int result) {
  switch (static_cast<NcclResult>(result)) {
    case NcclResult::kSuccess:
      return "ncclSuccess";
    case NcclResult::kUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case NcclResult::kSystemError:
      return "ncclSystemError";
    case NcclResult::kInternalError:
      return "ncclInternalError";
    case NcclResult::kInvalidArgument:
      return "ncclInvalidArgument";
    case NcclResult::kInvalidUsage:
      return "ncclInvalidUsage";
    case NcclResult::kRemoteError:
      return "ncclRemoteError";
    case NcclResult::kInProgress:
      return "ncclInProgress";
  }
  return "unknown ncclResult_t";
}

}  // namespace

absl::Status NcclStatus(int result, absl::string_view error_string, absl::string_view last_error,
                        absl::string_view context) {
  if (result == static_cast<int>(NcclResult::kSuccess)) return absl::OkStatus();
  std::string message =
      absl::StrFormat("%s: NCCL error %s (%s)", context, NcclResultName(result), error_string);
  if (!last_error.empty()) absl::StrAppend(&message, ": ", last_error);
  switch (static_cast<NcclResult>(result)) {
    case NcclResult::kInvalidArgument:
      return absl::InvalidArgumentError(message);
    case NcclResult::kInvalidUsage:
      return absl::FailedPreconditionError(message);
    case NcclResult::kSystemError:
    case NcclResult::kRemoteError:
    case NcclResult::kInProgress:  // only for non-blocking communicators, which we never make
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CudaStatus(int error, absl::string_view name, absl::string_view error_string,
                        absl::string_view context) {
  if (error == static_cast<int>(CudaError::kSuccess)) return absl::OkStatus();
  const std::string message =
      absl::StrFormat("%s: CUDA error %s (%s)", context, name, error_string);
  switch (static_cast<CudaError>(error)) {
    case CudaError::kMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case CudaError::kInvalidValue:
      return absl::InvalidArgumentError(message);
    case CudaError::kInitializationError:
    case CudaError::kInsufficientDriver:
    case CudaError::kNoDevice:
    case CudaError::kInvalidDevice:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace reshard
