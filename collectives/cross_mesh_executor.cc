#include "collectives/cross_mesh_executor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/tensor/box_copy.h"

namespace reshard {
namespace {

// Position of `rank` in `ranks`, or -1.
int64_t IndexOf(const std::vector<int64_t>& ranks, int64_t rank) {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : it - ranks.begin();
}

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

// One participant's side of the crossing: its held and wanted blocks (empty
// when it has none) and, per round, the routes from and to it.
struct Side {
  int64_t me = 0;
  Box held, wanted;
  // Per round, by peer ascending; pieces between the same two participants
  // in the plan's order, so sender and receiver pack and unpack them alike.
  std::vector<std::vector<const SliceRoute*>> sends, receives;
  const SliceRoute* local = nullptr;
};

Side SideOf(const CrossMeshPlan& plan, int64_t global_rank, int64_t src_index, int64_t dst_index) {
  Side s;
  s.me = IndexOf(plan.participants, global_rank);
  const Box nothing(plan.crossing_src.global_shape().size());
  s.held = src_index < 0
               ? nothing
               : BlockOf(plan.crossing_src, plan.crossing_src.mesh().Coordinate(src_index));
  s.wanted = dst_index < 0
                 ? nothing
                 : BlockOf(plan.crossing_dst, plan.crossing_dst.mesh().Coordinate(dst_index));
  s.sends.resize(plan.rounds);
  s.receives.resize(plan.rounds);
  for (size_t k = 0; k < plan.routes.size(); ++k) {
    const SliceRoute& r = plan.routes[k];
    if (r.sender == s.me && r.receiver == s.me) {
      s.local = &r;
    } else if (r.sender == s.me) {
      s.sends[plan.route_rounds[k]].push_back(&r);
    } else if (r.receiver == s.me) {
      s.receives[plan.route_rounds[k]].push_back(&r);
    }
  }
  auto by_receiver = [](const SliceRoute* a, const SliceRoute* b) {
    return a->receiver < b->receiver;
  };
  auto by_sender = [](const SliceRoute* a, const SliceRoute* b) { return a->sender < b->sender; };
  for (auto& round : s.sends) std::stable_sort(round.begin(), round.end(), by_receiver);
  for (auto& round : s.receives) std::stable_sort(round.begin(), round.end(), by_sender);
  return s;
}

// One round of the crossing (spec §14 "Memory"): this participant's sends
// packed into one buffer, one AllToAllV on the union communicator, the
// received pieces copied into `out`; both buffers freed on return.
absl::Status CrossRound(const LocalTensor& in, const Side& s, int64_t round, DType dtype,
                        Communicator& comm, LocalTensor& out, CrossingStats* moved) {
  const int item = ItemSize(dtype);
  CopyEngine& engine = comm.copy_engine();
  const int64_t n = comm.mesh().num_ranks();
  std::vector<int64_t> send_counts(n, 0), recv_counts(n, 0);
  int64_t sent = 0, received = 0;
  for (const SliceRoute* r : s.sends[round]) {
    send_counts[r->receiver] += BoxElements(r->box);
    sent += BoxElements(r->box);
  }
  for (const SliceRoute* r : s.receives[round]) {
    recv_counts[r->sender] += BoxElements(r->box);
    received += BoxElements(r->box);
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, engine.Allocate(dtype, {sent}));
  char* at = static_cast<char*>(send.data());
  for (const SliceRoute* r : s.sends[round]) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(r->box, s.held), at,
                                    sizes, std::vector<int64_t>(sizes.size(), 0), sizes, item));
    at += BoxElements(r->box) * item;
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, engine.Allocate(dtype, {received}));
  RESHARD_RETURN_IF_ERROR(comm.AllToAllV(MeshDimSet::Single(0), send.data(), send_counts,
                                         recv.data(), recv_counts, dtype));
  const char* from = static_cast<const char*>(recv.data());
  for (const SliceRoute* r : s.receives[round]) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from, sizes, std::vector<int64_t>(sizes.size(), 0),
                                    out.data(), out.shape(), Begins(r->box, s.wanted), sizes,
                                    item));
    from += BoxElements(r->box) * item;
  }
  moved->bytes_sent += sent * item;
  moved->bytes_received += received * item;
  return absl::OkStatus();
}

// Spec §14: the crossing on the union communicator, the local copy first,
// then plan.rounds exchanges.
absl::StatusOr<LocalTensor> Cross(const LocalTensor& in, const CrossMeshPlan& plan, const Side& s,
                                  Communicator& comm, CrossingStats* stats) {
  const DType dtype = plan.crossing_src.dtype();
  CopyEngine& engine = comm.copy_engine();
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(dtype, Sizes(s.wanted)));
  if (s.local != nullptr) {
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(s.local->box, s.held),
                                    out.data(), out.shape(), Begins(s.local->box, s.wanted),
                                    Sizes(s.local->box), ItemSize(dtype)));
  }
  CrossingStats moved;
  for (int64_t round = 0; round < plan.rounds; ++round) {
    RESHARD_RETURN_IF_ERROR(CrossRound(in, s, round, dtype, comm, out, &moved));
  }
  if (stats != nullptr) *stats = moved;
  return out;
}

}  // namespace

absl::Status RedistributeAcross(LocalTensor& t, const CrossMeshRequest& request,
                                const CrossMeshPlan& plan, int64_t global_rank,
                                Communicator* src_comm, Communicator* dst_comm,
                                Communicator& union_comm, CrossingStats* stats) {
  const int64_t src_index = IndexOf(plan.src_ranks, global_rank);
  const int64_t dst_index = IndexOf(plan.dst_ranks, global_rank);
  const bool rounds_fit = plan.rounds >= 1 && plan.route_rounds.size() == plan.routes.size() &&
                          std::all_of(plan.route_rounds.begin(), plan.route_rounds.end(),
                                      [&](int64_t r) { return r >= 0 && r < plan.rounds; });
  if (!rounds_fit) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", global_rank,
                     ": the plan's route_rounds do not fit its routes and rounds (plan it "
                     "with PlanCrossMesh)"));
  }
  const Side side = SideOf(plan, global_rank, src_index, dst_index);
  if (side.me < 0 || union_comm.rank() != side.me ||
      union_comm.mesh().num_ranks() != static_cast<int64_t>(plan.participants.size()) ||
      (src_index >= 0) != (src_comm != nullptr) || (dst_index >= 0) != (dst_comm != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", global_rank,
        ": the communicators do not fit the plan (a source mesh one for "
        "source ranks only, a destination one for destination ranks only, a union one)"));
  }
  if (src_comm != nullptr) {
    RESHARD_RETURN_IF_ERROR(
        Redistribute(t, request.src, plan.crossing_src, plan.before, *src_comm));
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor crossed, Cross(t, plan, side, union_comm, stats));
  t = std::move(crossed);
  if (dst_comm != nullptr) {
    RESHARD_RETURN_IF_ERROR(Redistribute(t, plan.crossing_dst, request.dst, plan.after, *dst_comm));
  }
  return absl::OkStatus();
}

}  // namespace reshard
