#include "tests/gpu/cuda_test_util.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "collectives/nccl/nccl_layout.h"

namespace reshard {

absl::Status CudaResult(int error, absl::string_view context) {
  if (error == cudaSuccess) return absl::OkStatus();
  const cudaError_t e = static_cast<cudaError_t>(error);
  return CudaStatus(error, cudaGetErrorName(e), cudaGetErrorString(e), context);
}

TestStream::TestStream() {
  status_ = CudaResult(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                       "cudaStreamCreateWithFlags");
  if (!status_.ok()) stream_ = nullptr;
}

TestStream::~TestStream() {
  if (stream_ == nullptr) return;
  (void)cudaStreamSynchronize(stream_);
  (void)cudaStreamDestroy(stream_);
}

absl::Status TestStream::Sync() const {
  return CudaResult(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::StatusOr<LocalTensor> ToDevice(CudaCopyEngine& engine, const LocalTensor& host) {
  absl::StatusOr<LocalTensor> out = engine.Allocate(host.dtype(), host.shape());
  if (!out.ok() || host.nbytes() == 0) return out;
  if (absl::Status s =
          CudaResult(cudaMemcpyAsync(out->data(), host.data(), static_cast<size_t>(host.nbytes()),
                                     cudaMemcpyHostToDevice, engine.stream()),
                     "upload: cudaMemcpyAsync host to device");
      !s.ok()) {
    return s;
  }
  // The host buffer may go away as soon as this returns.
  if (absl::Status s = CudaResult(cudaStreamSynchronize(engine.stream()), "upload: sync");
      !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<LocalTensor> ToHost(CudaCopyEngine& engine, const LocalTensor& device) {
  LocalTensor out = *LocalTensor::Zeros(device.dtype(), device.shape());
  if (device.nbytes() > 0) {
    if (absl::Status s = CudaResult(
            cudaMemcpyAsync(out.data(), device.data(), static_cast<size_t>(device.nbytes()),
                            cudaMemcpyDeviceToHost, engine.stream()),
            "download: cudaMemcpyAsync device to host");
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CudaResult(cudaStreamSynchronize(engine.stream()), "download: sync");
      !s.ok()) {
    return s;
  }
  return out;
}

Transfer CudaTransfer(CudaCopyEngine& engine) {
  return Transfer{[&engine](const LocalTensor& t) { return ToDevice(engine, t); },
                  [&engine](const LocalTensor& t) { return ToHost(engine, t); }};
}

}  // namespace reshard
