// The GPU-free decisions of the NCCL backend (nccl_communicator.h): how a
// rank's mesh-dim groups map onto ncclCommSplit, which NCCL type and op carry
// each dtype and ReduceOp, and how NCCL and CUDA error codes become
// absl::Status. They live apart from the CUDA code so that the default build
// (no CUDA toolkit) compiles and tests them.
//
// The enums mirror nccl.h and driver_types.h by value; nccl_communicator.cc
// and cuda_copy_engine.cc static_assert that they agree with the real headers.
#ifndef RESHARD_COLLECTIVES_NCCL_NCCL_LAYOUT_H_
#define RESHARD_COLLECTIVES_NCCL_NCCL_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/dtype.h"
#include "planner/layout/placement.h"

namespace reshard {

// One rank's ncclCommSplit arguments for the group of a set of mesh dims
// (communicator.h: the flattened group, mesh.GroupOf(dims, rank)).
//   color: the index of the rank's group among the groups of that set: the
//          row-major rank of its coordinates outside the set, from 0 to
//          num_ranks / size - 1; the same for exactly the group's members.
//   key:   mesh.IndexInGroup(dims, rank), so the rank in the split
//          communicator is the index in the group (the chunk order of
//          communicator.h).
//   size:  mesh.GroupSize(dims); a group of one is never split (it never
//          communicates, spec §11), but every rank skips the same sets.
struct NcclSplit {
  int color = 0;
  int key = 0;
  int size = 1;
};

// InvalidArgument when `rank` is not in the mesh or `dims` is empty or names
// a mesh dim the mesh lacks.
absl::StatusOr<NcclSplit> NcclSplitFor(const DeviceMesh& mesh, MeshDimSet dims, int64_t rank);

// ncclDataType_t values.
enum class NcclType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};

// ncclRedOp_t values.
enum class NcclOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

// `count` elements as an NCCL buffer description.
struct NcclBuffer {
  NcclType type = NcclType::kUint8;
  int64_t count = 0;
};

// For the collectives that only move bytes (all_gather, all_to_all): the
// dtype's own NCCL type, or raw bytes (kUint8, count * itemsize) for the
// dtypes NCCL lacks (i16, bool). Never fails.
NcclBuffer NcclMoveBuffer(DType dtype, int64_t count);

// For the reductions (reduce_scatter, all_reduce): the dtype's own NCCL type.
// NCCL has no 16-bit integer and reductions on bool are undefined, so i16 and
// bool are Unimplemented, with a message naming `collective` and the group.
absl::StatusOr<NcclType> NcclReduceType(DType dtype, absl::string_view collective,
                                        MeshDimSet group);

// Every ReduceOp is native; avg is ncclAvg (NCCL >= 2.10): floating types
// multiply by 1/n before summing, integers sum then divide rounding toward
// zero, like C++ integer division.
NcclOp NcclReduceOpFor(ReduceOp op);

// ncclResult_t values.
enum class NcclResult : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

// An NCCL result as a Status: Ok for success, otherwise a message
//   "<context>: NCCL error <result> (<error_string>)[: <last_error>]"
// with a code a caller can act on: InvalidArgument (bad argument),
// FailedPrecondition (invalid usage, e.g. mismatched calls), Unavailable (a
// system/network error or a remote peer's failure), Internal (anything else).
// `context` names the call, e.g. "all_gather on mesh dim 1 (ncclAllGather)";
// `error_string` is ncclGetErrorString's and `last_error` ncclGetLastError's
// (may be empty).
absl::Status NcclStatus(int result, absl::string_view error_string, absl::string_view last_error,
                        absl::string_view context);

// cudaError_t values that get their own status code.
enum class CudaError : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kMemoryAllocation = 2,
  kInitializationError = 3,
  kInsufficientDriver = 35,
  kNoDevice = 100,
  kInvalidDevice = 101,
};

// A CUDA runtime error as a Status: Ok for success, otherwise
//   "<context>: CUDA error <name> (<error_string>)"
// with ResourceExhausted for out of memory, InvalidArgument for an invalid
// value, FailedPrecondition when there is no usable device or driver, and
// Internal otherwise. `name`/`error_string` are cudaGetErrorName's and
// cudaGetErrorString's.
absl::Status CudaStatus(int error, absl::string_view name, absl::string_view error_string,
                        absl::string_view context);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_NCCL_LAYOUT_H_
