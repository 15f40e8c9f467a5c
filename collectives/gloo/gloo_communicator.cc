#include "collectives/gloo/gloo_communicator.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/gloo/store_adapter.h"
#include "collectives/tensor/host_math.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/alltoallv.h"
#include "gloo/barrier.h"
#include "gloo/common/error.h"
#include "gloo/context.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/attr.h"
#include "gloo/transport/tcp/device.h"

namespace reshard {

namespace {

std::chrono::milliseconds ToMillis(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

// Gloo reports both a timeout and a lost peer as IoException; the message
// tells them apart.
absl::Status FromException(absl::string_view what, const std::exception& e) {
  if (const auto* store_error = dynamic_cast<const StoreError*>(&e)) {
    return absl::Status(store_error->status().code(),
                        absl::StrFormat("%s: %s", what, store_error->status().message()));
  }
  const std::string msg = absl::StrFormat("%s: %s", what, e.what());
  const std::string lower = absl::AsciiStrToLower(e.what());
  if (absl::StrContains(lower, "timed out") || absl::StrContains(lower, "timeout")) {
    return absl::DeadlineExceededError(msg);
  }
  // Out of memory or threads (ulimit -v, -u): the machine's limit, not a
  // bug; Gloo reports it as an enforce failure quoting strerror.
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
      absl::StrContains(e.what(), std::strerror(ENOMEM)) ||
      absl::StrContains(e.what(), std::strerror(EAGAIN))) {
    return absl::ResourceExhaustedError(
        absl::StrCat(msg, " (this process's memory or thread limit, ulimit -v or -u, is too low)"));
  }
  if (dynamic_cast<const gloo::IoException*>(&e) != nullptr) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

// Gloo sizes segments by its template type, so the type must have the
// element's size (a reduction must never see half an element); its meaning
// is irrelevant to Gloo, which only moves bytes and calls our reduce function.
template <typename F>
void WithElementType(int itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      f(uint8_t{});
      break;
    case 2:
      f(uint16_t{});
      break;
    case 4:
      f(uint32_t{});
      break;
    default:
      f(uint64_t{});
      break;
  }
}

// See Connect in the header: a dead peer must be an error, not a signal.
void IgnoreSigpipeUnlessHandled() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current;
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<GlooCommunicator>> GlooCommunicator::Connect(
    const DeviceMesh& mesh, int64_t rank, std::shared_ptr<Store> store,
    const GlooOptions& options) {
  if (rank < 0 || rank >= mesh.num_ranks()) {
    return absl::InvalidArgumentError(absl::StrFormat("gloo: rank %d is outside mesh %s (%d ranks)",
                                                      rank, mesh.ToString(), mesh.num_ranks()));
  }
  if (store == nullptr) return absl::InvalidArgumentError("gloo: no rendezvous store");
  IgnoreSigpipeUnlessHandled();
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("gloo: the timeout must be positive");
  }
  std::unique_ptr<GlooCommunicator> comm(
      new GlooCommunicator(mesh, rank, std::move(store), options));
  try {
    gloo::transport::tcp::attr attr;
    if (options.interface.empty()) {
      attr.hostname = options.hostname;
    } else {
      attr.iface = options.interface;
    }
    comm->device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    return FromException("gloo: creating the TCP device", e);
  }
  // The groups along single mesh dims are connected here, not on first use,
  // so that a rank that fails after Connect fails its peers' collectives
  // (errors naming the step), never their rendezvous.
  for (int dim = 0; dim < mesh.ndim(); ++dim) {
    RESHARD_RETURN_IF_ERROR(comm->ConnectGroup(MeshDimSet::Single(dim)));
  }
  // A rank's connectFullMesh can return while a peer is still finishing its
  // side. One barrier per group, in mesh-dim order on every rank, means
  // that when Connect returns here, every member of this rank's groups has
  // connected all of its own groups.
  for (int dim = 0; dim < mesh.ndim(); ++dim) {
    RESHARD_RETURN_IF_ERROR(comm->AwaitGroup(MeshDimSet::Single(dim)));
  }
  return comm;
}

GlooCommunicator::~GlooCommunicator() = default;

absl::Status GlooCommunicator::ConnectGroup(MeshDimSet dims) {
  const int64_t n = mesh_.GroupSize(dims);
  if (n == 1) {  // size-1 mesh dims never communicate (spec §11)
    groups_.emplace(dims, Group());
    return absl::OkStatus();
  }
  const std::vector<int64_t> members = mesh_.GroupOf(dims, rank_);
  // Named by its mesh dims and first member: unique among the groups of
  // every set of mesh dims.
  const std::string prefix = absl::StrFormat("%s/dims%s/first%d", options_.prefix,
                                             absl::StrJoin(dims.ToVector(), "."), members[0]);
  try {
    auto context = std::make_shared<gloo::rendezvous::Context>(
        static_cast<int>(mesh_.IndexInGroup(dims, rank_)), static_cast<int>(n));
    context->setTimeout(ToMillis(options_.timeout));
    GlooStoreAdapter adapter(*store_, options_.timeout);
    gloo::rendezvous::PrefixStore prefixed(prefix, adapter);
    context->connectFullMesh(prefixed, device_);
    groups_.emplace(dims, Group{std::move(context)});
  } catch (const std::exception& e) {
    return FromException(absl::StrFormat("gloo: connecting the group over %s (ranks %s)",
                                         DescribeGroup(dims), absl::StrJoin(members, ",")),
                         e);
  }
  return absl::OkStatus();
}

absl::Status GlooCommunicator::AwaitGroup(MeshDimSet dims) {
  Group& g = groups_.at(dims);
  if (g.context == nullptr) return absl::OkStatus();
  try {
    gloo::BarrierOptions opts(g.context);
    opts.setTag(g.next_tag++);
    opts.setTimeout(ToMillis(options_.timeout));
    gloo::barrier(opts);
  } catch (const std::exception& e) {
    return FromException(
        absl::StrFormat("gloo: waiting for the group over %s to connect", DescribeGroup(dims)), e);
  }
  return absl::OkStatus();
}

void GlooCommunicator::Abort() {
  for (auto& [dims, g] : groups_) {
    if (g.context == nullptr) continue;
    try {
      g.context->closeConnections();
    } catch (const std::exception&) {
      // Already closed or broken: either way it is gone.
    }
  }
  broken_ = "aborted";
}

std::shared_ptr<gloo::Context> GlooCommunicator::group_context(MeshDimSet group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : it->second.context;
}

absl::StatusOr<GlooCommunicator::Group*> GlooCommunicator::Begin(absl::string_view name,
                                                                 MeshDimSet dims, int64_t count,
                                                                 DType dtype, bool reduces) {
  RESHARD_RETURN_IF_ERROR(ValidateCollective(mesh_, name, dims, count, dtype, reduces));
  RESHARD_ASSIGN_OR_RETURN(Group * g, BeginGroup(name, dims));
  // Nothing to move: count is equal on every member, so they all skip together.
  return count == 0 ? nullptr : g;
}

absl::StatusOr<GlooCommunicator::Group*> GlooCommunicator::BeginGroup(absl::string_view name,
                                                                      MeshDimSet dims) {
  if (!broken_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s on %s: the communicator is unusable after an earlier error (%s)", name,
                        DescribeGroup(dims), broken_));
  }
  auto it = groups_.find(dims);
  if (it == groups_.end()) {
    // First use of a group of several mesh dims: every member reaches this
    // same call (collectives are called in the same order on all of them),
    // and the barrier keeps Connect's promise for this group too.
    absl::Status s = ConnectGroup(dims);
    if (s.ok()) s = AwaitGroup(dims);
    if (!s.ok()) {
      broken_ = std::string(s.message());
      return absl::Status(s.code(),
                          absl::StrCat(name, " on ", DescribeGroup(dims), ": ", s.message()));
    }
    it = groups_.find(dims);
  }
  Group& g = it->second;
  return g.context == nullptr ? nullptr : &g;
}

