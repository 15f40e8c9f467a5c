#include "collectives/tensor/box_copy.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

absl::Status CheckBox(absl::Span<const int64_t> src_shape, absl::Span<const int64_t> src_begin,
                      absl::Span<const int64_t> dst_shape, absl::Span<const int64_t> dst_begin,
                      absl::Span<const int64_t> sizes) {
  const size_t n = sizes.size();
  if (src_shape.size() != n || src_begin.size() != n || dst_shape.size() != n ||
      dst_begin.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("box copy: a box of %d dims between tensors of %d and %d dims", n,
                        src_shape.size(), dst_shape.size()));
  }
  for (size_t d = 0; d < n; ++d) {
    if (sizes[d] < 0 || src_begin[d] < 0 || dst_begin[d] < 0 ||
        src_begin[d] + sizes[d] > src_shape[d] || dst_begin[d] + sizes[d] > dst_shape[d]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "box copy: dim %d: [%d, +%d) -> [%d, +%d) leaves the extents %d -> %d", d, src_begin[d],
          sizes[d], dst_begin[d], sizes[d], src_shape[d], dst_shape[d]));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> Strides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

}  // namespace

absl::StatusOr<std::vector<Copy2D>> BoxCopies(absl::Span<const int64_t> src_shape,
                                              absl::Span<const int64_t> src_begin,
                                              absl::Span<const int64_t> dst_shape,
                                              absl::Span<const int64_t> dst_begin,
                                              absl::Span<const int64_t> sizes, int itemsize) {
  RESHARD_RETURN_IF_ERROR(CheckBox(src_shape, src_begin, dst_shape, dst_begin, sizes));
  const int n = static_cast<int>(sizes.size());
  std::vector<Copy2D> copies;
  for (int64_t s : sizes) {
    if (s == 0) return copies;
  }
  // Dims after the last one the box cuts are whole in both tensors, so each
  // index of the dims up to it starts one contiguous run; the dim before it
  // is the rows of a Copy2D, and the dims before that are looped over.
  int cut = n - 1;
  while (cut >= 0 && sizes[cut] == src_shape[cut] && sizes[cut] == dst_shape[cut]) --cut;
  cut = std::max(cut, 0);
  const std::vector<int64_t> ss = Strides(src_shape);
  const std::vector<int64_t> ds = Strides(dst_shape);
  const int row_dim = cut - 1;  // -1: a single run
  Copy2D base;
  base.rows = row_dim >= 0 ? sizes[row_dim] : 1;
  base.row_bytes = (n == 0 ? 1 : sizes[cut] * ss[cut]) * itemsize;
  base.src_pitch = row_dim >= 0 ? ss[row_dim] * itemsize : base.row_bytes;
  base.dst_pitch = row_dim >= 0 ? ds[row_dim] * itemsize : base.row_bytes;
  std::vector<int64_t> index(n, 0);  // over dims [0, row_dim) of the box
  while (true) {
    Copy2D c = base;
    for (int d = 0; d < n; ++d) {
      c.src_offset += (src_begin[d] + index[d]) * ss[d] * itemsize;
      c.dst_offset += (dst_begin[d] + index[d]) * ds[d] * itemsize;
    }
    copies.push_back(c);
    int d = row_dim - 1;
    while (d >= 0 && ++index[d] == sizes[d]) index[d--] = 0;
    if (d < 0) return copies;
  }
}

absl::Status CopyBox(CopyEngine& engine, const void* src, absl::Span<const int64_t> src_shape,
                     absl::Span<const int64_t> src_begin, void* dst,
                     absl::Span<const int64_t> dst_shape, absl::Span<const int64_t> dst_begin,
                     absl::Span<const int64_t> sizes, int itemsize) {
  RESHARD_ASSIGN_OR_RETURN(const std::vector<Copy2D> copies,
                           BoxCopies(src_shape, src_begin, dst_shape, dst_begin, sizes, itemsize));
  for (const Copy2D& c : copies) RESHARD_RETURN_IF_ERROR(engine.Copy(c, dst, src));
  return absl::OkStatus();
}

}  // namespace reshard
