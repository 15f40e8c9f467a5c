// NcclCommunicator: the Communicator (communicator.h) for CUDA device memory
// on NCCL.
//
// STATUS: compiled and linked here (CUDA 13, NCCL 2.28). Its GPU-free logic
// is unit tested in the default build (collectives/nccl/nccl_layout_test,
// cuda_copy_plan_test, nccl_bootstrap_test); what one GPU can check of the
// NCCL and CUDA calls (one-rank communicators: init, split, every
// collective, abort) passes tests/gpu on an H200 (scripts/gpu-test). NCCL
// across several GPUs has never run.
//
// Build (what scripts/test runs for the CUDA step; needs /usr/local/cuda):
//   bazel build --config=cuda //...
// which builds //collectives/nccl:nccl_communicator and the link check
// //collectives/nccl:nccl_link_check (a binary that is linked, not run). Without
// --config=cuda these targets build to nothing (collectives/nccl/BUILD.bazel).
//
// One rank of a DeviceMesh per process or thread, each with its own GPU:
//   1. rank 0 makes an NCCL unique id and publishes it in the rendezvous
//      Store (collectives/store.h; e.g. collectives/stores/ NewInProcessStore,
//      NewFileStore); the others wait for it (nccl_bootstrap.h);
//   2. every rank joins the world communicator (ncclCommInitRank);
//   3. for every mesh dim of size > 1, ncclCommSplit makes the group along it
//      (colors and keys from NcclSplitFor, nccl_layout.h: the rank in the
//      group is its index in DeviceMesh::GroupOf). The group of a set of
//      several mesh dims is split from the world on its first collective, so
//      the world communicator is kept; since ncclCommSplit is collective over
//      the world, every rank of the mesh must make its first call on a set
//      in the same order (the executor does: every rank runs every step).
//      Groups of one get no communicator and never communicate (unless
//      NcclOptions::split_size_one_dims).
//
//   cudaSetDevice(local_gpu);
//   cudaStream_t stream;  cudaStreamCreate(&stream);
//   std::shared_ptr<Store> store = NewFileStore(dir);
//   absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
//       NcclCommunicator::Connect(mesh, rank, *store, stream, NcclOptions());
//
// Collectives and the copy engine's copies are enqueued on `stream` without
// host synchronisation: a call returning Ok means enqueued, and the data is
// ready when the stream says so (cudaStreamSynchronize or an event). Errors
// found at enqueue time, and asynchronous errors of earlier calls
// (ncclCommGetAsyncError), come back as absl::Status naming the collective and
// the group; after one the communicator is broken (FailedPrecondition on every
// later call) and its destructor aborts its NCCL communicators instead of
// finalising them. Mapping: all_gather = ncclAllGather, reduce_scatter =
// ncclReduceScatter, all_reduce = ncclAllReduce, all_to_all = ncclSend/ncclRecv
// pairs in one ncclGroupStart/End; dtypes and ops per nccl_layout.h (no i16
// reductions; avg is ncclAvg).
//
// Unlike Gloo there is no timeout after the unique-id exchange: NCCL's
// blocking init, split and collectives wait for every peer. Not thread-safe:
// one thread drives one communicator.
#ifndef RESHARD_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_
#define RESHARD_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectives/communicator.h"
#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/store.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "planner/layout/dtype.h"
#include "planner/layout/placement.h"

// As in nccl.h, so that this header needs no NCCL include.
typedef struct ncclComm* ncclComm_t;

