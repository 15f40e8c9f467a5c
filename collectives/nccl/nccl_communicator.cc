#include "collectives/nccl/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "collectives/nccl/nccl_bootstrap.h"
#include "collectives/nccl/nccl_layout.h"

// ncclCommSplit arrived in 2.18, ncclAvg in 2.10.
static_assert(NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0), "the nccl backend needs NCCL >= 2.18");

namespace reshard {

// nccl_layout.h mirrors nccl.h's enums by value.
static_assert(static_cast<int>(NcclType::kInt8) == ncclInt8);
static_assert(static_cast<int>(NcclType::kUint8) == ncclUint8);
static_assert(static_cast<int>(NcclType::kInt32) == ncclInt32);
static_assert(static_cast<int>(NcclType::kUint32) == ncclUint32);
static_assert(static_cast<int>(NcclType::kInt64) == ncclInt64);
static_assert(static_cast<int>(NcclType::kUint64) == ncclUint64);
static_assert(static_cast<int>(NcclType::kFloat16) == ncclFloat16);
static_assert(static_cast<int>(NcclType::kFloat32) == ncclFloat32);
static_assert(static_cast<int>(NcclType::kFloat64) == ncclFloat64);
static_assert(static_cast<int>(NcclType::kBfloat16) == ncclBfloat16);
static_assert(static_cast<int>(NcclOp::kSum) == ncclSum);
static_assert(static_cast<int>(NcclOp::kProd) == ncclProd);
static_assert(static_cast<int>(NcclOp::kMax) == ncclMax);
static_assert(static_cast<int>(NcclOp::kMin) == ncclMin);
static_assert(static_cast<int>(NcclOp::kAvg) == ncclAvg);
static_assert(static_cast<int>(NcclResult::kSuccess) == ncclSuccess);
static_assert(static_cast<int>(NcclResult::kUnhandledCudaError) == ncclUnhandledCudaError);
static_assert(static_cast<int>(NcclResult::kSystemError) == ncclSystemError);
static_assert(static_cast<int>(NcclResult::kInternalError) == ncclInternalError);
static_assert(static_cast<int>(NcclResult::kInvalidArgument) == ncclInvalidArgument);
static_assert(static_cast<int>(NcclResult::kInvalidUsage) == ncclInvalidUsage);
static_assert(static_cast<int>(NcclResult::kRemoteError) == ncclRemoteError);
static_assert(static_cast<int>(NcclResult::kInProgress) == ncclInProgress);

namespace {

ncclDataType_t ToNccl(NcclType type) { return static_cast<ncclDataType_t>(type); }
ncclRedOp_t ToNccl(NcclOp op) { return static_cast<ncclRedOp_t>(op); }

// `comm` may be null (ncclGetLastError then reports this thread's last error).
absl::Status FromNccl(ncclResult_t result, ncclComm_t comm, absl::string_view context) {
  if (result == ncclSuccess) return absl::OkStatus();
  const char* last = ncclGetLastError(comm);
  return NcclStatus(static_cast<int>(result), ncclGetErrorString(result),
                    last == nullptr ? "" : last, context);
}

absl::Status FromCuda(cudaError_t error, absl::string_view context) {
  if (error == cudaSuccess) return absl::OkStatus();
  return CudaStatus(static_cast<int>(error), cudaGetErrorName(error), cudaGetErrorString(error),
                    context);
}

// Releases a communicator: finalize (which flushes its pending work) then
// destroy when it is healthy; abort when a peer may be gone, since finalize
// could then wait forever. Errors are dropped: there is nothing left to do.
void Release(ncclComm_t comm, bool healthy) {
  if (comm == nullptr) return;
  if (healthy && ncclCommFinalize(comm) == ncclSuccess) {
    (void)ncclCommDestroy(comm);
  } else {
    (void)ncclCommAbort(comm);
  }
}

// Rank 0's unique id, on every rank (nccl_bootstrap.h).
absl::StatusOr<ncclUniqueId> ShareUniqueId(Store& store, int64_t rank, const NcclOptions& options) {
  const std::string key = absl::StrCat(options.prefix, "/nccl_unique_id");
  RESHARD_ASSIGN_OR_RETURN(
      const std::vector<char> bytes,
      ShareFromRankZero(
          store, key, rank, options.timeout, []() -> absl::StatusOr<std::vector<char>> {
            ncclUniqueId id;
            RESHARD_RETURN_IF_ERROR(
                FromNccl(ncclGetUniqueId(&id), nullptr, "nccl connect: ncclGetUniqueId on rank 0"));
            return std::vector<char>(id.internal, id.internal + sizeof(id.internal));
          }));
  ncclUniqueId id;
  if (bytes.size() != sizeof(id.internal)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "nccl connect: the store holds %d bytes under \"%s\", not an NCCL unique id (%d bytes); "
        "is another program using that key?",
        bytes.size(), key, sizeof(id.internal)));
  }
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  return id;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Connect(
    const DeviceMesh& mesh, int64_t rank, Store& store, cudaStream_t stream,
    const NcclOptions& options) {
  if (rank < 0 || rank >= mesh.num_ranks()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("nccl connect: rank %d is not in mesh %s (ranks 0..%d)", rank,
                        mesh.ToString(), mesh.num_ranks() - 1));
  }
  if (options.device >= 0) {
    if (absl::Status s = FromCuda(
            cudaSetDevice(options.device),
            absl::StrFormat("nccl connect: cudaSetDevice(%d) on rank %d", options.device, rank));
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<CudaCopyEngine> engine =
      CudaCopyEngine::Create(stream, CudaCopyEngineOptions{options.own_pool});
  if (!engine.ok()) return engine.status();
  std::unique_ptr<NcclCommunicator> comm(new NcclCommunicator(mesh, rank, *engine));
  // Every group has one member: nothing to join.
  if (mesh.num_ranks() == 1 && !options.split_size_one_dims) return comm;
  comm->split_size_one_dims_ = options.split_size_one_dims;

  RESHARD_ASSIGN_OR_RETURN(const ncclUniqueId id, ShareUniqueId(store, rank, options));
  const int nranks = static_cast<int>(mesh.num_ranks());
  if (absl::Status s =
          FromNccl(ncclCommInitRank(&comm->world_, nranks, id, static_cast<int>(rank)), nullptr,
                   absl::StrFormat("nccl connect: ncclCommInitRank (rank %d of %d)", rank, nranks));
      !s.ok()) {
    comm->broken_ = std::string(s.message());  // the destructor aborts a handle NCCL left behind
    return s;
  }
  // Every rank splits the world once per mesh dim, in the same order
  // (ncclCommSplit is collective over the world); sets of several dims
  // follow on first use.
  for (int dim = 0; dim < mesh.ndim(); ++dim) {
    RESHARD_RETURN_IF_ERROR(comm->SplitGroup(MeshDimSet::Single(dim)));
  }
  return comm;
}

NcclCommunicator::~NcclCommunicator() {
  for (const auto& [dims, comm] : groups_) Release(comm, broken_.empty());
  Release(world_, broken_.empty());
}

ncclComm_t NcclCommunicator::group_comm(MeshDimSet group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : it->second;
}

absl::Status NcclCommunicator::SplitGroup(MeshDimSet dims) {
  RESHARD_ASSIGN_OR_RETURN(const NcclSplit split, NcclSplitFor(mesh_, dims, rank_));
  ncclComm_t group = nullptr;
  // Groups of one never communicate (spec §11), unless asked to.
  if (split.size > 1 || split_size_one_dims_) {
    absl::Status s =
        FromNccl(ncclCommSplit(world_, split.color, split.key, &group, nullptr), world_,
                 absl::StrFormat("nccl: ncclCommSplit for %s (color %d, key %d) "
                                 "on rank %d",
                                 DescribeGroup(dims), split.color, split.key, rank_));
    if (!s.ok()) {
      broken_ = std::string(s.message());  // the destructor aborts the groups made so far
      Release(group, /*healthy=*/false);
      return s;
    }
  }
  groups_.emplace(dims, group);
  return absl::OkStatus();
}

absl::Status NcclCommunicator::Begin(absl::string_view name, MeshDimSet dims, int64_t count,
                                     DType dtype, bool reduces, ncclComm_t* comm) {
  if (!broken_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s on %s: the nccl communicator is unusable after an earlier error: %s",
                        name, DescribeGroup(dims), broken_));
  }
  RESHARD_RETURN_IF_ERROR(ValidateCollective(mesh_, name, dims, count, dtype, reduces));
  if (groups_.count(dims) == 0) {
    if (absl::Status s = SplitGroup(dims); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(name, " on ", DescribeGroup(dims), ": ", s.message()));
    }
  }
  *comm = groups_.at(dims);
  if (*comm == nullptr) return absl::OkStatus();
  // An earlier collective may have failed on the GPU or the network after it
  // was enqueued; report it before enqueueing more work behind it.
  ncclResult_t async = ncclSuccess;
  RESHARD_RETURN_IF_ERROR(
      Finish(name, dims, "ncclCommGetAsyncError", ncclCommGetAsyncError(*comm, &async), *comm));
  return Finish(name, dims, "an earlier call, reported by ncclCommGetAsyncError", async, *comm);
}

