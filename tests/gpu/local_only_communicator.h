// LocalOnlyCommunicator: one rank of a mesh, with its tensors in some
// CopyEngine's memory, that cannot communicate: every collective fails.
//
// With it one device plays each rank of a larger mesh in turn, for plans
// whose steps on mesh dims of size > 1 are all local (chunk, partition): the
// executor (collectives/executor.h) calls no collective for those, nor for
// any step on a size-1 mesh dim (spec §11). A plan that does communicate
// fails with FailedPrecondition rather than computing something wrong.
#ifndef RESHARD_TESTS_GPU_LOCAL_ONLY_COMMUNICATOR_H_
#define RESHARD_TESTS_GPU_LOCAL_ONLY_COMMUNICATOR_H_

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/communicator.h"
#include "collectives/local_tensor.h"
#include "mesh/device_mesh.h"

namespace reshard {

class LocalOnlyCommunicator final : public Communicator {
 public:
  // `engine` must outlive the communicator.
  LocalOnlyCommunicator(DeviceMesh mesh, int64_t rank, CopyEngine& engine)
      : mesh_(std::move(mesh)), rank_(rank), engine_(engine) {}

  const DeviceMesh& mesh() const override { return mesh_; }
  int64_t rank() const override { return rank_; }
  MemorySpace memory_space() const override { return engine_.space(); }
  CopyEngine& copy_engine() override { return engine_; }
  absl::string_view backend_name() const override { return "local-only"; }

  absl::Status AllGather(int mesh_dim, const void*, void*, int64_t, DType) override {
    return Refuse("all_gather", mesh_dim);
  }
  absl::Status ReduceScatter(int mesh_dim, void*, void*, int64_t, DType, ReduceOp) override {
    return Refuse("reduce_scatter", mesh_dim);
  }
  absl::Status AllReduce(int mesh_dim, void*, int64_t, DType, ReduceOp) override {
    return Refuse("all_reduce", mesh_dim);
  }
  absl::Status AllToAll(int mesh_dim, const void*, void*, int64_t, DType) override {
    return Refuse("all_to_all", mesh_dim);
  }

 private:
  absl::Status Refuse(absl::string_view collective, int mesh_dim) const {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s on mesh dim %d: a local-only communicator (rank "
                        "%d) cannot communicate; the plan "
                        "was expected to need no collective",
                        collective, mesh_dim, rank_));
  }

  DeviceMesh mesh_;
  int64_t rank_;
  CopyEngine& engine_;
};

}  // namespace reshard

#endif  // RESHARD_TESTS_GPU_LOCAL_ONLY_COMMUNICATOR_H_
