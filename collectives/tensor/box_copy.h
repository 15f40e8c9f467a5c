// Copying an N-d box (a sub-block: one [begin, begin + size) range per dim)
// between row-major tensors, as 2-D copies (Copy2D, local_tensor.h) so that
// every CopyEngine can carry it out. A permute's pieces (planner/
// permute_exchange.h) are such boxes: they are packed contiguously to send
// and placed into the target block on receipt.
//
//   // Rows 1..2 and columns 2..4 of a [4, 6] tensor into a packed [2, 3] one:
//   absl::StatusOr<std::vector<Copy2D>> copies =
//       BoxCopies({4, 6}, {1, 2}, {2, 3}, {0, 0}, {2, 3}, /*itemsize=*/4);
#ifndef RESHARD_COLLECTIVES_TENSOR_BOX_COPY_H_
#define RESHARD_COLLECTIVES_TENSOR_BOX_COPY_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/tensor/local_tensor.h"

namespace reshard {

// The 2-D copies moving the box of `sizes` at `src_begin` of a tensor of
// `src_shape` to `dst_begin` of a tensor of `dst_shape`: one Copy2D per index
// of the dims before the last two that the box cuts (one for 2-D tensors),
// none for an empty box. InvalidArgument, naming the dim, when the ranks
// differ or the box leaves either tensor.
absl::StatusOr<std::vector<Copy2D>> BoxCopies(absl::Span<const int64_t> src_shape,
                                              absl::Span<const int64_t> src_begin,
                                              absl::Span<const int64_t> dst_shape,
                                              absl::Span<const int64_t> dst_begin,
                                              absl::Span<const int64_t> sizes, int itemsize);

// Carries out BoxCopies from `src` (a buffer of src_shape) to `dst`.
absl::Status CopyBox(CopyEngine& engine, const void* src, absl::Span<const int64_t> src_shape,
                     absl::Span<const int64_t> src_begin, void* dst,
                     absl::Span<const int64_t> dst_shape, absl::Span<const int64_t> dst_begin,
                     absl::Span<const int64_t> sizes, int itemsize);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_TENSOR_BOX_COPY_H_
