// What the GPU tests (tests/gpu, run by scripts/gpu-test) share: a stream
// owned by the test, and LocalTensors moved between host and device through a
// CudaCopyEngine's stream. Built only with --config=cuda.
#ifndef RESHARD_TESTS_GPU_CUDA_TEST_UTIL_H_
#define RESHARD_TESTS_GPU_CUDA_TEST_UTIL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dtype.h"
#include "tests/gpu/rank_by_rank.h"

namespace reshard {

// Every dtype of planner/layout/dtype.h.
inline constexpr DType kEveryDType[] = {DType::kF64, DType::kF32,  DType::kI64, DType::kI32,
                                        DType::kF16, DType::kBF16, DType::kI16, DType::kI8,
                                        DType::kU8,  DType::kBool};

// A CUDA runtime result (a cudaError_t) as a Status naming `context`.
absl::Status CudaResult(int error, absl::string_view context);

// A stream of the current device, destroyed with the object (after waiting
// for its work). get() is null if creation failed (creation_status says why).
class TestStream {
 public:
  TestStream();
  ~TestStream();
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;

  cudaStream_t get() const { return stream_; }
  const absl::Status& creation_status() const { return status_; }
  // cudaStreamSynchronize, as a Status.
  absl::Status Sync() const;

 private:
  cudaStream_t stream_ = nullptr;
  absl::Status status_;
};

// A new device tensor (from engine.Allocate) holding `host`'s bytes.
absl::StatusOr<LocalTensor> ToDevice(CudaCopyEngine& engine, const LocalTensor& host);
// A new host tensor holding `device`'s bytes, once the engine's stream has
// finished everything enqueued before.
absl::StatusOr<LocalTensor> ToHost(CudaCopyEngine& engine, const LocalTensor& device);
// Both, for rank_by_rank.h.
Transfer CudaTransfer(CudaCopyEngine& engine);

}  // namespace reshard

#endif  // RESHARD_TESTS_GPU_CUDA_TEST_UTIL_H_
