#include "planner/layout/chunk.h"

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

std::vector<Slice> GroupSlices(const DeviceMesh& mesh, MeshDimSet group,
                               absl::Span<const int> splits, int64_t length) {
  const std::vector<int> dims = group.ToVector();
  std::vector<int64_t> sizes;
  for (int m : splits) sizes.push_back(mesh.size(m));
  const int64_t n = mesh.GroupSize(group);
  std::vector<Slice> out;
  out.reserve(n);
  std::vector<int64_t> coord(kMaxMeshDims, 0);
  std::vector<int64_t> indices(splits.size());
  for (int64_t j = 0; j < n; ++j) {
    // Member j's coordinates: j row-major over the ascending mesh dims.
    int64_t rest = j;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      coord[*it] = rest % mesh.size(*it);
      rest /= mesh.size(*it);
    }
    for (size_t i = 0; i < splits.size(); ++i) indices[i] = coord[splits[i]];
    out.push_back(NestedChunk(length, sizes, indices));
  }
  return out;
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
