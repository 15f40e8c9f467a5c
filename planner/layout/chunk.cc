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

namespace {

// Chunk i of `parent` split in chunks of c = PaddedChunkSize(parent.size, n):
// ChunkOffset and ChunkSize with the division done once by the caller
// (pricing exchanges computes many of these).
Slice ChunkAt(const Slice& parent, int64_t c, int64_t i) {
  const int64_t start = std::min(i * c, parent.size);
  return {parent.offset + start, std::min(start + c, parent.size) - start};
}

}  // namespace

Slice NestedChunk(int64_t length, absl::Span<const int64_t> sizes,
                  absl::Span<const int64_t> indices) {
  Slice slice{0, length};
  for (size_t i = 0; i < sizes.size(); ++i) {
    slice = ChunkAt(slice, PaddedChunkSize(slice.size, sizes[i]), indices[i]);
  }
  return slice;
}

namespace {

// A group's distinct slices of one extent and how members index them:
// members sharing their coordinates on the splits share a slice, so each
// distinct slice is computed once (prod of the splits' sizes NestedChunks,
// not one per member: exchanges are priced by these, spec §6.4).
struct SliceTable {
  // Row-major over the splits, the last fastest (a split outside the group
  // is at coordinate 0 for every member).
  absl::InlinedVector<Slice, 64> slices;
  int dims[kMaxMeshDims];  // the group's mesh dims, ascending
  int k = 0;
  int64_t weight[kMaxMeshDims] = {};  // each group dim's in a member's index
};

void MakeSliceTable(const DeviceMesh& mesh, MeshDimSet group, absl::Span<const int> splits,
                    int64_t length, SliceTable* t) {
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (group.Contains(m)) t->dims[t->k++] = m;
  }
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
  // Split by split, each slice into its span's chunks (the last split
  // fastest): each chunk is computed once, not once per slice under it.
  t->slices.assign(1, Slice{0, length});
  for (size_t i = 0; i < num_splits; ++i) {
    const size_t parents = t->slices.size();
    t->slices.resize(parents * span[i]);
    for (size_t p = parents; p-- > 0;) {  // from the last: slot p * span[i] >= p
      const Slice parent = t->slices[p];
      const int64_t c = PaddedChunkSize(parent.size, sizes[i]);
      for (int64_t x = 0; x < span[i]; ++x) t->slices[p * span[i] + x] = ChunkAt(parent, c, x);
    }
  }
  for (size_t i = 0; i < num_splits; ++i) {
    for (int j = 0; j < t->k; ++j) {
      if (t->dims[j] == splits[i]) t->weight[j] = stride[i];
    }
  }
}

// Calls row(first, at, step, n) for the members row-major over the group
// dims, a row of the last dim at a time (the odometer over the others once
// per row instead of dividing each member's index): the row's members are
// first .. first + n - 1, and member first + x has slice at + x * step.
template <typename Row>
void ForEachMemberRow(const DeviceMesh& mesh, const SliceTable& t, int64_t members, Row row) {
  if (t.k == 0) return row(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1});
  const int k = t.k;
  const int64_t length = mesh.size(t.dims[k - 1]);
  int64_t coord[kMaxMeshDims] = {};  // per group dim but the last
  int64_t at = 0;
  for (int64_t first = 0; first < members; first += length) {
    row(first, at, t.weight[k - 1], length);
    int i = k - 1;
    while (i > 0 && ++coord[i - 1] == mesh.size(t.dims[i - 1])) {
      at -= (coord[i - 1] - 1) * t.weight[i - 1];
      coord[--i] = 0;
    }
    if (i > 0) at += t.weight[i - 1];
  }
}

}  // namespace

std::vector<Slice> GroupSlices(const DeviceMesh& mesh, MeshDimSet group,
                               absl::Span<const int> splits, int64_t length) {
  SliceTable t;
  MakeSliceTable(mesh, group, splits, length, &t);
  std::vector<Slice> out(mesh.GroupSize(group));
  ForEachMemberRow(mesh, t, static_cast<int64_t>(out.size()),
                   [&](int64_t first, int64_t at, int64_t step, int64_t n) {
                     for (int64_t x = 0; x < n; ++x) out[first + x] = t.slices[at + x * step];
                   });
  return out;
}

// Exchange pricing calls this per tensor dim twice per price: the table is
// built on the stack for up to 64 distinct slices and the vectors keep their
// storage, so that most calls allocate nothing.
void GroupSliceGrid(const DeviceMesh& mesh, MeshDimSet group, absl::Span<const int> splits,
                    int64_t length, std::vector<Slice>* table, std::vector<uint32_t>* index) {
  SliceTable t;
  MakeSliceTable(mesh, group, splits, length, &t);
  table->assign(t.slices.begin(), t.slices.end());
  index->resize(mesh.GroupSize(group));
  uint32_t* member = index->data();
  ForEachMemberRow(mesh, t, static_cast<int64_t>(index->size()),
                   [&](int64_t first, int64_t at, int64_t step, int64_t n) {
                     for (int64_t x = 0; x < n; ++x) {
                       member[first + x] = static_cast<uint32_t>(at + x * step);
                     }
                   });
}

std::pair<size_t, size_t> RunMeeting(absl::Span<const Slice> table, const Slice& slice) {
  if (slice.size == 0) return {0, 0};
  const auto lo = std::partition_point(table.begin(), table.end(), [&](const Slice& e) {
    return e.offset + e.size <= slice.offset;
  });
  const auto hi = std::partition_point(
      lo, table.end(), [&](const Slice& e) { return e.offset < slice.offset + slice.size; });
  return {static_cast<size_t>(lo - table.begin()), static_cast<size_t>(hi - table.begin())};
}

int64_t LocalExtent(const DeviceMesh& mesh, const DistState& state, int d, int64_t length,
                    absl::Span<const int64_t> coordinate) {
  if (d >= kMaxTensorDims) return length;
  // Spec §2: splits apply in shard order, each on the previous chunk.
  for (int m : state.OrderOf(d)) {
    const int64_t coord = m < static_cast<int>(coordinate.size()) ? coordinate[m] : 0;
    length = ChunkSize(length, mesh.size(m), coord);
  }
  return length;
}

std::vector<int64_t> LocalShape(const DeviceMesh& mesh, const DistState& state,
                                absl::Span<const int64_t> global_shape,
                                absl::Span<const int64_t> coordinate) {
  std::vector<int64_t> shape(global_shape.begin(), global_shape.end());
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    shape[d] = LocalExtent(mesh, state, d, shape[d], coordinate);
  }
  return shape;
}

}  // namespace reshard
