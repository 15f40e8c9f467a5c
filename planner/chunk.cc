#include "planner/chunk.h"

#include <algorithm>

namespace reshard {

// Without the overflow of (length + n - 1) / n.
int64_t PaddedChunkSize(int64_t length, int64_t n) {
  return length / n + (length % n != 0 ? 1 : 0);
}

int64_t ChunkSize(int64_t length, int64_t n, int64_t i) {
  const int64_t c = PaddedChunkSize(length, n);
  const int64_t start = i * c;  // < length + n: i < n and c <= length / n + 1
  if (start >= length) return 0;
  return std::min(c, length - start);
}

int64_t ChunkOffset(int64_t length, int64_t n, int64_t i) {
  return std::min(i * PaddedChunkSize(length, n), length);
}

Slice NestedChunk(int64_t length, absl::Span<const int64_t> sizes,
                  absl::Span<const int64_t> indices) {
  Slice slice{0, length};
  for (size_t i = 0; i < sizes.size(); ++i) {
    slice.offset += ChunkOffset(slice.size, sizes[i], indices[i]);
    slice.size = ChunkSize(slice.size, sizes[i], indices[i]);
  }
  return slice;
}

std::vector<int64_t> LocalShape(const DeviceMesh& mesh, const DistState& state,
                                absl::Span<const int64_t> global_shape,
                                absl::Span<const int64_t> coordinate) {
  std::vector<int64_t> shape(global_shape.begin(), global_shape.end());
  for (int d = 0; d < static_cast<int>(shape.size()) && d < kMaxTensorDims; ++d) {
    // Spec §2: splits apply in shard order, each on the previous chunk.
    for (int m : state.OrderOf(d)) {
      const int64_t coord = m < static_cast<int>(coordinate.size()) ? coordinate[m] : 0;
      shape[d] = ChunkSize(shape[d], mesh.size(m), coord);
    }
  }
  return shape;
}

}  // namespace reshard