absl::Status NcclCommunicator::Finish(absl::string_view name, MeshDimSet dims,
                                      absl::string_view nccl_call, int result, ncclComm_t comm) {
  absl::Status s = FromNccl(static_cast<ncclResult_t>(result), comm,
                            absl::StrFormat("%s on %s (%s, group of %d)", name, DescribeGroup(dims),
                                            nccl_call, mesh_.GroupSize(dims)));
  if (!s.ok()) broken_ = std::string(s.message());
  return s;
}

absl::Status NcclCommunicator::CopyLocal(absl::string_view name, MeshDimSet dims, void* dst,
                                         const void* src, int64_t bytes) {
  if (bytes == 0 || dst == src) return absl::OkStatus();
  return FromCuda(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream()),
      absl::StrFormat("%s on %s (group of one: local cudaMemcpyAsync)", name, DescribeGroup(dims)));
}

absl::Status NcclCommunicator::AllGather(MeshDimSet group, const void* send, void* recv,
                                         int64_t count, DType dtype) {
  constexpr absl::string_view kName = "all_gather";
  ncclComm_t comm = nullptr;
  if (absl::Status s = Begin(kName, group, count, dtype, /*reduces=*/false, &comm); !s.ok()) {
    return s;
  }
  if (comm == nullptr) return CopyLocal(kName, group, recv, send, count * ItemSize(dtype));
  if (count == 0) return absl::OkStatus();
  const NcclBuffer buffer = NcclMoveBuffer(dtype, count);
  return Finish(kName, group, "ncclAllGather",
                ncclAllGather(send, recv, static_cast<size_t>(buffer.count), ToNccl(buffer.type),
                              comm, stream()),
                comm);
}

