#include "collectives/gloo/gloo_communicator.h"

#include <signal.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/gloo/store_adapter.h"
#include "collectives/tensor/host_math.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
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
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
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
    return absl::InvalidArgumentError(absl::StrFormat(
        "gloo: rank %d is outside mesh %s (%d ranks)", rank, mesh.ToString(), mesh.num_ranks()));
  }
  if (store == nullptr) return absl::InvalidArgumentError("gloo: no rendezvous store");
  IgnoreSigpipeUnlessHandled();
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("gloo: the timeout must be positive");
  }
  std::unique_ptr<GlooCommunicator> comm(new GlooCommunicator(mesh, rank, options.timeout));
  comm->groups_.resize(mesh.ndim());
  std::string what = "gloo: creating the TCP device";
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    comm->device_ = gloo::transport::tcp::CreateDevice(attr);
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
      const int64_t n = mesh.size(dim);
      if (n == 1) continue;  // size-1 mesh dims never communicate (spec §11)
      const std::vector<int64_t> members = mesh.GroupAlong(dim, rank);
      const int index = static_cast<int>(mesh.Coordinate(rank)[dim]);
      // The group is named by its members, which are unique per mesh dim.
      const std::string prefix = absl::StrFormat("%s/dim%d/ranks%s", options.prefix, dim,
                                                 absl::StrJoin(members, "."));
      what = absl::StrFormat("gloo: connecting the group along mesh dim %d (ranks %s)", dim,
                             absl::StrJoin(members, ","));
      auto context =
          std::make_shared<gloo::rendezvous::Context>(index, static_cast<int>(n));
      context->setTimeout(ToMillis(options.timeout));
      GlooStoreAdapter adapter(*store, options.timeout);
      gloo::rendezvous::PrefixStore prefixed(prefix, adapter);
      context->connectFullMesh(prefixed, comm->device_);
      comm->groups_[dim].context = std::move(context);
    }
    // A rank's connectFullMesh can return while a peer is still finishing its
    // side. One barrier per group, in mesh-dim order on every rank, means
    // that when Connect returns here, every member of this rank's groups has
    // connected all of its own groups: a rank that fails right after Connect
    // then fails a peer's collective (an error naming the step), never a
    // peer's rendezvous.
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
      Group& g = comm->groups_[dim];
      if (g.context == nullptr) continue;
      what = absl::StrFormat("gloo: waiting for the group along mesh dim %d to connect", dim);
      gloo::BarrierOptions opts(g.context);
      opts.setTag(g.next_tag++);
      opts.setTimeout(ToMillis(options.timeout));
      gloo::barrier(opts);
    }
  } catch (const std::exception& e) {
    return FromException(what, e);
  }
  return comm;
}

GlooCommunicator::~GlooCommunicator() = default;

void GlooCommunicator::Abort() {
  for (Group& g : groups_) {
    if (g.context == nullptr) continue;
    try {
      g.context->closeConnections();
    } catch (const std::exception&) {
      // Already closed or broken: either way it is gone.
    }
  }
  broken_ = "aborted";
}

std::shared_ptr<gloo::Context> GlooCommunicator::group_context(int mesh_dim) const {
  return groups_.at(mesh_dim).context;
}

absl::Status GlooCommunicator::Begin(absl::string_view name, int mesh_dim, int64_t count,
                                     DType dtype, bool reduces, Group** group) {
  if (absl::Status s = ValidateCollective(mesh_, name, mesh_dim, count, dtype, reduces);
      !s.ok()) {
    return s;
  }
  if (!broken_.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s on mesh dim %d: the communicator is unusable after an earlier error (%s)", name,
        mesh_dim, broken_));
  }
  Group& g = groups_[mesh_dim];
  // A group of one, or nothing to move (count is equal on every member, so
  // they all skip together).
  *group = g.context == nullptr || count == 0 ? nullptr : &g;
  return absl::OkStatus();
}

