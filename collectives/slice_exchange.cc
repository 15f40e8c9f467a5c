#include "collectives/slice_exchange.h"

#include <algorithm>
#include <vector>

#include "base/status_macros.h"
#include "collectives/tensor/box_copy.h"

namespace reshard {
namespace {

std::vector<int64_t> Begins(const Box& box, const Box& origin) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < box.size(); ++d) out.push_back(box[d].offset - origin[d].offset);
  return out;
}

std::vector<int64_t> Sizes(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.size);
  return out;
}

// One participant's routes: to others by receiver, from others by sender,
// and its local copy (AllToAllV's buffers are in peer order).
struct MyRoutes {
  std::vector<const SliceRoute*> sends, receives;
  const SliceRoute* local = nullptr;
};

MyRoutes RoutesOf(absl::Span<const SliceRoute> routes, int64_t me) {
  MyRoutes m;
  for (const SliceRoute& r : routes) {
    if (r.sender == me && r.receiver == me) {
      m.local = &r;
    } else if (r.sender == me) {
      m.sends.push_back(&r);
    } else if (r.receiver == me) {
      m.receives.push_back(&r);
    }
  }
  std::sort(m.sends.begin(), m.sends.end(),
            [](const SliceRoute* a, const SliceRoute* b) { return a->receiver < b->receiver; });
  std::sort(m.receives.begin(), m.receives.end(),
            [](const SliceRoute* a, const SliceRoute* b) { return a->sender < b->sender; });
  return m;
}

}  // namespace

absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           int64_t me, DType dtype, Communicator& comm,
                                           CrossingStats* stats) {
  const MyRoutes m = RoutesOf(routes, me);
  const int item = ItemSize(dtype);
  CopyEngine& engine = comm.copy_engine();
  const int64_t n = comm.mesh().num_ranks();
  std::vector<int64_t> send_counts(n, 0), recv_counts(n, 0);
  for (const SliceRoute* r : m.sends) send_counts[r->receiver] = BoxElements(r->box);
  for (const SliceRoute* r : m.receives) recv_counts[r->sender] = BoxElements(r->box);
  int64_t sent = 0, received = 0;
  for (int64_t c : send_counts) sent += c;
  for (int64_t c : recv_counts) received += c;
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, engine.Allocate(dtype, {sent}));
  char* at = static_cast<char*>(send.data());
  for (const SliceRoute* r : m.sends) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(r->box, held), at, sizes,
                                    std::vector<int64_t>(sizes.size(), 0), sizes, item));
    at += BoxElements(r->box) * item;
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, engine.Allocate(dtype, {received}));
  RESHARD_RETURN_IF_ERROR(comm.AllToAllV(MeshDimSet::Single(0), send.data(), send_counts,
                                         recv.data(), recv_counts, dtype));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(dtype, Sizes(wanted)));
  if (m.local != nullptr) {
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(m.local->box, held),
                                    out.data(), out.shape(), Begins(m.local->box, wanted),
                                    Sizes(m.local->box), item));
  }
  const char* from = static_cast<const char*>(recv.data());
  for (const SliceRoute* r : m.receives) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from, sizes, std::vector<int64_t>(sizes.size(), 0),
                                    out.data(), out.shape(), Begins(r->box, wanted), sizes, item));
    from += BoxElements(r->box) * item;
  }
  if (stats != nullptr) {
    stats->bytes_sent += sent * item;
    stats->bytes_received += received * item;
  }
  return out;
}

}  // namespace reshard
