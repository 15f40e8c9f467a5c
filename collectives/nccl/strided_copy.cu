#include <cstdint>

#include "collectives/nccl/strided_copy.h"

namespace reshard {
namespace {

constexpr unsigned kThreads = 256;
// Rows at least this wide and not 4-byte aligned go to the copy engines:
// there they beat the kernel's 1- and 2-byte loads (strided_copy.h).
constexpr size_t kCopyEnginesFromBytes = 512;
constexpr unsigned kMaxGridY = 65535;

// Thread (x, y) of the grid copies elements x, x + X, ... of rows y, y + Y,
// ...; a block is kThreads / columns rows of `columns` threads.
template <typename T>
__global__ void CopyRows(char* dst, size_t dst_pitch, const char* src, size_t src_pitch,
                         size_t row_elements, size_t height) {
  const size_t x_stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t y_stride = static_cast<size_t>(gridDim.y) * blockDim.y;
  for (size_t row = static_cast<size_t>(blockIdx.y) * blockDim.y + threadIdx.y; row < height;
       row += y_stride) {
    const T* s = reinterpret_cast<const T*>(src + row * src_pitch);
    T* d = reinterpret_cast<T*>(dst + row * dst_pitch);
    for (size_t x = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; x < row_elements;
         x += x_stride) {
      d[x] = s[x];
    }
  }
}

template <typename T>
cudaError_t Launch(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                   size_t height, cudaStream_t stream) {
  size_t row_elements = width / sizeof(T);  // not const: cudaLaunchKernel takes void*
  // Narrow rows take narrow blocks, so that a warp spans several rows
  // instead of idling most of its lanes.
  unsigned columns = 1;
  while (columns < kThreads && columns < row_elements) columns *= 2;
  const dim3 block(columns, kThreads / columns);
  const size_t blocks_x = (row_elements + columns - 1) / columns;
  const size_t blocks_y = (height + block.y - 1) / block.y;
  // x: up to 2^31 - 1 blocks, far beyond any row; y: grid-stride past 65535.
  const dim3 grid(static_cast<unsigned>(blocks_x),
                  static_cast<unsigned>(blocks_y < kMaxGridY ? blocks_y : kMaxGridY));
  // cudaLaunchKernel returns this launch's error; cudaGetLastError after a
  // <<<>>> launch would also return an earlier call's, which is not ours.
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  void* args[] = {&d, &dst_pitch, &s, &src_pitch, &row_elements, &height};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&CopyRows<T>), grid, block, args, 0,
                          stream);
}

// Every address and length of the copy or'd together: its low bits tell the
// widest load that all of them allow.
uint64_t Alignment(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width) {
  return reinterpret_cast<uint64_t>(dst) | reinterpret_cast<uint64_t>(src) | dst_pitch | src_pitch |
         width;
}

}  // namespace

cudaError_t CopyStridedRowsOnCores(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                   size_t width, size_t height, cudaStream_t stream) {
  if (width == 0 || height == 0) return cudaSuccess;
  // As cudaMemcpy2DAsync refuses them, before anything is enqueued: a kernel
  // would fault instead, and a fault ends the whole CUDA context.
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  if (height > 1 && (dst_pitch < width || src_pitch < width)) return cudaErrorInvalidPitchValue;
  const uint64_t all = Alignment(dst, dst_pitch, src, src_pitch, width);
  if (all % 16 == 0) return Launch<uint4>(dst, dst_pitch, src, src_pitch, width, height, stream);
  if (all % 8 == 0) return Launch<uint2>(dst, dst_pitch, src, src_pitch, width, height, stream);
  if (all % 4 == 0) return Launch<uint32_t>(dst, dst_pitch, src, src_pitch, width, height, stream);
  if (all % 2 == 0) return Launch<uint16_t>(dst, dst_pitch, src, src_pitch, width, height, stream);
  return Launch<uint8_t>(dst, dst_pitch, src, src_pitch, width, height, stream);
}

cudaError_t CopyStridedRows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                            size_t width, size_t height, cudaStream_t stream) {
  if (Alignment(dst, dst_pitch, src, src_pitch, width) % 4 != 0 && width >= kCopyEnginesFromBytes) {
    return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height,
                             cudaMemcpyDeviceToDevice, stream);
  }
  return CopyStridedRowsOnCores(dst, dst_pitch, src, src_pitch, width, height, stream);
}

}  // namespace reshard
