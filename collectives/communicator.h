// Communicator: one rank's handle on the collectives of a DeviceMesh, over
// the group of any set of mesh dims (MeshDimSet): the flattened group of the
// ranks that share every coordinate outside the set, ordered row-major over
// the set's coordinates (mesh/device_mesh.h GroupOf). {k} alone is the group
// along mesh dim k, ordered by the coordinate on k.
//
// The executor (executor.h) pads every step to equal-sized chunks, so the
// collectives here only ever see `count` elements per group member:
//
//   AllGather      send: count           recv: n * count (chunk j from member j)
//   ReduceScatter  send: n * count       recv: count = op over members of chunk `me`
//                  (send is scratch: its contents are unspecified afterwards)
//   AllReduce      buf:  count, in place: op over members
//   AllToAll       send: n * count (chunk j goes to member j)
//                  recv: n * count (chunk j came from member j)
//
// where n = mesh().GroupSize(group) and `me` = mesh().IndexInGroup(group,
// rank()), this rank's index in the group. Permutes (planner/
// permute_exchange.h) exchange exact, unpadded pieces instead:
//
//   AllToAllV      send: sum(send_counts), member j's part at offset
//                        send_counts[0] + ... + send_counts[j - 1]
//                  recv: sum(recv_counts), member j's part likewise
//
// with n counts each; send_counts[j] on this rank must equal recv_counts[me]
// on member j (both sides compute them from the same rule). The part for
// `me` is a local copy; a member with a count of 0 gets no data (no padding
// to the largest part: each element travels once). Every member must call
// it, even with all counts 0.
// Buffers are raw pointers into memory_space() (host memory for Gloo, device
// memory for NCCL, whose calls are enqueued on the communicator's stream) and
// must not overlap, except AllReduce which works in place. count may be 0.
//
// Dtypes: f64, f32, f16, bf16, i64, i32, i16, i8, u8 (and bool for the
// collectives that only move bytes: AllGather, AllToAll). Reduce ops: sum,
// avg, max, min, prod; `avg` is sum then divide by n where the engine has no
// avg (integer division for integer dtypes); f16/bf16 may accumulate in f32.
//
// Every call is collective over the group: all n members must make the same
// call with the same count, dtype and op, in the same order. A group of one
// (size-1 mesh dims) never communicates. A backend may set up a group on its
// first use, which may then be collective over more ranks than the group
// (NCCL: all ranks of the mesh); the executor satisfies that, since every
// rank runs every step of the same plan. Errors are absl::Status (no
// exceptions escape): InvalidArgument for a bad argument, Unimplemented for a
// dtype/op the backend lacks, DeadlineExceeded/Unavailable when a peer is
// gone or too slow; every message names the collective and the group
// (DescribeGroup: "mesh dim 1", "mesh dims {0,2}").
#ifndef RESHARD_COLLECTIVES_COMMUNICATOR_H_
#define RESHARD_COLLECTIVES_COMMUNICATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/tensor/local_tensor.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/dtype.h"
#include "planner/layout/placement.h"

namespace reshard {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual const DeviceMesh& mesh() const = 0;
  // Row-major rank in mesh().
  virtual int64_t rank() const = 0;
  std::vector<int64_t> coordinate() const { return mesh().Coordinate(rank()); }

  // Where buffers passed to the collectives live, and the engine that copies,
  // fills and allocates there (the executor's local steps use it).
  virtual MemorySpace memory_space() const = 0;
  virtual CopyEngine& copy_engine() = 0;

  // "gloo", "nccl".
  virtual absl::string_view backend_name() const = 0;

  virtual absl::Status AllGather(MeshDimSet group, const void* send, void* recv, int64_t count,
                                 DType dtype) = 0;
  virtual absl::Status ReduceScatter(MeshDimSet group, void* send, void* recv, int64_t count,
                                     DType dtype, ReduceOp op) = 0;
  virtual absl::Status AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                                 ReduceOp op) = 0;
  virtual absl::Status AllToAll(MeshDimSet group, const void* send, void* recv, int64_t count,
                                DType dtype) = 0;
  virtual absl::Status AllToAllV(MeshDimSet group, const void* send,
                                 absl::Span<const int64_t> send_counts, void* recv,
                                 absl::Span<const int64_t> recv_counts, DType dtype) = 0;
};

// How messages name a group: "mesh dim 1" for one dim, "mesh dims {0,2}"
// otherwise.
std::string DescribeGroup(MeshDimSet group);

// Checks shared by every backend: a non-empty group of mesh dims that the
// mesh has, count >= 0, the dtype supported for the collective (`reduces` =
// ReduceScatter/AllReduce). InvalidArgument/Unimplemented with a message
// naming `collective` and the group, e.g. "all_gather on mesh dim 3: the mesh
// 2x2 has 2 dims".
absl::Status ValidateCollective(const DeviceMesh& mesh, absl::string_view collective,
                                MeshDimSet group, int64_t count, DType dtype, bool reduces);

// ValidateCollective for AllToAllV, plus: n counts each way, none negative,
// and as many elements to this rank's own part as from it (send_counts[me]
// == recv_counts[me]). Returns the byte offsets of every member's part,
// send then recv (n + 1 each: the last is the total).
struct AllToAllVOffsets {
  std::vector<int64_t> send;
  std::vector<int64_t> recv;
};
absl::StatusOr<AllToAllVOffsets> ValidateAllToAllV(const DeviceMesh& mesh, int64_t rank,
                                                   MeshDimSet group,
                                                   absl::Span<const int64_t> send_counts,
                                                   absl::Span<const int64_t> recv_counts,
                                                   DType dtype);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_COMMUNICATOR_H_