template <typename F>
absl::Status GlooCommunicator::Guard(absl::string_view name, int mesh_dim, F&& body) {
  const std::string what = absl::StrFormat("%s on mesh dim %d (group of %d, timeout %s)", name,
                                           mesh_dim, mesh_.size(mesh_dim),
                                           absl::FormatDuration(timeout_));
  try {
    body();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    absl::Status s = FromException(what, e);
    broken_ = std::string(s.message());
    return s;
  }
}

absl::Status GlooCommunicator::AllGather(int mesh_dim, const void* send, void* recv,
                                         int64_t count, DType dtype) {
  Group* g = nullptr;
  if (absl::Status s = Begin("all_gather", mesh_dim, count, dtype, false, &g); !s.ok()) return s;
  const size_t bytes = static_cast<size_t>(count) * ItemSize(dtype);
  if (g == nullptr) {
    if (mesh_.size(mesh_dim) == 1 && bytes != 0) std::memcpy(recv, send, bytes);
    return absl::OkStatus();
  }
  return Guard("all_gather", mesh_dim, [&] {
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

absl::Status GlooCommunicator::AllReduce(int mesh_dim, void* buf, int64_t count, DType dtype,
                                         ReduceOp op) {
  Group* g = nullptr;
  if (absl::Status s = Begin("all_reduce", mesh_dim, count, dtype, true, &g); !s.ok()) return s;
  if (g == nullptr) return absl::OkStatus();  // the reduction of one value is itself
  absl::StatusOr<HostReduceFn> fn = HostReduceFunction(dtype, op);
  if (!fn.ok()) return fn.status();
  absl::Status s = Guard("all_reduce", mesh_dim, [&] {
    WithElementType(ItemSize(dtype), [&](auto t) {
      using T = decltype(t);
      gloo::AllreduceOptions opts(g->context);
      opts.setOutput(static_cast<T*>(buf), count);
      opts.setReduceFunction(*fn);
      opts.setTag(g->next_tag++);
      gloo::allreduce(opts);
    });
  });
  if (!s.ok() || op != ReduceOp::kAvg) return s;
  return HostDivide(buf, count, dtype, mesh_.size(mesh_dim));
}

absl::Status GlooCommunicator::ReduceScatter(int mesh_dim, void* send, void* recv,
                                             int64_t count, DType dtype, ReduceOp op) {
  Group* g = nullptr;
  if (absl::Status s = Begin("reduce_scatter", mesh_dim, count, dtype, true, &g); !s.ok()) {
    return s;
  }
  const int64_t n = mesh_.size(mesh_dim);
  const size_t chunk_bytes = static_cast<size_t>(count) * ItemSize(dtype);
  if (g == nullptr) {
    if (n == 1 && chunk_bytes != 0) std::memcpy(recv, send, chunk_bytes);
    return absl::OkStatus();
  }
  // All-reduce the whole input in place (send is scratch), then keep this
  // rank's chunk.
  if (absl::Status s = AllReduce(mesh_dim, send, count * n, dtype, op); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("reduce_scatter via ", s.message()));
  }
  const int64_t me = mesh_.Coordinate(rank_)[mesh_dim];
  std::memcpy(recv, static_cast<const char*>(send) + me * chunk_bytes, chunk_bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::AllToAll(int mesh_dim, const void* send, void* recv,
                                        int64_t count, DType dtype) {
  Group* g = nullptr;
  if (absl::Status s = Begin("all_to_all", mesh_dim, count, dtype, false, &g); !s.ok()) return s;
  const int64_t n = mesh_.size(mesh_dim);
  if (g == nullptr) {
    const size_t bytes = static_cast<size_t>(count * n) * ItemSize(dtype);
    if (n == 1 && bytes != 0) std::memcpy(recv, send, bytes);
    return absl::OkStatus();
  }
  return Guard("all_to_all", mesh_dim, [&] {
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

}  // namespace reshard
