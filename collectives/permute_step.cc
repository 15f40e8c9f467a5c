// The permute (spec §4.2): this rank packs the pieces of its source block
// that other members' target blocks hold, exchanges them with AllToAllV
// (planner/steps/permute_exchange.h says what moves), and assembles its target
// block from the pieces it receives. No padding: each element moves once.
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/step_runners.h"
#include "collectives/tensor/box_copy.h"
#include "planner/steps/permute_exchange.h"

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

// A new 1-D tensor holding the boxes of `block`, one after another.
absl::StatusOr<LocalTensor> PackBoxes(CopyEngine& engine, const LocalTensor& block,
                                      const std::vector<Box>& boxes, int64_t total) {
  RESHARD_ASSIGN_OR_RETURN(LocalTensor packed, engine.Allocate(block.dtype(), {total}));
  const int item = ItemSize(block.dtype());
  char* at = static_cast<char*>(packed.data());
  for (const Box& box : boxes) {
    const std::vector<int64_t> sizes = Sizes(box);
    const std::vector<int64_t> origin(sizes.size(), 0);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, block.data(), block.shape(), Begins(box), at, sizes,
                                    origin, sizes, item));
    at += BoxElements(box) * item;
  }
  return packed;
}

// Places the boxes packed one after another in `packed` into `block`.
absl::Status PlaceBoxes(CopyEngine& engine, const LocalTensor& packed,
                        const std::vector<Box>& boxes, LocalTensor& block) {
  const int item = ItemSize(block.dtype());
  const char* at = static_cast<const char*>(packed.data());
  for (const Box& box : boxes) {
    const std::vector<int64_t> sizes = Sizes(box);
    const std::vector<int64_t> origin(sizes.size(), 0);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, at, sizes, origin, block.data(), block.shape(),
                                    Begins(box), sizes, item));
    at += BoxElements(box) * item;
  }
  return absl::OkStatus();
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

}  // namespace

absl::StatusOr<LocalTensor> RunPermute(LocalTensor cur, StepContext& c) {
  const DeviceMesh& mesh = c.comm.mesh();
  const PermuteExchange x =
      PermuteExchangeOf(c.state, c.step, mesh, c.L, mesh.Coordinate(c.comm.rank()));
  if (cur.shape() != x.source_shape) {
    return absl::InternalError(absl::StrFormat("local tensor %s, expected the source block [%s]",
                                               cur.DebugString(),
                                               absl::StrJoin(x.source_shape, ",")));
  }
  const std::vector<int64_t> send_counts = x.SendCounts();
  const std::vector<int64_t> recv_counts = x.RecvCounts();
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, PackBoxes(c.engine, cur, x.send, Sum(send_counts)));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, c.engine.Allocate(cur.dtype(), {Sum(recv_counts)}));
  RESHARD_RETURN_IF_ERROR(c.comm.AllToAllV(c.step.group, send.data(), send_counts, recv.data(),
                                           recv_counts, cur.dtype()));
  // The received boxes tile the target block, so no fill is needed.
  RESHARD_ASSIGN_OR_RETURN(LocalTensor target, c.engine.Allocate(cur.dtype(), x.target_shape));
  RESHARD_RETURN_IF_ERROR(PlaceBoxes(c.engine, recv, x.recv, target));
  const int item = ItemSize(cur.dtype());
  c.stats.bytes_sent = (Sum(send_counts) - send_counts[x.me]) * item;
  c.stats.bytes_received = (Sum(recv_counts) - recv_counts[x.me]) * item;
  return target;
}

}  // namespace reshard