absl::Status NcclCommunicator::ReduceScatter(MeshDimSet group, void* send, void* recv,
                                             int64_t count, DType dtype, ReduceOp op) {
  constexpr absl::string_view kName = "reduce_scatter";
  ncclComm_t comm = nullptr;
  if (absl::Status s = Begin(kName, group, count, dtype, /*reduces=*/true, &comm); !s.ok()) {
    return s;
  }
  // Checked even for a group of one, so that what works does not depend on
  // the mesh's sizes.
  absl::StatusOr<NcclType> type = NcclReduceType(dtype, kName, group);
  if (!type.ok()) return type.status();
  if (comm == nullptr) return CopyLocal(kName, group, recv, send, count * ItemSize(dtype));
  if (count == 0) return absl::OkStatus();
  return Finish(kName, group, "ncclReduceScatter",
                ncclReduceScatter(send, recv, static_cast<size_t>(count), ToNccl(*type),
                                  ToNccl(NcclReduceOpFor(op)), comm, stream()),
                comm);
}

absl::Status NcclCommunicator::AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                                         ReduceOp op) {
  constexpr absl::string_view kName = "all_reduce";
  ncclComm_t comm = nullptr;
  if (absl::Status s = Begin(kName, group, count, dtype, /*reduces=*/true, &comm); !s.ok()) {
    return s;
  }
  absl::StatusOr<NcclType> type = NcclReduceType(dtype, kName, group);
  if (!type.ok()) return type.status();
  // A group of one already holds the result (avg over one is the value).
  if (comm == nullptr || count == 0) return absl::OkStatus();
  return Finish(kName, group, "ncclAllReduce",
                ncclAllReduce(buf, buf, static_cast<size_t>(count), ToNccl(*type),
                              ToNccl(NcclReduceOpFor(op)), comm, stream()),
                comm);
}

