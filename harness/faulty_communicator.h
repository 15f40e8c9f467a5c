// FaultyCommunicator: forwards to another Communicator until a chosen
// collective call, where it simulates a rank that dies, so tests and
// `reshard verify --kill-rank` can check that the other ranks fail with an
// error naming the step and group instead of hanging.
//
//   FaultyCommunicator faulty(*gloo, /*fail_at_call=*/1, [&] { gloo->Abort(); });
//   Redistribute(t, src, dst, plan, faulty);  // Unavailable at the 2nd collective
//
// At call `fail_at_call` (0-based, counting AllGather, ReduceScatter,
// AllReduce, AllToAll and AllToAllV) it runs `on_fault` (e.g. closing the
// wrapped communicator's connections, or _exit for a process) and returns
// Unavailable without taking part; every later call fails the same way.
#ifndef RESHARD_HARNESS_FAULTY_COMMUNICATOR_H_
#define RESHARD_HARNESS_FAULTY_COMMUNICATOR_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "collectives/communicator.h"

namespace reshard {

class FaultyCommunicator final : public Communicator {
 public:
  // `inner` must outlive this object.
  FaultyCommunicator(Communicator& inner, int64_t fail_at_call, std::function<void()> on_fault)
      : inner_(&inner),
        mesh_(inner.mesh()),
        rank_(inner.rank()),
        fail_at_call_(fail_at_call),
        on_fault_(std::move(on_fault)) {}

  const DeviceMesh& mesh() const override { return mesh_; }
  int64_t rank() const override { return rank_; }
  MemorySpace memory_space() const override { return inner_->memory_space(); }
  CopyEngine& copy_engine() override { return inner_->copy_engine(); }
  absl::string_view backend_name() const override { return inner_->backend_name(); }

  absl::Status AllGather(MeshDimSet group, const void* send, void* recv, int64_t count,
                         DType dtype) override {
    RESHARD_RETURN_IF_ERROR(Tick("all_gather", group));
    return inner_->AllGather(group, send, recv, count, dtype);
  }
  absl::Status ReduceScatter(MeshDimSet group, void* send, void* recv, int64_t count, DType dtype,
                             ReduceOp op) override {
    RESHARD_RETURN_IF_ERROR(Tick("reduce_scatter", group));
    return inner_->ReduceScatter(group, send, recv, count, dtype, op);
  }
  absl::Status AllReduce(MeshDimSet group, void* buf, int64_t count, DType dtype,
                         ReduceOp op) override {
    RESHARD_RETURN_IF_ERROR(Tick("all_reduce", group));
    return inner_->AllReduce(group, buf, count, dtype, op);
  }
  absl::Status AllToAll(MeshDimSet group, const void* send, void* recv, int64_t count,
                        DType dtype) override {
    RESHARD_RETURN_IF_ERROR(Tick("all_to_all", group));
    return inner_->AllToAll(group, send, recv, count, dtype);
  }
  absl::Status AllToAllV(MeshDimSet group, const void* send, absl::Span<const int64_t> send_counts,
                         void* recv, absl::Span<const int64_t> recv_counts, DType dtype) override {
    RESHARD_RETURN_IF_ERROR(Tick("all_to_all_v", group));
    return inner_->AllToAllV(group, send, send_counts, recv, recv_counts, dtype);
  }

  bool faulted() const { return calls_ > fail_at_call_; }

 private:
  absl::Status Tick(absl::string_view name, MeshDimSet group) {
    if (calls_++ == fail_at_call_ && on_fault_) on_fault_();
    if (calls_ <= fail_at_call_) return absl::OkStatus();
    return absl::UnavailableError(absl::StrFormat(
        "%s on %s: this rank was made to fail at collective call %d (fault injection)", name,
        DescribeGroup(group), fail_at_call_));
  }

  Communicator* inner_;
  DeviceMesh mesh_;
  int64_t rank_;
  int64_t fail_at_call_;
  std::function<void()> on_fault_;
  int64_t calls_ = 0;
};

}  // namespace reshard

#endif  // RESHARD_HARNESS_FAULTY_COMMUNICATOR_H_
