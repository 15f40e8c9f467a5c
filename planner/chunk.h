// torch.chunk split sizes (spec §2) and the shapes they produce.
#ifndef RESHARD_PLANNER_CHUNK_H_
#define RESHARD_PLANNER_CHUNK_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/dist_state.h"

namespace reshard {

// ceil(length / n): the chunk size of torch.chunk, and the size every chunk
// is padded to for a collective (spec §11).
int64_t PaddedChunkSize(int64_t length, int64_t n);
// Size of chunk i when `length` elements are split over n ranks with chunk
// size ceil(length / n): L=5, n=4 gives 2,2,1,0.
int64_t ChunkSize(int64_t length, int64_t n, int64_t i);
// Offset of chunk i: min(i * ceil(length / n), length).
int64_t ChunkOffset(int64_t length, int64_t n, int64_t i);

// The shape of the local shard held by the rank at `coordinate` in `state`:
// each tensor dim is split by its mesh dims in shard order.
std::vector<int64_t> LocalShape(const DeviceMesh& mesh, const DistState& state,
                                absl::Span<const int64_t> global_shape,
                                absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CHUNK_H_
