// Packing a tensor into equal-sized chunks and back: the layout the padded
// collectives of spec §11 exchange (all_to_all and reduce_scatter send n
// chunks of ceil(L/n) rows, one after another; all_gather and all_to_all
// receive them). A group of several mesh dims splits a tensor dim into
// nested chunks (planner/layout/chunk.h, GroupSlices), padded to the largest; the
// *Slices forms take those slices, the *Chunks forms torch.chunk's. Shared
// by the executor and the GPU tests that run these copies on a CUDA engine.
//
//   // t has extent 5 along dim 0; chunks of torch.chunk(5, 4) are 2, 2, 1, 0.
//   absl::StatusOr<LocalTensor> packed = PackChunks(engine, std::move(t), 0, 4);
//   // packed->shape() == {4, 2, ...}: chunk j zero-padded to 2 rows
//   absl::StatusOr<LocalTensor> back = UnpackChunks(engine, *std::move(packed), 0, 5);
//   // Nested over a 2x2 group: slices {0,2} {2,1} {3,1} {4,1}, padded to 2.
#ifndef RESHARD_COLLECTIVES_TENSOR_CHUNK_PACK_H_
#define RESHARD_COLLECTIVES_TENSOR_CHUNK_PACK_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/chunk.h"

namespace reshard {

// `t` itself when its `dim` already has `length` rows; `t` narrowed in
// place when trimming a dim with only size-1 dims before it; else
// Resize(engine, t, dim, length) (zero padding or trimming).
absl::StatusOr<LocalTensor> WithLength(CopyEngine& engine, LocalTensor t, int dim, int64_t length);

// Splits t (extent L along dim) into the n torch.chunk chunks, each
// zero-padded to c = ceil(L/n) rows, laid out one after another: shape
// {n, t's shape with c at dim}. When dim is outermost (the dims before it
// have one element) this is a padding of t's own buffer, no per-chunk copy.
absl::StatusOr<LocalTensor> PackChunks(CopyEngine& engine, LocalTensor t, int dim, int64_t n);

// The inverse: n padded chunks (shape {n, chunk shape}) concatenated along
// dim, each trimmed to its torch.chunk size of L.
absl::StatusOr<LocalTensor> UnpackChunks(CopyEngine& engine, LocalTensor packed, int dim,
                                         int64_t L);

// PackChunks with any slices of t's `dim`, one per chunk (GroupSlices), each
// zero-padded to c >= its size rows. Slices may be empty, overlap or come
// in any order; when they are torch.chunk's of c rows this is PackChunks.
absl::StatusOr<LocalTensor> PackSlices(CopyEngine& engine, LocalTensor t, int dim,
                                       absl::Span<const Slice> slices, int64_t c);

// The inverse for slices that tile [0, L): chunk j of `packed` trimmed to
// slices[j] and placed at its offset.
absl::StatusOr<LocalTensor> UnpackSlices(CopyEngine& engine, LocalTensor packed, int dim,
                                         absl::Span<const Slice> slices, int64_t L);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_TENSOR_CHUNK_PACK_H_
