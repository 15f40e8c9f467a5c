// torch.chunk split sizes (spec §2) and the shapes they produce.
#ifndef RESHARD_PLANNER_LAYOUT_CHUNK_H_
#define RESHARD_PLANNER_LAYOUT_CHUNK_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/dist_state.h"

namespace reshard {

// ceil(length / n): the chunk size of torch.chunk, and the size every chunk
// is padded to for a collective (spec §11).
int64_t PaddedChunkSize(int64_t length, int64_t n);
// Size of chunk i when `length` elements are split over n ranks with chunk
// size ceil(length / n): L=5, n=4 gives 2,2,1,0.
int64_t ChunkSize(int64_t length, int64_t n, int64_t i);
// Offset of chunk i: min(i * ceil(length / n), length).
int64_t ChunkOffset(int64_t length, int64_t n, int64_t i);

// A slice [offset, offset + size) of one tensor dim.
struct Slice {
  int64_t offset = 0;
  int64_t size = 0;
  friend bool operator==(const Slice& a, const Slice& b) {
    return a.offset == b.offset && a.size == b.size;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Slice& s) {
    return H::combine(std::move(h), s.offset, s.size);
  }
};

// The elements `a` and `b` share (0 when they do not meet).
inline int64_t Overlap(const Slice& a, const Slice& b) {
  return std::max<int64_t>(
      0, std::min(a.offset + a.size, b.offset + b.size) - std::max(a.offset, b.offset));
}

// The slice of a length-`length` extent held by the rank whose coordinate on
// mesh dim sizes[i] is indices[i], when the splits apply in that order
// (spec §2; nested torch.chunk). A group step over several mesh dims uses it
// for every member (spec §11): nested splits are not one split over the
// flattened group (L=5 over 2 then 2 gives 2,1,1,1; over 4 gives 2,2,1,0).
// The member with all indices 0 holds the largest slice.
Slice NestedChunk(int64_t length, absl::Span<const int64_t> sizes,
                  absl::Span<const int64_t> indices);

// The slice of a length-`length` extent that each member of the group of
// `group` holds, in the communicator's member order (DeviceMesh::GroupOf:
// row-major over the group's ascending mesh dims), when the group's mesh
// dims `splits` split it in that nesting order: NestedChunk with the member's
// coordinates on `splits`. No splits: every member holds all of it. For one
// mesh dim these are torch.chunk's chunks (ChunkOffset, ChunkSize).
std::vector<Slice> GroupSlices(const DeviceMesh& mesh, MeshDimSet group,
                               absl::Span<const int> splits, int64_t length);
// The same as a table and indices: (*table)[(*index)[j]] is member j's
// slice. The table holds each distinct slice once, in the order of their
// coordinates on `splits`, the last fastest: so in order of offset, each
// empty slice at the end of its parent chunk. Into the vectors, reusing
// their storage.
void GroupSliceGrid(const DeviceMesh& mesh, MeshDimSet group, absl::Span<const int> splits,
                    int64_t length, std::vector<Slice>* table, std::vector<uint32_t>* index);
// The entries [first, second) of `table` that may meet `slice`: with the
// table's offsets and ends ascending (as GroupSliceGrid's), every entry that
// meets it, and besides only empty entries. Empty for an empty `slice`.
std::pair<size_t, size_t> RunMeeting(absl::Span<const Slice> table, const Slice& slice);

// The extent along tensor dim `d` (of global extent `length`) of the local
// shard held by the rank at `coordinate` in `state`: split by d's mesh dims
// in shard order (coordinates past `coordinate`'s end count as 0).
int64_t LocalExtent(const DeviceMesh& mesh, const DistState& state, int d, int64_t length,
                    absl::Span<const int64_t> coordinate);

// The shape of that shard: LocalExtent of each tensor dim.
std::vector<int64_t> LocalShape(const DeviceMesh& mesh, const DistState& state,
                                absl::Span<const int64_t> global_shape,
                                absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_CHUNK_H_
