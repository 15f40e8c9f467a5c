// Permutes and exchanges (spec §4.2, §11.1): this rank packs the pieces of
// its source block that other members receive from it, exchanges them with
// AllToAllV (planner/steps/permute_exchange.h says what moves), copies the
// piece it keeps straight into its target block, and places the pieces it
// receives. No padding: each element moves once, and the buffers hold only
// what crosses (spec §12).
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/slice_exchange.h"
#include "collectives/step_runners.h"
#include "collectives/tensor/box_copy.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/rail_staging.h"

namespace reshard {
namespace {

std::vector<int64_t> Begins(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.offset);
  return out;
}

std::vector<int64_t> Sizes(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.size);
  return out;
}

// A new 1-D tensor holding the boxes of `block` but box `skip`, one after
// another.
absl::StatusOr<LocalTensor> PackBoxes(CopyEngine& engine, const LocalTensor& block,
                                      const std::vector<Box>& boxes, int64_t skip, int64_t total) {
  RESHARD_ASSIGN_OR_RETURN(LocalTensor packed, engine.Allocate(block.dtype(), {total}));
  const int item = ItemSize(block.dtype());
  char* at = static_cast<char*>(packed.data());
  for (size_t j = 0; j < boxes.size(); ++j) {
    if (static_cast<int64_t>(j) == skip) continue;
    const std::vector<int64_t> sizes = Sizes(boxes[j]);
    const std::vector<int64_t> origin(sizes.size(), 0);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, block.data(), block.shape(), Begins(boxes[j]), at,
                                    sizes, origin, sizes, item));
    at += BoxElements(boxes[j]) * item;
  }
  return packed;
}

// Places the boxes but box `skip`, packed one after another in `packed`,
// into `block`.
absl::Status PlaceBoxes(CopyEngine& engine, const LocalTensor& packed,
                        const std::vector<Box>& boxes, int64_t skip, LocalTensor& block) {
  const int item = ItemSize(block.dtype());
  const char* at = static_cast<const char*>(packed.data());
  for (size_t j = 0; j < boxes.size(); ++j) {
    if (static_cast<int64_t>(j) == skip) continue;
    const std::vector<int64_t> sizes = Sizes(boxes[j]);
    const std::vector<int64_t> origin(sizes.size(), 0);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, at, sizes, origin, block.data(), block.shape(),
                                    Begins(boxes[j]), sizes, item));
    at += BoxElements(boxes[j]) * item;
  }
  return absl::OkStatus();
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

// Spec §11.2: a step staged over rails runs its rounds (rail_staging.h) as
// a crossing runs its own, a stager keeping what it passes on aside.
absl::StatusOr<LocalTensor> RunStagedExchange(const LocalTensor& cur, StepContext& c) {
  const DeviceMesh& mesh = c.comm.mesh();
  const StagedExchange x =
      StagedExchangeOf(c.state, c.step, mesh, c.L, mesh.Coordinate(c.comm.rank()));
  CrossingStats counted;
  RESHARD_ASSIGN_OR_RETURN(
      LocalTensor out,
      ExchangeSlices(cur, x.held[x.me], x.wanted[x.me], x.rounds.routes, x.rounds.round_of,
                     x.rounds.rounds, x.me, cur.dtype(), c.comm, c.step.group, &counted));
  c.stats.bytes_sent = counted.bytes_sent;
  c.stats.bytes_received = counted.bytes_received;
  return out;
}

}  // namespace

absl::StatusOr<LocalTensor> RunSliceExchange(LocalTensor cur, StepContext& c) {
  if (c.step.staging.staged()) return RunStagedExchange(cur, c);
  const DeviceMesh& mesh = c.comm.mesh();
  const PermuteExchange x =
      PermuteExchangeOf(c.state, c.step, mesh, c.L, mesh.Coordinate(c.comm.rank()));
  if (cur.shape() != x.source_shape) {
    return absl::InternalError(absl::StrFormat("local tensor %s, expected the source block [%s]",
                                               cur.DebugString(),
                                               absl::StrJoin(x.source_shape, ",")));
  }
  // The piece this rank keeps does not go through the buffers.
  std::vector<int64_t> send_counts = x.SendCounts();
  std::vector<int64_t> recv_counts = x.RecvCounts();
  send_counts[x.me] = recv_counts[x.me] = 0;
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send,
                           PackBoxes(c.engine, cur, x.send, x.me, Sum(send_counts)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(cur.dtype(), {Sum(recv_counts)}));
  RESHARD_RETURN_IF_ERROR(c.comm.AllToAllV(c.step.group, send.data(), send_counts, recv.data(),
                                           recv_counts, cur.dtype()));
  // The kept piece and the received boxes tile the target block: no fill.
  RESHARD_ASSIGN_OR_RETURN(LocalTensor target, c.engine.Allocate(cur.dtype(), x.target_shape));
  const int item = ItemSize(cur.dtype());
  RESHARD_RETURN_IF_ERROR(CopyBox(c.engine, cur.data(), cur.shape(), Begins(x.send[x.me]),
                                  target.data(), target.shape(), Begins(x.recv[x.me]),
                                  Sizes(x.recv[x.me]), item));
  RESHARD_RETURN_IF_ERROR(PlaceBoxes(c.engine, recv, x.recv, x.me, target));
  c.stats.bytes_sent = Sum(send_counts) * item;
  c.stats.bytes_received = Sum(recv_counts) * item;
  return target;
}

}  // namespace reshard
