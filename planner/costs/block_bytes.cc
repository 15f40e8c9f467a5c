#include "planner/costs/block_bytes.h"

#include <algorithm>

#include "planner/costs/cache_owner_id.h"
#include "planner/layout/chunk.h"

namespace reshard {

namespace {

// The last state's block, per thread (models serve many threads at once).
struct LastBlock {
  uint64_t owner = 0;
  uint64_t state = 0;
  int64_t block[kMaxTensorDims];
};
thread_local LastBlock last;

}  // namespace

BlockBytes::BlockBytes(const CostProblem& p)
    : id_(NewCacheOwnerId()),
      ndim_(std::min<int>(static_cast<int>(p.global_shape.size()), kMaxTensorDims)),
      mesh_ndim_(p.mesh.ndim()),
      itemsize_(p.itemsize) {
  for (int d = 0; d < ndim_; ++d) shape_[d] = p.global_shape[d];
  for (int m = 0; m < mesh_ndim_; ++m) size_[m] = p.mesh.size(m);
}

void BlockBytes::BlockOf(const DistState& current, int64_t* block) const {
  // ceil(ceil(L / a) / b) == ceil(L / (a * b)): the padded block of a tensor
  // dim depends only on how many ways it is split, not on the order (and
  // finding the orders would cost more than the rest of this, per edge).
  int64_t ways[kMaxTensorDims];
  for (int d = 0; d < ndim_; ++d) ways[d] = 1;
  for (int m = 0; m < mesh_ndim_; ++m) {
    const Placement p = current.placement(m);
    if (p.is_shard() && p.dim() < ndim_) ways[p.dim()] *= size_[m];
  }
  for (int d = 0; d < ndim_; ++d) block[d] = PaddedChunkSize(shape_[d], ways[d]);
}

double BlockBytes::operator()(const DistState& current, const Step& step, int64_t n) const {
  // DistState::bits() holds every cell (and the ndim is this problem's).
  if (last.owner != id_ || last.state != current.bits()) {
    BlockOf(current, last.block);
    last.owner = id_;
    last.state = current.bits();
  }
  int64_t block[kMaxTensorDims];
  std::copy(last.block, last.block + ndim_, block);
  const int to = step.dst.is_shard() ? step.dst.dim() : -1;
  if (to >= 0 && to < ndim_) {
    // Splitting a dim n ways pads it to n equal chunks: the output of a
    // chunk is one of them, the input of reduce_scatter / all_to_all all n.
    const int64_t chunk = PaddedChunkSize(block[to], n);
    if (step.kind == StepKind::kChunk) block[to] = chunk;
    if (step.kind == StepKind::kReduceScatter || step.kind == StepKind::kAllToAll) {
      block[to] = chunk * n;
    }
  }
  double bytes = itemsize_;
  for (int d = 0; d < ndim_; ++d) bytes *= static_cast<double>(block[d]);
  return step.kind == StepKind::kAllGather ? bytes * static_cast<double>(n) : bytes;
}

}  // namespace reshard
