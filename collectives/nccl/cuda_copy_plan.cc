#include "collectives/nccl/cuda_copy_plan.h"

namespace reshard {

std::vector<CudaCopyCall> PlanCudaCopy(const Copy2D& copy, int64_t max_pitch) {
  std::vector<CudaCopyCall> calls;
  if (copy.rows == 0 || copy.row_bytes == 0) return calls;
  CudaCopyCall call;
  call.dst_offset = copy.dst_offset;
  call.src_offset = copy.src_offset;
  if (copy.contiguous()) {
    call.width = copy.rows * copy.row_bytes;
    calls.push_back(call);
    return calls;
  }
  if (copy.src_pitch <= max_pitch && copy.dst_pitch <= max_pitch) {
    call.kind = CudaCopyCall::Kind::k2D;
    call.dst_pitch = copy.dst_pitch;
    call.src_pitch = copy.src_pitch;
    call.width = copy.row_bytes;
    call.height = copy.rows;
    calls.push_back(call);
    return calls;
  }
  calls.reserve(static_cast<size_t>(copy.rows));
  call.width = copy.row_bytes;
  for (int64_t r = 0; r < copy.rows; ++r) {
    call.dst_offset = copy.dst_offset + r * copy.dst_pitch;
    call.src_offset = copy.src_offset + r * copy.src_pitch;
    calls.push_back(call);
  }
  return calls;
}

std::vector<CudaFillCall> PlanCudaFill(const Fill2D& fill, int64_t max_pitch) {
  std::vector<CudaFillCall> calls;
  if (fill.rows == 0 || fill.row_bytes == 0) return calls;
  CudaFillCall call;
  call.offset = fill.offset;
  if (fill.rows == 1 || fill.pitch == fill.row_bytes) {
    call.width = fill.rows * fill.row_bytes;
    calls.push_back(call);
    return calls;
  }
  if (fill.pitch <= max_pitch) {
    call.kind = CudaFillCall::Kind::k2D;
    call.pitch = fill.pitch;
    call.width = fill.row_bytes;
    call.height = fill.rows;
    calls.push_back(call);
    return calls;
  }
  calls.reserve(static_cast<size_t>(fill.rows));
  call.width = fill.row_bytes;
  for (int64_t r = 0; r < fill.rows; ++r) {
    call.offset = fill.offset + r * fill.pitch;
    calls.push_back(call);
  }
  return calls;
}

}  // namespace reshard
