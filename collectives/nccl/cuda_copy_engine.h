// CudaCopyEngine: the CopyEngine (local_tensor.h) for CUDA device memory.
// Every copy, fill, allocation and free is enqueued on one caller-provided
// stream, in order with the NCCL collectives on that stream, and never waits
// on the host (the calls come from PlanCudaCopy/PlanCudaFill,
// cuda_copy_plan.h).
//
// Built only with --config=cuda (collectives/BUILD.bazel). Compiled and
// linked here, never run on a GPU yet.
#ifndef RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_
#define RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dtype.h"

// As in CUDA's driver_types.h, so that this header needs no CUDA include.
typedef struct CUstream_st* cudaStream_t;

namespace reshard {

class CudaCopyEngine final : public CopyEngine {
 public:
  // An engine on `stream` (a stream of the current device; null is the
  // legacy default stream). Reads the device's maximum copy pitch, so it
  // fails (FailedPrecondition) without a usable device.
  static absl::StatusOr<CudaCopyEngine> Create(cudaStream_t stream);

  MemorySpace space() const override { return MemorySpace::kCuda; }
  cudaStream_t stream() const { return stream_; }

  // cudaMallocAsync on the stream; the tensor's deleter is cudaFreeAsync on
  // the same stream, so the stream must outlive every tensor allocated here.
  absl::StatusOr<LocalTensor> Allocate(DType dtype, std::vector<int64_t> shape) override;
  // Device-to-device cudaMemcpyAsync/cudaMemcpy2DAsync.
  absl::Status Copy(const Copy2D& copy, void* dst, const void* src) override;
  // cudaMemsetAsync/cudaMemset2DAsync with 0.
  absl::Status Fill(const Fill2D& fill, void* dst) override;

 private:
  CudaCopyEngine(cudaStream_t stream, int64_t max_pitch) : stream_(stream), max_pitch_(max_pitch) {}

  cudaStream_t stream_;
  int64_t max_pitch_;
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_
