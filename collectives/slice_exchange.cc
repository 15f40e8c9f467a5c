#include "collectives/slice_exchange.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/tensor/box_copy.h"

namespace reshard {
namespace {

std::vector<int64_t> Begins(const Box& box, const Box& origin) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < box.size(); ++d) out.push_back(box[d].offset - origin[d].offset);
  return out;
}

// Whether `inner` (non-empty) lies in `outer`.
bool Contains(const Box& outer, const Box& inner) {
  for (size_t d = 0; d < inner.size(); ++d) {
    if (inner[d].offset < outer[d].offset ||
        inner[d].offset + inner[d].size > outer[d].offset + outer[d].size) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> Sizes(const Box& box) {
  std::vector<int64_t> out;
  for (const Slice& s : box) out.push_back(s.size);
  return out;
}

// One participant's routes, per round: to others by receiver, from others
// by sender (AllToAllV's buffers are in peer order; pieces between the same
// two participants keep the plan's order, so both ends pack them alike), and
// its local copy.
struct MyRoutes {
  std::vector<std::vector<const SliceRoute*>> sends, receives;
  const SliceRoute* local = nullptr;
};

MyRoutes RoutesOf(absl::Span<const SliceRoute> routes, absl::Span<const int64_t> route_rounds,
                  int64_t rounds, int64_t me) {
  MyRoutes m;
  m.sends.resize(rounds);
  m.receives.resize(rounds);
  for (size_t k = 0; k < routes.size(); ++k) {
    const SliceRoute& r = routes[k];
    const int64_t round = route_rounds.empty() ? 0 : route_rounds[k];
    if (r.sender == me && r.receiver == me) {
      m.local = &r;
    } else if (r.sender == me) {
      m.sends[round].push_back(&r);
    } else if (r.receiver == me) {
      m.receives[round].push_back(&r);
    }
  }
  for (auto& round : m.sends) {
    std::stable_sort(round.begin(), round.end(), [](const SliceRoute* a, const SliceRoute* b) {
      return a->receiver < b->receiver;
    });
  }
  for (auto& round : m.receives) {
    std::stable_sort(round.begin(), round.end(), [](const SliceRoute* a, const SliceRoute* b) {
      return a->sender < b->sender;
    });
  }
  return m;
}

// One AllToAllV: `sends` packed into one buffer, the received pieces copied
// into `out`; both buffers freed on return (spec §14 "Memory").
absl::Status ExchangeRound(const LocalTensor& in, const Box& held, const Box& wanted,
                           const std::vector<const SliceRoute*>& sends,
                           const std::vector<const SliceRoute*>& receives, DType dtype,
                           Communicator& comm, LocalTensor& out, CrossingStats* stats) {
  const int item = ItemSize(dtype);
  CopyEngine& engine = comm.copy_engine();
  const int64_t n = comm.mesh().num_ranks();
  std::vector<int64_t> send_counts(n, 0), recv_counts(n, 0);
  int64_t sent = 0, received = 0;
  for (const SliceRoute* r : sends) {
    send_counts[r->receiver] += BoxElements(r->box);
    sent += BoxElements(r->box);
  }
  for (const SliceRoute* r : receives) {
    recv_counts[r->sender] += BoxElements(r->box);
    received += BoxElements(r->box);
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, engine.Allocate(dtype, {sent}));
  char* at = static_cast<char*>(send.data());
  for (const SliceRoute* r : sends) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    // Spec §14 "Relaying": a box outside the held block was received into
    // the wanted one in an earlier round.
    const bool own = Contains(held, r->box);
    if (!own && !Contains(wanted, r->box)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "participant ", comm.rank(), ": a route sends a box it neither holds nor wants"));
    }
    const LocalTensor& from = own ? in : out;
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from.data(), from.shape(),
                                    Begins(r->box, own ? held : wanted), at, sizes,
                                    std::vector<int64_t>(sizes.size(), 0), sizes, item));
    at += BoxElements(r->box) * item;
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, engine.Allocate(dtype, {received}));
  RESHARD_RETURN_IF_ERROR(comm.AllToAllV(MeshDimSet::Single(0), send.data(), send_counts,
                                         recv.data(), recv_counts, dtype));
  const char* from = static_cast<const char*>(recv.data());
  for (const SliceRoute* r : receives) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from, sizes, std::vector<int64_t>(sizes.size(), 0),
                                    out.data(), out.shape(), Begins(r->box, wanted), sizes, item));
    from += BoxElements(r->box) * item;
  }
  if (stats != nullptr) {
    stats->bytes_sent += sent * item;
    stats->bytes_received += received * item;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           absl::Span<const int64_t> route_rounds, int64_t rounds,
                                           int64_t me, DType dtype, Communicator& comm,
                                           CrossingStats* stats) {
  const MyRoutes m = RoutesOf(routes, route_rounds, rounds, me);
  CopyEngine& engine = comm.copy_engine();
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(dtype, Sizes(wanted)));
  if (m.local != nullptr) {
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(m.local->box, held),
                                    out.data(), out.shape(), Begins(m.local->box, wanted),
                                    Sizes(m.local->box), ItemSize(dtype)));
  }
  for (int64_t round = 0; round < rounds; ++round) {
    RESHARD_RETURN_IF_ERROR(ExchangeRound(in, held, wanted, m.sends[round], m.receives[round],
                                          dtype, comm, out, stats));
  }
  return out;
}

absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           int64_t me, DType dtype, Communicator& comm,
                                           CrossingStats* stats) {
  return ExchangeSlices(in, held, wanted, routes, {}, 1, me, dtype, comm, stats);
}

}  // namespace reshard
