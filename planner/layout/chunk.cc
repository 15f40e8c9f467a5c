#include "planner/layout/chunk.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

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
    // ChunkOffset and ChunkSize, with one division between them (pricing
    // exchanges computes many of these).
    const int64_t c = PaddedChunkSize(slice.size, sizes[i]);
    const int64_t start = std::min(indices[i] * c, slice.size);
    slice.offset += start;
    slice.size = std::min(start + c, slice.size) - start;
  }
  return slice;
}

// Members sharing their coordinates on `splits` share a slice, so each
// distinct slice is computed once (prod of the splits' sizes NestedChunks,
// not one per member: exchanges are priced by these, spec §6.4), and the
// members are walked by an odometer instead of dividing their index.
std::vector<Slice> GroupSlices(const DeviceMesh& mesh, MeshDimSet group,
                               absl::Span<const int> splits, int64_t length) {
  std::vector<Slice> out;
  GroupSlicesInto(mesh, group, splits, length, &out);
  return out;
}

// Exchange pricing calls this per tensor dim twice per price: the table is
// on the stack for up to 64 distinct slices and *out keeps its storage, so
// that most calls allocate nothing.
void GroupSlicesInto(const DeviceMesh& mesh, MeshDimSet group, absl::Span<const int> splits,
                     int64_t length, std::vector<Slice>* out) {
  int dims[kMaxMeshDims];
  int k = 0;
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (group.Contains(m)) dims[k++] = m;
  }
  // The distinct slices, row-major over the splits (a split outside the
  // group is at coordinate 0 for every member).
  int64_t sizes[kMaxMeshDims];
  int64_t span[kMaxMeshDims];  // how many ways each split varies over the group
  int64_t stride[kMaxMeshDims];
  const size_t num_splits = splits.size();
  int64_t distinct = 1;
  for (size_t i = num_splits; i-- > 0;) {
    sizes[i] = mesh.size(splits[i]);
    span[i] = group.Contains(splits[i]) ? sizes[i] : 1;
    stride[i] = distinct;
    distinct *= span[i];
  }
  absl::InlinedVector<Slice, 64> table;
  table.reserve(distinct);
  int64_t indices[kMaxMeshDims] = {};
  for (int64_t t = 0; t < distinct; ++t) {
    table.push_back(NestedChunk(length, absl::MakeConstSpan(sizes, num_splits),
                                absl::MakeConstSpan(indices, num_splits)));
    size_t i = num_splits;  // the next tuple, the last split fastest
    while (i > 0 && ++indices[i - 1] == span[i - 1]) indices[--i] = 0;
  }
  // Each group dim's weight in a member's table index.
  int64_t weight[kMaxMeshDims] = {};
  for (size_t i = 0; i < num_splits; ++i) {
    for (int j = 0; j < k; ++j) {
      if (dims[j] == splits[i]) weight[j] = stride[i];
    }
  }
  // Members row-major over the group dims, the last fastest: a row of the
  // last dim at a time (its members step through the table by its weight),
  // the odometer over the others once per row.
  out->resize(mesh.GroupSize(group));
  Slice* member = out->data();
  if (k == 0) {
    member[0] = table[0];
    return;
  }
  const int64_t row = mesh.size(dims[k - 1]);
  const int64_t step = weight[k - 1];
  int64_t coord[kMaxMeshDims] = {};  // per group dim but the last
  int64_t at = 0;
  for (Slice* end = member + out->size(); member != end; member += row) {
    for (int64_t x = 0; x < row; ++x) member[x] = table[at + x * step];
    int i = k - 1;
    while (i > 0 && ++coord[i - 1] == mesh.size(dims[i - 1])) {
      at -= (coord[i - 1] - 1) * weight[i - 1];
      coord[--i] = 0;
    }
    if (i > 0) at += weight[i - 1];
  }
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