template <typename F>
absl::Status GlooCommunicator::Guard(absl::string_view name, MeshDimSet dims, F&& body) {
  try {
    body();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    absl::Status s = FromException(
        absl::StrFormat("%s on %s (group of %d, timeout %s)", name, DescribeGroup(dims),
                        mesh_.GroupSize(dims), absl::FormatDuration(options_.timeout)),
        e);
    broken_ = std::string(s.message());
    return s;
  }
}

absl::Status GlooCommunicator::AllGather(MeshDimSet group, const void* send, void* recv,
                                         int64_t count, DType dtype) {
  RESHARD_ASSIGN_OR_RETURN(Group * g, Begin("all_gather", group, count, dtype, false));
  const size_t bytes = static_cast<size_t>(count) * ItemSize(dtype);
  if (g == nullptr) {
    if (mesh_.GroupSize(group) == 1 && bytes != 0) std::memcpy(recv, send, bytes);
    return absl::OkStatus();
  }
  return Guard("all_gather", group, [&] {
    WithElementType(ItemSize(dtype), [&](auto t) {
      using T = decltype(t);
      gloo::AllgatherOptions opts(g->context);
      // Gloo only reads the input; its API takes a non-const pointer.
      opts.setInput(static_cast<T*>(const_cast<void*>(send)), count);
      opts.setOutput(static_cast<T*>(recv), count * g->context->size);
      opts.setTag(g->next_tag++);
      gloo::allgather(opts);
    });
  });
}

