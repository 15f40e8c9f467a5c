// A strided 2-D copy in device memory: `height` rows of `width` bytes, rows
// `src_pitch` bytes apart in `src` and `dst_pitch` apart in `dst`, enqueued
// on `stream`, mostly by a kernel of ours on the GPU's cores.
//
// cudaMemcpy2DAsync runs such copies on the copy engines, which move rows of
// a few KB at under half of a contiguous copy's rate and rows of a few bytes
// at a twentieth (on an H200, 593-798 GB/s and 62-87 GB/s against about
// 1.7 TB/s; the kernel is 2.2-2.4x and 6.3-10x faster there; bench/README.md,
// "Current results"): the executor's chunk, pad and trim
// copies along a tensor dim other than the first are all of this kind. Each
// thread moves 16, 8 or 4 bytes, the widest that the pointers, pitches and
// width allow; where they are not 4-byte aligned, 2 or 1 for rows under
// 512 bytes, and wider rows go to cudaMemcpy2DAsync, which is faster than
// loads that narrow.
//
// Built by nvcc (collectives/nccl/BUILD.bazel, --config=cuda only).
#ifndef RESHARD_COLLECTIVES_NCCL_STRIDED_COPY_H_
#define RESHARD_COLLECTIVES_NCCL_STRIDED_COPY_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace reshard {

// cudaSuccess once enqueued; the launch's error otherwise (the copy's own
// faults surface later on the stream, as with cudaMemcpy2DAsync). Nothing to
// do when width or height is 0. As cudaMemcpy2DAsync does, a null pointer is
// cudaErrorInvalidValue and a pitch below the width (more than one row)
// cudaErrorInvalidPitchValue, with nothing enqueued.
cudaError_t CopyStridedRows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                            size_t width, size_t height, cudaStream_t stream);

// The kernel alone, whatever the alignment (1- and 2-byte loads on wide rows
// included), with the same checks and errors: for tests and benchmarks.
cudaError_t CopyStridedRowsOnCores(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                   size_t width, size_t height, cudaStream_t stream);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_STRIDED_COPY_H_
