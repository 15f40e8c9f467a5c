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
// when it has none) and the routes from and to it.
struct Side {
  int64_t me = 0;
  Box held, wanted;
  std::vector<const SliceRoute*> sends, receives;  // by peer, ascending
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
  for (const SliceRoute& r : plan.routes) {
    if (r.sender == s.me && r.receiver == s.me) {
      s.local = &r;
    } else if (r.sender == s.me) {
      s.sends.push_back(&r);
    } else if (r.receiver == s.me) {
      s.receives.push_back(&r);
    }
  }
  auto by_receiver = [](const SliceRoute* a, const SliceRoute* b) {
    return a->receiver < b->receiver;
  };
  auto by_sender = [](const SliceRoute* a, const SliceRoute* b) { return a->sender < b->sender; };
  std::sort(s.sends.begin(), s.sends.end(), by_receiver);
  std::sort(s.receives.begin(), s.receives.end(), by_sender);
  return s;
}

// Spec §14: the crossing exchange on the union communicator.
absl::StatusOr<LocalTensor> Cross(const LocalTensor& in, const CrossMeshPlan& plan, const Side& s,
                                  Communicator& comm, CrossingStats* stats) {
  const DType dtype = plan.crossing_src.dtype();
  const int item = ItemSize(dtype);
  CopyEngine& engine = comm.copy_engine();
  const int64_t n = static_cast<int64_t>(plan.participants.size());
  std::vector<int64_t> send_counts(n, 0), recv_counts(n, 0);
  for (const SliceRoute* r : s.sends) send_counts[r->receiver] = BoxElements(r->box);
  for (const SliceRoute* r : s.receives) recv_counts[r->sender] = BoxElements(r->box);
  int64_t sent = 0, received = 0;
  for (int64_t c : send_counts) sent += c;
  for (int64_t c : recv_counts) received += c;
  RESHARD_ASSIGN_OR_RETURN(LocalTensor send, engine.Allocate(dtype, {sent}));
  char* at = static_cast<char*>(send.data());
  for (const SliceRoute* r : s.sends) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(r->box, s.held), at,
                                    sizes, std::vector<int64_t>(sizes.size(), 0), sizes, item));
    at += BoxElements(r->box) * item;
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor recv, engine.Allocate(dtype, {received}));
  RESHARD_RETURN_IF_ERROR(comm.AllToAllV(MeshDimSet::Single(0), send.data(), send_counts,
                                         recv.data(), recv_counts, dtype));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(dtype, Sizes(s.wanted)));
  if (s.local != nullptr) {
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, in.data(), in.shape(), Begins(s.local->box, s.held),
                                    out.data(), out.shape(), Begins(s.local->box, s.wanted),
                                    Sizes(s.local->box), item));
  }
  const char* from = static_cast<const char*>(recv.data());
  for (const SliceRoute* r : s.receives) {
    const std::vector<int64_t> sizes = Sizes(r->box);
    RESHARD_RETURN_IF_ERROR(CopyBox(engine, from, sizes, std::vector<int64_t>(sizes.size(), 0),
                                    out.data(), out.shape(), Begins(r->box, s.wanted), sizes,
                                    item));
    from += BoxElements(r->box) * item;
  }
  if (stats != nullptr) *stats = {sent * item, received * item};
  return out;
}

}  // namespace

absl::Status RedistributeAcross(LocalTensor& t, const CrossMeshRequest& request,
                                const CrossMeshPlan& plan, int64_t global_rank,
                                Communicator* src_comm, Communicator* dst_comm,
                                Communicator& union_comm, CrossingStats* stats) {
  const int64_t src_index = IndexOf(plan.src_ranks, global_rank);
  const int64_t dst_index = IndexOf(plan.dst_ranks, global_rank);
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