absl::Status GlooCommunicator::AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                                         ReduceOp op) {
  RESHARD_ASSIGN_OR_RETURN(Group * g, Begin("all_reduce", group, count, dtype, true));
  if (g == nullptr) return absl::OkStatus();  // the reduction of one value is itself
  RESHARD_ASSIGN_OR_RETURN(HostReduceFn fn, HostReduceFunction(dtype, op));
  RESHARD_RETURN_IF_ERROR(Guard("all_reduce", group, [&] {
    WithElementType(ItemSize(dtype), [&](auto t) {
      using T = decltype(t);
      gloo::AllreduceOptions opts(g->context);
      opts.setOutput(static_cast<T*>(buf), count);
      opts.setReduceFunction(fn);
      opts.setTag(g->next_tag++);
      gloo::allreduce(opts);
    });
  }));
  if (op != ReduceOp::kAvg) return absl::OkStatus();
  return HostDivide(buf, count, dtype, mesh_.GroupSize(group));
}

absl::Status GlooCommunicator::ReduceScatter(MeshDimSet group, void* send, void* recv,
                                             int64_t count, DType dtype, ReduceOp op) {
  RESHARD_ASSIGN_OR_RETURN(Group * g, Begin("reduce_scatter", group, count, dtype, true));
  const int64_t n = mesh_.GroupSize(group);
  const size_t chunk_bytes = static_cast<size_t>(count) * ItemSize(dtype);
  if (g == nullptr) {
    if (n == 1 && chunk_bytes != 0) std::memcpy(recv, send, chunk_bytes);
    return absl::OkStatus();
  }
  // All-reduce the whole input in place (send is scratch), then keep this
  // rank's chunk.
  if (absl::Status s = AllReduce(group, send, count * n, dtype, op); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("reduce_scatter via ", s.message()));
  }
  const int64_t me = mesh_.IndexInGroup(group, rank_);
  std::memcpy(recv, static_cast<const char*>(send) + me * chunk_bytes, chunk_bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::AllToAll(MeshDimSet group, const void* send, void* recv,
                                        int64_t count, DType dtype) {
  RESHARD_ASSIGN_OR_RETURN(Group * g, Begin("all_to_all", group, count, dtype, false));
  const int64_t n = mesh_.GroupSize(group);
  if (g == nullptr) {
    const size_t bytes = static_cast<size_t>(count * n) * ItemSize(dtype);
    if (n == 1 && bytes != 0) std::memcpy(recv, send, bytes);
    return absl::OkStatus();
  }
  return Guard("all_to_all", group, [&] {
    WithElementType(ItemSize(dtype), [&](auto t) {
      using T = decltype(t);
      gloo::AlltoallOptions opts(g->context);
      opts.setInput(static_cast<T*>(const_cast<void*>(send)), count * n);
      opts.setOutput(static_cast<T*>(recv), count * n);
      opts.setTag(g->next_tag++);
      gloo::alltoall(opts);
    });
  });
}

absl::Status GlooCommunicator::AllToAllV(MeshDimSet group, const void* send,
                                         absl::Span<const int64_t> send_counts, void* recv,
                                         absl::Span<const int64_t> recv_counts, DType dtype) {
  constexpr absl::string_view kName = "all_to_all_v";
  RESHARD_ASSIGN_OR_RETURN(const AllToAllVOffsets offsets,
                           ValidateAllToAllV(mesh_, rank_, group, send_counts, recv_counts, dtype));
  // Every member takes part even with nothing to move: its peers' messages
  // of no data wait for it (gloo::alltoallv pairs every send with a recv).
  RESHARD_ASSIGN_OR_RETURN(Group * g, BeginGroup(kName, group));
  if (g == nullptr) {
    if (offsets.send.back() != 0) std::memcpy(recv, send, offsets.send.back());
    return absl::OkStatus();
  }
  // Gloo wants buffers even for parts of no bytes.
  char empty = 0;
  void* in = send != nullptr ? const_cast<void*>(send) : &empty;
  void* out = recv != nullptr ? recv : &empty;
  return Guard(kName, group, [&] {
    WithElementType(ItemSize(dtype), [&](auto t) {
      using T = decltype(t);
      gloo::AlltoallvOptions opts(g->context);
      opts.setInput(static_cast<T*>(in),
                    std::vector<int64_t>(send_counts.begin(), send_counts.end()));
      opts.setOutput(static_cast<T*>(out),
                     std::vector<int64_t>(recv_counts.begin(), recv_counts.end()));
      opts.setTag(g->next_tag++);
      gloo::alltoallv(opts);
    });
  });
}

}  // namespace reshard
