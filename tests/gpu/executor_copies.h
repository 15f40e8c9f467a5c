// The local-tensor operations of the executor (collectives/executor.cc,
// spec §11: pad, trim, take a chunk, place it back, zero a slab, pack chunks
// padded to equal size and unpack them), on the public slab helpers of
// local_tensor.h so that they run on any CopyEngine: cuda_copy_engine_test
// runs each on the GPU and on the host and compares the bytes, and
// executor_copies_test checks them on the host.
//
// PackChunks/UnpackChunks (collectives/tensor/chunk_pack.h) are the
// executor's own functions: all_to_all and reduce_scatter are their only
// callers, and one GPU cannot run those, so this is how their copies get onto
// a GPU at all.
#ifndef RESHARD_TESTS_GPU_EXECUTOR_COPIES_H_
#define RESHARD_TESTS_GPU_EXECUTOR_COPIES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/tensor/chunk_pack.h"
#include "collectives/tensor/local_tensor.h"

namespace reshard {

// One operation, run on any engine; its input is in engine.space().
using CopyOp = std::function<absl::StatusOr<LocalTensor>(CopyEngine&, const LocalTensor&)>;

struct NamedCopyOp {
  std::string name;
  CopyOp op;
};

// Every chunk of n taken out and placed back into a zeroed tensor: the input
// again.
absl::StatusOr<LocalTensor> ChunksPlacedBack(CopyEngine& e, const LocalTensor& t, int dim,
                                             int64_t n);

// Everything the executor does to a local tensor along `dim` (extent L):
// pad, trim (to L - 1 and 0), every chunk of n = 1..5, placing them back,
// packing and unpacking, zeroing a slab.
std::vector<NamedCopyOp> ExecutorCopyOps(int dim, int64_t L);

// A host tensor of `shape` whose bytes are never 0 (so a missing zero fill
// shows), different per `seed`.
LocalTensor PatternTensor(DType dtype, std::vector<int64_t> shape, int seed);

// True when a and b have the same dtype, shape and bytes.
bool SameBytes(const LocalTensor& a, const LocalTensor& b);

}  // namespace reshard

#endif  // RESHARD_TESTS_GPU_EXECUTOR_COPIES_H_
