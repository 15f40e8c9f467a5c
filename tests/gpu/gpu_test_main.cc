// main() of every GPU test: refuses to run (exit 1, saying why) without a
// usable CUDA device, so that a machine without a GPU can never report these
// tests as passed. scripts/gpu-test runs them on a GPU machine.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "FAILED: no usable CUDA device (cudaGetDeviceCount: %s, %d "
                 "devices). The tests "
                 "in tests/gpu need a GPU: run scripts/gpu-test on a machine "
                 "with one.\n",
                 error == cudaSuccess ? "ok" : cudaGetErrorString(error), devices);
    return 1;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    std::printf("GPU 0: %s (compute capability %d.%d, %.1f GiB)\n", prop.name, prop.major,
                prop.minor, static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  }
  return RUN_ALL_TESTS();
}