namespace reshard {

struct NcclOptions {
  // Key prefix in the store, so that several communicators can share one.
  std::string prefix = "reshard";
  // Bounds the wait for rank 0's unique id (not NCCL's own init).
  absl::Duration timeout = absl::Seconds(30);
  // CUDA device made current before joining (the communicator's device);
  // -1 keeps the calling thread's current device.
  int device = -1;
  // Gives groups of one (size-1 mesh dims) a one-rank NCCL communicator too,
  // so that their collectives run through NCCL instead of a local copy (and a
  // one-rank mesh joins NCCL at all). Off by default: it costs GPU memory and
  // does nothing a copy does not. One GPU can host no multi-rank
  // communicator, so this is how tests/gpu exercises every NCCL call. Every
  // rank must pass the same value.
  bool split_size_one_dims = false;
  // CudaCopyEngineOptions::own_pool of the communicator's copy engine: its
  // buffers from a pool of its own that keeps freed memory mapped (default),
  // or from the device's current pool.
  bool own_pool = true;
};

class NcclCommunicator final : public Communicator {
 public:
  // Collective over every rank of the mesh, which must all pass the same
  // mesh, store contents and options.prefix. `stream` must be a stream of
  // this rank's device and outlive the communicator. InvalidArgument for a
  // rank outside the mesh; DeadlineExceeded when rank 0's id does not arrive
  // in time; NCCL/CUDA failures as in nccl_layout.h.
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> Connect(const DeviceMesh& mesh,
                                                                   int64_t rank, Store& store,
                                                                   cudaStream_t stream,
                                                                   const NcclOptions& options);

  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  const DeviceMesh& mesh() const override { return mesh_; }
  int64_t rank() const override { return rank_; }
  MemorySpace memory_space() const override { return MemorySpace::kCuda; }
  CopyEngine& copy_engine() override { return engine_; }
  absl::string_view backend_name() const override { return "nccl"; }
  cudaStream_t stream() const { return engine_.stream(); }

  absl::Status AllGather(MeshDimSet group, const void* send, void* recv, int64_t count,
                         DType dtype) override;
  absl::Status ReduceScatter(MeshDimSet group, void* send, void* recv, int64_t count, DType dtype,
                             ReduceOp op) override;
  absl::Status AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                         ReduceOp op) override;
  absl::Status AllToAll(MeshDimSet group, const void* send, void* recv, int64_t count,
                        DType dtype) override;
  // Grouped ncclSend/ncclRecv with the members that have a part; this
  // rank's own part is a cudaMemcpyAsync.
  absl::Status AllToAllV(MeshDimSet group, const void* send, absl::Span<const int64_t> send_counts,
                         void* recv, absl::Span<const int64_t> recv_counts, DType dtype) override;

  // The NCCL communicator of `group` (null for a group of one or one not
  // split yet), e.g. for benchmarks against raw NCCL calls.
  ncclComm_t group_comm(MeshDimSet group) const;

 private:
  NcclCommunicator(DeviceMesh mesh, int64_t rank, CudaCopyEngine engine)
      : mesh_(std::move(mesh)), rank_(rank), engine_(engine) {}

  // Splits `dims`'s group from the world (collective over the world; a
  // group of one needs no communicator) and records it; breaks the
  // communicator on failure.
  absl::Status SplitGroup(MeshDimSet dims);
  // Validation shared by the collectives: the communicator is usable, the
  // arguments are valid, and no earlier call failed asynchronously. Splits
  // the group on its first use. Sets *comm (null when the group has one
  // member).
  absl::Status Begin(absl::string_view name, MeshDimSet dims, int64_t count, DType dtype,
                     bool reduces, ncclComm_t* comm);
  // Turns an NCCL result into a Status naming the call; breaks the
  // communicator on failure.
  absl::Status Finish(absl::string_view name, MeshDimSet dims, absl::string_view nccl_call,
                      int result, ncclComm_t comm);
  // The ncclSend/ncclRecv of AllToAllV's parts for the other members, in
  // one NCCL group; the name of the NCCL call that failed in *failed_call.
  int SendRecvParts(ncclComm_t comm, int64_t me, const char* send, char* recv,
                    const AllToAllVOffsets& offsets, absl::string_view* failed_call);
  // The local copy a one-member group makes instead of communicating.
  absl::Status CopyLocal(absl::string_view name, MeshDimSet dims, void* dst, const void* src,
                         int64_t bytes);

  DeviceMesh mesh_;
  int64_t rank_;
  CudaCopyEngine engine_;
  ncclComm_t world_ = nullptr;               // null for a mesh of one rank
  std::map<MeshDimSet, ncclComm_t> groups_;  // split so far; null for groups of one
  bool split_size_one_dims_ = false;         // NcclOptions::split_size_one_dims
  std::string broken_;                       // why the communicator is unusable; empty when fine
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_
