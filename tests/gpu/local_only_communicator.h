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
#include "collectives/tensor/local_tensor.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"

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

  absl::Status AllGather(MeshDimSet group, const void*, void*, int64_t, DType) override {
    return Refuse("all_gather", group);
  }
  absl::Status ReduceScatter(MeshDimSet group, void*, void*, int64_t, DType, ReduceOp) override {
    return Refuse("reduce_scatter", group);
  }
  absl::Status AllReduce(MeshDimSet group, void*, int64_t, DType, ReduceOp) override {
    return Refuse("all_reduce", group);
  }
  absl::Status AllToAll(MeshDimSet group, const void*, void*, int64_t, DType) override {
    return Refuse("all_to_all", group);
  }
  absl::Status AllToAllV(MeshDimSet group, const void*, absl::Span<const int64_t>, void*,
                         absl::Span<const int64_t>, DType) override {
    return Refuse("all_to_all_v", group);
  }

 private:
  absl::Status Refuse(absl::string_view collective, MeshDimSet group) const {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s on %s: a local-only communicator (rank "
                        "%d) cannot communicate; the plan "
                        "was expected to need no collective",
                        collective, DescribeGroup(group), rank_));
  }

  DeviceMesh mesh_;
  int64_t rank_;
  CopyEngine& engine_;
};

}  // namespace reshard

#endif  // RESHARD_TESTS_GPU_LOCAL_ONLY_COMMUNICATOR_H_