absl::Status NcclCommunicator::AllToAll(MeshDimSet group, const void* send, void* recv,
                                        int64_t count, DType dtype) {
  constexpr absl::string_view kName = "all_to_all";
  ncclComm_t comm = nullptr;
  if (absl::Status s = Begin(kName, group, count, dtype, /*reduces=*/false, &comm); !s.ok()) {
    return s;
  }
  const int64_t chunk_bytes = count * ItemSize(dtype);
  if (comm == nullptr) return CopyLocal(kName, group, recv, send, chunk_bytes);
  if (count == 0) return absl::OkStatus();
  const NcclBuffer buffer = NcclMoveBuffer(dtype, count);
  const int n = static_cast<int>(mesh_.GroupSize(group));
  const char* s = static_cast<const char*>(send);
  char* r = static_cast<char*>(recv);
  // Chunk j goes to and comes from group member j (NCCL's documented
  // all-to-all pattern, self included). The group must be closed even after
  // a failed ncclSend/ncclRecv, so the first error is kept until then.
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) return Finish(kName, group, "ncclGroupStart", result, comm);
  absl::string_view failed_call;
  for (int j = 0; j < n; ++j) {
    result = ncclSend(s + j * chunk_bytes, static_cast<size_t>(buffer.count), ToNccl(buffer.type),
                      j, comm, stream());
    if (result != ncclSuccess) {
      failed_call = "ncclSend";
      break;
    }
    result = ncclRecv(r + j * chunk_bytes, static_cast<size_t>(buffer.count), ToNccl(buffer.type),
                      j, comm, stream());
    if (result != ncclSuccess) {
      failed_call = "ncclRecv";
      break;
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  if (result != ncclSuccess) return Finish(kName, group, failed_call, result, comm);
  return Finish(kName, group, "ncclGroupEnd after ncclSend/ncclRecv", end, comm);
}

absl::Status NcclCommunicator::AllToAllV(MeshDimSet group, const void* send,
                                         absl::Span<const int64_t> send_counts, void* recv,
                                         absl::Span<const int64_t> recv_counts, DType dtype) {
  constexpr absl::string_view kName = "all_to_all_v";
  RESHARD_ASSIGN_OR_RETURN(const AllToAllVOffsets offsets,
                           ValidateAllToAllV(mesh_, rank_, group, send_counts, recv_counts, dtype));
  ncclComm_t comm = nullptr;
  if (absl::Status s = Begin(kName, group, 0, dtype, /*reduces=*/false, &comm); !s.ok()) {
    return s;
  }
  const int64_t me = mesh_.IndexInGroup(group, rank_);
  const char* s = static_cast<const char*>(send);
  char* r = static_cast<char*>(recv);
  RESHARD_RETURN_IF_ERROR(CopyLocal(kName, group, r + offsets.recv[me], s + offsets.send[me],
                                    offsets.send[me + 1] - offsets.send[me]));
  if (comm == nullptr) return absl::OkStatus();
  absl::string_view failed_call = "ncclGroupStart";
  const int result = SendRecvParts(comm, me, s, r, offsets, &failed_call);
  return Finish(kName, group, failed_call, result, comm);
}

int NcclCommunicator::SendRecvParts(ncclComm_t comm, int64_t me, const char* send, char* recv,
                                    const AllToAllVOffsets& offsets,
                                    absl::string_view* failed_call) {
  // Parts move as bytes (their dtype is irrelevant to a copy). The group
  // must be closed even after a failed ncclSend/ncclRecv, so the first error
  // is kept until then.
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) return result;
  const int n = static_cast<int>(offsets.send.size()) - 1;
  for (int j = 0; j < n && result == ncclSuccess; ++j) {
    const int64_t send_bytes = offsets.send[j + 1] - offsets.send[j];
    const int64_t recv_bytes = offsets.recv[j + 1] - offsets.recv[j];
    if (j == me) continue;
    if (send_bytes > 0) {
      *failed_call = "ncclSend";
      result = ncclSend(send + offsets.send[j], static_cast<size_t>(send_bytes), ncclUint8, j, comm,
                        stream());
    }
    if (recv_bytes > 0 && result == ncclSuccess) {
      *failed_call = "ncclRecv";
      result = ncclRecv(recv + offsets.recv[j], static_cast<size_t>(recv_bytes), ncclUint8, j, comm,
                        stream());
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  if (result != ncclSuccess) return result;
  *failed_call = "ncclGroupEnd after ncclSend/ncclRecv";
  return end;
}

}  // namespace reshard
