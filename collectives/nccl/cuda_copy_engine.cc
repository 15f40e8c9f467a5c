#include "collectives/nccl/cuda_copy_engine.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "collectives/nccl/cuda_copy_plan.h"
#include "collectives/nccl/nccl_layout.h"
#include "collectives/nccl/strided_copy.h"

namespace reshard {

// CudaStatus (nccl_layout.h) mirrors these values.
static_assert(static_cast<int>(CudaError::kSuccess) == cudaSuccess);
static_assert(static_cast<int>(CudaError::kInvalidValue) == cudaErrorInvalidValue);
static_assert(static_cast<int>(CudaError::kMemoryAllocation) == cudaErrorMemoryAllocation);
static_assert(static_cast<int>(CudaError::kInitializationError) == cudaErrorInitializationError);
static_assert(static_cast<int>(CudaError::kInsufficientDriver) == cudaErrorInsufficientDriver);
static_assert(static_cast<int>(CudaError::kNoDevice) == cudaErrorNoDevice);
static_assert(static_cast<int>(CudaError::kInvalidDevice) == cudaErrorInvalidDevice);

namespace {

absl::Status Check(cudaError_t error, absl::string_view context) {
  if (error == cudaSuccess) return absl::OkStatus();
  return CudaStatus(static_cast<int>(error), cudaGetErrorName(error), cudaGetErrorString(error),
                    context);
}

// The pool CudaCopyEngineOptions asks for, on `device`.
absl::StatusOr<std::shared_ptr<CUmemPoolHandle_st>> PoolFor(int device, bool own_pool) {
  cudaMemPool_t pool = nullptr;
  if (!own_pool) {
    RESHARD_RETURN_IF_ERROR(
        Check(cudaDeviceGetMemPool(&pool, device), "cuda copy engine: cudaDeviceGetMemPool"));
    return std::shared_ptr<CUmemPoolHandle_st>(pool, [](cudaMemPool_t) {});
  }
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  RESHARD_RETURN_IF_ERROR(
      Check(cudaMemPoolCreate(&pool, &props), "cuda copy engine: cudaMemPoolCreate"));
  // Destroying a pool with allocations outstanding defers its release until
  // they are freed, so tensors may outlive the engine.
  std::shared_ptr<CUmemPoolHandle_st> owned(pool, [](cudaMemPool_t p) { cudaMemPoolDestroy(p); });
  uint64_t keep_all = UINT64_MAX;
  RESHARD_RETURN_IF_ERROR(
      Check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
            "cuda copy engine: cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)"));
  return owned;
}

}  // namespace

absl::StatusOr<CudaCopyEngine> CudaCopyEngine::Create(cudaStream_t stream,
                                                      const CudaCopyEngineOptions& options) {
  int device = 0;
  RESHARD_RETURN_IF_ERROR(Check(cudaGetDevice(&device), "cuda copy engine: cudaGetDevice"));
  int max_pitch = 0;
  RESHARD_RETURN_IF_ERROR(Check(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device),
                                "cuda copy engine: cudaDeviceGetAttribute(cudaDevAttrMaxPitch)"));
  RESHARD_ASSIGN_OR_RETURN(std::shared_ptr<CUmemPoolHandle_st> pool,
                           PoolFor(device, options.own_pool));
  // A pitch limit below one byte would be a driver bug; stay correct anyway
  // (row-by-row copies work with any pitch).
  return CudaCopyEngine(stream, max_pitch > 0 ? max_pitch : 1, std::move(pool));
}

absl::StatusOr<LocalTensor> CudaCopyEngine::Allocate(DType dtype, std::vector<int64_t> shape) {
  const int64_t bytes = NumElements(shape) * ItemSize(dtype);
  void* data = nullptr;
  if (bytes != 0) {
    if (absl::Status s =
            Check(cudaMallocFromPoolAsync(&data, static_cast<size_t>(bytes), pool_.get(), stream_),
                  absl::StrFormat("cuda allocation of %d bytes", bytes));
        !s.ok()) {
      return s;
    }
  }
  cudaStream_t stream = stream_;
  // Ordered after every use of the buffer already enqueued on the stream; a
  // deleter cannot report an error, and a failed free only leaks.
  auto deleter = [stream](void* p) {
    if (p != nullptr) (void)cudaFreeAsync(p, stream);
  };
  return LocalTensor::Adopt(data, std::move(deleter), dtype, std::move(shape), MemorySpace::kCuda);
}

absl::Status CudaCopyEngine::Copy(const Copy2D& copy, void* dst, const void* src) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (const CudaCopyCall& c : PlanCudaCopy(copy, max_pitch_)) {
    cudaError_t error;
    if (c.kind == CudaCopyCall::Kind::k1D) {
      error = cudaMemcpyAsync(d + c.dst_offset, s + c.src_offset, static_cast<size_t>(c.width),
                              cudaMemcpyDeviceToDevice, stream_);
    } else {
      // Mostly on the cores: the copy engines' 2-D copies are over 2x slower
      // on rows of KBs, up to 10x on rows of a few bytes (strided_copy.h).
      error = CopyStridedRows(d + c.dst_offset, static_cast<size_t>(c.dst_pitch), s + c.src_offset,
                              static_cast<size_t>(c.src_pitch), static_cast<size_t>(c.width),
                              static_cast<size_t>(c.height), stream_);
    }
    if (absl::Status st = Check(
            error, absl::StrFormat("cuda copy of %d rows of %d bytes", copy.rows, copy.row_bytes));
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status CudaCopyEngine::Fill(const Fill2D& fill, void* dst) {
  char* d = static_cast<char*>(dst);
  for (const CudaFillCall& c : PlanCudaFill(fill, max_pitch_)) {
    cudaError_t error;
    if (c.kind == CudaFillCall::Kind::k1D) {
      error = cudaMemsetAsync(d + c.offset, 0, static_cast<size_t>(c.width), stream_);
    } else {
      error =
          cudaMemset2DAsync(d + c.offset, static_cast<size_t>(c.pitch), 0,
                            static_cast<size_t>(c.width), static_cast<size_t>(c.height), stream_);
    }
    if (absl::Status st = Check(error, absl::StrFormat("cuda zero fill of %d rows of %d bytes",
                                                       fill.rows, fill.row_bytes));
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard
