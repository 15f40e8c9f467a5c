// The CUDA runtime calls that carry out a Copy2D or Fill2D (local_tensor.h),
// chosen without a GPU so that the default build tests them; CudaCopyEngine
// (cuda_copy_engine.h) only issues them.
//
// A copy whose rows are back to back is one cudaMemcpyAsync (no pitch limit);
// a strided one is one 2-D copy (CopyStridedRows, strided_copy.h, which takes
// cudaMemcpy2DAsync's arguments), unless a pitch exceeds the device's maximum
// (cudaDevAttrMaxPitch, about 2 GiB): then it is one cudaMemcpyAsync per row
// (few rows, since each is that far apart). Fills are the same with
// cudaMemsetAsync/cudaMemset2DAsync, which rejects such pitches; the kernel
// would not, but one rule for both keeps the plans alike.
#ifndef RESHARD_COLLECTIVES_NCCL_CUDA_COPY_PLAN_H_
#define RESHARD_COLLECTIVES_NCCL_CUDA_COPY_PLAN_H_

#include <cstdint>
#include <vector>

#include "collectives/tensor/local_tensor.h"

namespace reshard {

// One copy call. k1D: cudaMemcpyAsync(dst + dst_offset, src + src_offset,
// width, ...) with height 1 and the pitches unused. k2D:
// CopyStridedRows(dst + dst_offset, dst_pitch, src + src_offset, src_pitch,
// width, height, ...), cudaMemcpy2DAsync's arguments.
struct CudaCopyCall {
  enum class Kind { k1D, k2D };
  Kind kind = Kind::k1D;
  int64_t dst_offset = 0;
  int64_t dst_pitch = 0;
  int64_t src_offset = 0;
  int64_t src_pitch = 0;
  int64_t width = 0;  // bytes per row
  int64_t height = 1;
};

// One zero-fill call. k1D: cudaMemsetAsync(dst + offset, 0, width, ...).
// k2D: cudaMemset2DAsync(dst + offset, pitch, 0, width, height, ...).
struct CudaFillCall {
  enum class Kind { k1D, k2D };
  Kind kind = Kind::k1D;
  int64_t offset = 0;
  int64_t pitch = 0;
  int64_t width = 0;
  int64_t height = 1;
};

// The calls for `copy` (none when it moves nothing), given the device's
// maximum pitch in bytes (> 0). `copy` is valid per local_tensor.h.
std::vector<CudaCopyCall> PlanCudaCopy(const Copy2D& copy, int64_t max_pitch);
std::vector<CudaFillCall> PlanCudaFill(const Fill2D& fill, int64_t max_pitch);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_CUDA_COPY_PLAN_H_
