#include "collectives/slice_exchange.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
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

// Spec §14 "Rails": the boxes brought to this participant that it does not
// want, kept aside from the round that brings one until its last send.
class StagedBoxes {
 public:
  StagedBoxes(const MyRoutes& m, const Box& held, const Box& wanted) {
    for (const auto& round : m.sends) {
      for (const SliceRoute* r : round) {
        if (!BoxContains(held, r->box) && !BoxContains(wanted, r->box)) ++sends_left_[r->box];
      }
    }
  }
  void Keep(const Box& box, LocalTensor t) { kept_.insert_or_assign(box, std::move(t)); }
  // The kept tensor of exactly `box`, or null.
  const LocalTensor* Find(const Box& box) const {
    const auto it = kept_.find(box);
    return it == kept_.end() ? nullptr : &it->second;
  }
  // One send of `box` packed: after its last, its memory is freed.
  void Sent(const Box& box) {
    if (--sends_left_[box] == 0) kept_.erase(box);
  }

 private:
  absl::flat_hash_map<Box, int64_t> sends_left_;
  absl::flat_hash_map<Box, LocalTensor> kept_;
};

// Where route `r`'s box is packed from: `in` (held), `out` (wanted, an
// earlier round brought it: a relay) or a box kept aside (a stager); its
// begins in that tensor.
absl::StatusOr<std::pair<const LocalTensor*, std::vector<int64_t>>> SourceOf(
    const SliceRoute& r, const LocalTensor& in, const Box& held, const LocalTensor& out,
    const Box& wanted, const StagedBoxes& staged, int64_t me) {
  if (BoxContains(held, r.box)) return std::make_pair(&in, Begins(r.box, held));
  if (BoxContains(wanted, r.box)) return std::make_pair(&out, Begins(r.box, wanted));
  if (const LocalTensor* kept = staged.Find(r.box)) {
    return std::make_pair(kept, std::vector<int64_t>(r.box.size(), 0));
  }
  return absl::InvalidArgumentError(absl::StrCat("participant ", me,
                                                 ": a route sends a box it neither holds, "
                                                 "wants nor was brought in an earlier round"));
}

// One AllToAllV: `sends` packed into one buffer, the received pieces copied
// into `out` or kept aside (`staged`); both buffers freed on return (spec
// §14 "Memory").
absl::Status ExchangeRound(const LocalTensor& in, const Box& held, const Box& wanted,
                           const std::vector<const SliceRoute*>& sends,
                           const std::vector<const SliceRoute*>& receives, DType dtype,
                           Communicator& comm, MeshDimSet group, int64_t me, LocalTensor& out,
                           StagedBoxes& staged, CrossingStats* stats) {
  const int item = ItemSize(dtype);
  CopyEngine& engine = comm.copy_engine();
  const int64_t n = comm.mesh().GroupSize(group);
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
    RESHARD_ASSIGN_OR_RETURN(const auto from, SourceOf(*r, in, held, out, wanted, staged, me));
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from.first->data(), from.first->shape(), from.second,
                                    at, sizes, std::vector<int64_t>(sizes.size(), 0), sizes, item));
    at += BoxElements(r->box) * item;
    if (from.first != &in && from.first != &out) staged.Sent(r->box);
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, engine.Allocate(dtype, {received}));
  RESHARD_RETURN_IF_ERROR(
      comm.AllToAllV(group, send.data(), send_counts, recv.data(), recv_counts, dtype));
  const char* from = static_cast<const char*>(recv.data());
  for (const SliceRoute* r : receives) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    const std::vector<int64_t> zeros(sizes.size(), 0);
    if (BoxContains(wanted, r->box)) {
      RESHARD_RETURN_IF_ERROR(CopyBox(engine, from, sizes, zeros, out.data(), out.shape(),
                                      Begins(r->box, wanted), sizes, item));
    } else {  // spec §14 "Rails": to pass on in a later round
      RESHARD_ASSIGN_OR_RETURN(LocalTensor kept, engine.Allocate(dtype, sizes));
      RESHARD_RETURN_IF_ERROR(
          CopyBox(engine, from, sizes, zeros, kept.data(), sizes, zeros, sizes, item));
      staged.Keep(r->box, std::move(kept));
    }
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
                                           MeshDimSet group, CrossingStats* stats) {
  const MyRoutes m = RoutesOf(routes, route_rounds, rounds, me);
  CopyEngine& engine = comm.copy_engine();
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(dtype, Sizes(wanted)));
  if (m.local != nullptr) {
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(m.local->box, held),
                                    out.data(), out.shape(), Begins(m.local->box, wanted),
                                    Sizes(m.local->box), ItemSize(dtype)));
  }
  StagedBoxes staged(m, held, wanted);
  for (int64_t round = 0; round < rounds; ++round) {
    RESHARD_RETURN_IF_ERROR(ExchangeRound(in, held, wanted, m.sends[round], m.receives[round],
                                          dtype, comm, group, me, out, staged, stats));
  }
  return out;
}

absl::StatusOr<LocalTensor> ExchangeSlices(const LocalTensor& in, const Box& held,
                                           const Box& wanted, absl::Span<const SliceRoute> routes,
                                           int64_t me, DType dtype, Communicator& comm,
                                           CrossingStats* stats) {
  return ExchangeSlices(in, held, wanted, routes, {}, 1, me, dtype, comm, MeshDimSet::Single(0),
                        stats);
}

}  // namespace reshard
