// CudaCopyEngine: the CopyEngine (local_tensor.h) for CUDA device memory.
// Every copy, fill, allocation and free is enqueued on one caller-provided
// stream, in order with the NCCL collectives on that stream, and never waits
// on the host (the calls come from PlanCudaCopy/PlanCudaFill,
// cuda_copy_plan.h).
//
// Built only with --config=cuda (collectives/BUILD.bazel); tests/gpu runs it
// on a GPU (scripts/gpu-test).
#ifndef RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_
#define RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dtype.h"

// As in CUDA's driver_types.h, so that this header needs no CUDA include.
typedef struct CUstream_st* cudaStream_t;
typedef struct CUmemPoolHandle_st* cudaMemPool_t;

namespace reshard {

struct CudaCopyEngineOptions {
  // Allocate from a memory pool of the engine's own (shared by its copies,
  // destroyed with the last) that keeps freed memory mapped for the next
  // allocations, as PyTorch's caching allocator does. The device's default
  // pool unmaps what is free at every synchronisation (release threshold 0),
  // so each plan run after one maps its buffers again: on an H200, copies of
  // a few MB or more took 2.1-3.8x as long that way (bench/README.md, "Current
  // results").
  // False: the device's current pool (cudaMallocAsync), on the caller's
  // settings; what the engine frees there is free for any other user.
  bool own_pool = true;
};

class CudaCopyEngine final : public CopyEngine {
 public:
  // An engine on `stream` (a stream of the current device; null is the
  // legacy default stream). Reads the device's maximum copy pitch and makes
  // its pool, so it fails (FailedPrecondition, ResourceExhausted) without a
  // usable device.
  static absl::StatusOr<CudaCopyEngine> Create(cudaStream_t stream,
                                               const CudaCopyEngineOptions& options = {});

  MemorySpace space() const override { return MemorySpace::kCuda; }
  cudaStream_t stream() const { return stream_; }
  // The pool allocations come from (CudaCopyEngineOptions::own_pool).
  cudaMemPool_t pool() const { return pool_.get(); }

  // A stream-ordered allocation from pool() on the stream; the tensor's
  // deleter is cudaFreeAsync on the same stream, so the stream must outlive
  // every tensor allocated here (the pool lives until they are freed).
  absl::StatusOr<LocalTensor> Allocate(DType dtype, std::vector<int64_t> shape) override;
  // Device-to-device: cudaMemcpyAsync, or a strided copy kernel
  // (strided_copy.h) for strided rows.
  absl::Status Copy(const Copy2D& copy, void* dst, const void* src) override;
  // cudaMemsetAsync/cudaMemset2DAsync with 0.
  absl::Status Fill(const Fill2D& fill, void* dst) override;

 private:
  CudaCopyEngine(cudaStream_t stream, int64_t max_pitch, std::shared_ptr<CUmemPoolHandle_st> pool)
      : stream_(stream), max_pitch_(max_pitch), pool_(std::move(pool)) {}

  cudaStream_t stream_;
  int64_t max_pitch_;
  // Owned (destroyed with the last copy of the engine) or the device's
  // current pool (a no-op deleter).
  std::shared_ptr<CUmemPoolHandle_st> pool_;
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_CUDA_COPY_ENGINE_H_
