// GlooCommunicator: the Communicator (communicator.h) for host memory on
// Gloo's TCP transport, with one Gloo context per group of mesh dims.
//
// Ranks find each other through a rendezvous Store (collectives/store.h)
// shared by all of them, e.g. (collectives/stores/):
//   * ranks as threads of one process: NewInProcessStore(), one store object
//     shared by every thread;
//   * ranks as processes (or hosts with a shared filesystem):
//     NewFileStore(dir) in each process, on the same empty directory.
//
//   std::shared_ptr<Store> store = NewInProcessStore();
//   // in each rank's thread:
//   absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
//       GlooCommunicator::Connect(mesh, rank, store, GlooOptions());
//
// Connect is collective: every rank of the mesh must call it with the same
// mesh, store and options.prefix. It connects the group along each mesh dim
// and returns once every member of this rank's groups has connected all of
// its groups. The group of a set of several mesh dims is connected on its
// first collective, through the same store (kept until the communicator
// goes), and that first call returns once every member has connected it.
// The timeout bounds each rendezvous and every collective, so a rank that
// dies or stalls makes the others fail with DeadlineExceeded/Unavailable
// rather than hang. After a failed collective or rendezvous the communicator
// is broken (FailedPrecondition on every later call): Gloo gives no way to
// resynchronise a group after an error.
//
// Gloo's own algorithms do the work: allgather, allreduce (ring), alltoall,
// alltoallv.
// ReduceScatter is an allreduce plus taking this rank's chunk, which Gloo's
// new-style API lacks; it moves about twice the bytes of a dedicated
// reduce-scatter. f16/bf16 reductions compute each pairwise step in f32.
#ifndef RESHARD_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_
#define RESHARD_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/communicator.h"
#include "collectives/store.h"
#include "collectives/tensor/local_tensor.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace reshard {

struct GlooOptions {
  // Address every rank listens on (and tells its peers through the store):
  // loopback for one machine; on several hosts, this host's address on the
  // network the ranks share. Ignored when `interface` is set.
  std::string hostname = "127.0.0.1";
  // Network interface to listen on instead (e.g. "eth1"): its first IPv4
  // address is used, so every host can pass the same name.
  std::string interface;
  // Bounds each rendezvous and each collective.
  absl::Duration timeout = absl::Seconds(30);
  // Key prefix in the store, so that several communicators can share one.
  std::string prefix = "reshard";
};

class GlooCommunicator final : public Communicator {
 public:
  // InvalidArgument for a rank outside the mesh; DeadlineExceeded or
  // Unavailable when the group members do not all show up in time.
  //
  // If SIGPIPE is at its default disposition, Connect sets it to ignored
  // (once per process): Gloo writes to sockets without MSG_NOSIGNAL, so a
  // peer that died would otherwise kill this process on the next write
  // instead of failing the collective with an error. A process that installs
  // its own SIGPIPE handler keeps it.
  static absl::StatusOr<std::unique_ptr<GlooCommunicator>> Connect(const DeviceMesh& mesh,
                                                                   int64_t rank,
                                                                   std::shared_ptr<Store> store,
                                                                   const GlooOptions& options);

  ~GlooCommunicator() override;
  GlooCommunicator(const GlooCommunicator&) = delete;
  GlooCommunicator& operator=(const GlooCommunicator&) = delete;

  const DeviceMesh& mesh() const override { return mesh_; }
  int64_t rank() const override { return rank_; }
  MemorySpace memory_space() const override { return MemorySpace::kHost; }
  CopyEngine& copy_engine() override { return engine_; }
  absl::string_view backend_name() const override { return "gloo"; }

  absl::Status AllGather(MeshDimSet group, const void* send, void* recv, int64_t count,
                         DType dtype) override;
  absl::Status ReduceScatter(MeshDimSet group, void* send, void* recv, int64_t count, DType dtype,
                             ReduceOp op) override;
  absl::Status AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                         ReduceOp op) override;
  absl::Status AllToAll(MeshDimSet group, const void* send, void* recv, int64_t count,
                        DType dtype) override;
  // gloo::alltoallv: a member with a count of 0 gets a message of no data.
  absl::Status AllToAllV(MeshDimSet group, const void* send, absl::Span<const int64_t> send_counts,
                         void* recv, absl::Span<const int64_t> recv_counts, DType dtype) override;

  // Closes every connection, as if this rank had died: peers blocked in or
  // entering a collective with it fail (Unavailable), and this communicator
  // is broken from now on. For fault tests.
  void Abort();

  // The Gloo context of `group`, for benchmarks that compare with raw Gloo
  // calls; null for a group of one or one not connected yet.
  std::shared_ptr<gloo::Context> group_context(MeshDimSet group) const;

 private:
  struct Group {
    std::shared_ptr<gloo::Context> context;  // null when the group has one member
    uint32_t next_tag = 0;                   // same sequence on every member
  };

  GlooCommunicator(DeviceMesh mesh, int64_t rank, std::shared_ptr<Store> store, GlooOptions options)
      : mesh_(std::move(mesh)),
        rank_(rank),
        store_(std::move(store)),
        options_(std::move(options)) {}

  // Rendezvous of `dims`'s group through the store (a group of one needs
  // none); records the group on success.
  absl::Status ConnectGroup(MeshDimSet dims);
  // A barrier on `dims`'s group: every member has connected it (and, in
  // Connect, all of its own groups along single mesh dims).
  absl::Status AwaitGroup(MeshDimSet dims);
  // Validation shared by the collectives; connects the group on its first
  // use. Returns null when the group has one member or nothing needs to move.
  absl::StatusOr<Group*> Begin(absl::string_view name, MeshDimSet dims, int64_t count, DType dtype,
                               bool reduces);
  // Begin without validation nor the count: null only for a group of one.
  absl::StatusOr<Group*> BeginGroup(absl::string_view name, MeshDimSet dims);
  // Runs `body`, turning Gloo's exceptions into a Status and breaking the
  // communicator on failure.
  template <typename F>
  absl::Status Guard(absl::string_view name, MeshDimSet dims, F&& body);

  DeviceMesh mesh_;
  int64_t rank_;
  std::shared_ptr<Store> store_;
  GlooOptions options_;
  HostCopyEngine engine_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::map<MeshDimSet, Group> groups_;  // the groups connected so far
  std::string broken_;                  // why the communicator is unusable; empty when fine
};

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_
