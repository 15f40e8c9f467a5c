#include "planner/costs/nccl/nccl_cost_model.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/costs/block_bytes.h"
#include "planner/costs/bounds/shard_set_blocks.h"
#include "planner/costs/cache_owner_id.h"
#include "planner/costs/host_span.h"
#include "planner/costs/nccl/nccl_tuning.h"
#include "planner/layout/chunk.h"
#include "planner/steps/link_load.h"
#include "planner/steps/logical_shape.h"
#include "planner/steps/permute_exchange.h"
#include "planner/steps/rail_staging.h"
#include "planner/steps/step_bytes.h"

namespace reshard {
namespace {

constexpr int kNumGroups = 1 << kMaxMeshDims;

// The cheapest `messages` peer messages of 0 bytes on `s`: on NVLink where
// rank 0's host holds other members (a round over the network costs at
// least an NVLink round: nccl_tuning.cc), else over the network (every
// member on its own host: HostSpanOf).
NcclP2pCall LeastMessages(const HostSpan& s, int64_t messages) {
  NcclP2pCall call;
  (s.local > 1 ? call.intra_peers : call.inter_peers) = messages;
  return call;
}

// Spec §6.4: a permute or an exchange is one grouped send/recv, priced from
// its routes (§11.1) per link (link_load.h): the busiest member's peers and
// bytes on NVLink (peers on its host) and over its NIC (peers on other
// hosts), at least one message, over the communicator `s`. The one rule for
// permute and exchange steps and cross-mesh crossings (spec §14).
double ExchangeTimeUs(const NcclP2pLinks& links, const HostSpan& s, const LinkLoad& load,
                      double itemsize) {
  if (s.ranks <= 1) return 0;
  if (load.intra_messages + load.inter_messages == 0) {
    return NcclP2pTimeUs(links, LeastMessages(s, 1));
  }
  NcclP2pCall call;
  call.intra_peers = load.intra_messages;
  call.inter_peers = load.inter_messages;
  call.intra_bytes = itemsize * static_cast<double>(load.intra);
  call.inter_bytes = itemsize * static_cast<double>(load.inter);
  return NcclP2pTimeUs(links, call);
}

// A lower bound on ExchangeTimeUs over `s` when the busiest member moves at
// least `bytes` (the more of sent and received) in at least `messages` >= 1
// messages (spec §5.2 item 7). A member's messages and bytes are at most
// its NVLink ones plus its network ones, so the LinkLoad's are at least
// these. Latency: NcclP2pTimeUs's grows with the peers, and a network round
// costs at least an NVLink round, so LeastMessages is the least. Transfer:
// within one host all on NVLink; on `one_rail` (OnOneRail) all over the
// network; else whatever the split (PXN's NVLink hops count on NVLink) the
// slower link takes at least the bytes over the two bandwidths' sum. Shrunk
// by a millionth for rounding. `latency` is the messages' NcclP2pTimeUs at
// 0 bytes (ExchangeTimeLowerBoundUs finds it; the mesh's tables keep one
// message's).
double ExchangeLowerBoundAtLatency(double latency, const NcclP2pLinks& links, const HostSpan& s,
                                   bool one_rail, double bytes) {
  const double kb = bytes / 1000;
  const double transfer = s.local == s.ranks ? kb / links.nvlink_gbps
                          : one_rail         ? kb / links.net_gbps
                                             : kb / (links.nvlink_gbps + links.net_gbps);
  return (latency + transfer) * (1 - 1e-6);
}

double ExchangeTimeLowerBoundUs(const NcclP2pLinks& links, const HostSpan& s, bool one_rail,
                                int64_t messages, double bytes) {
  if (s.ranks <= 1) return 0;
  const double lat = NcclP2pTimeUs(links, LeastMessages(s, std::max<int64_t>(1, messages)));
  return ExchangeLowerBoundAtLatency(lat, links, s, one_rail, bytes);
}

// NcclTuning(profile, ranks, nodes), kept per thread: `reshard batch` binds
// the model once per line, and its lines' groups span the same (ranks,
// nodes) again and again (a tuning costs about as much as pricing a few
// dozen steps). An explicit cache, emptied when the profile changes or past
// kMaxTunings.
const NcclTuning& TuningFor(const NcclProfile& profile, int64_t ranks, int64_t nodes) {
  constexpr size_t kMaxTunings = 4096;  // 1.2 KB each
  thread_local struct {
    NcclProfile profile;
    absl::flat_hash_map<std::pair<int64_t, int64_t>, NcclTuning> tunings;
  } cache;
  if (cache.profile != profile || cache.tunings.size() >= kMaxTunings) {
    cache.profile = profile;
    cache.tunings.clear();
  }
  const std::pair<int64_t, int64_t> key(ranks, nodes);
  auto it = cache.tunings.find(key);
  if (it == cache.tunings.end()) {
    it = cache.tunings.emplace(key, NcclTuning(profile, ranks, nodes)).first;
  }
  return it->second;
}

// The peer messages of an all_to_all of a `bytes` local block: 1/n of it
// to each peer.
NcclP2pCall AllToAll(const HostSpan& s, double bytes) {
  const double share = bytes / static_cast<double>(s.ranks);
  NcclP2pCall call;
  call.intra_peers = s.local - 1;
  call.inter_peers = s.ranks - s.local;
  call.intra_bytes = share * static_cast<double>(call.intra_peers);
  call.inter_bytes = share * static_cast<double>(call.inter_peers);
  return call;
}

// NCCL's price of one call of `kind` over the communicator `s` (table `t`)
// moving `bytes` (§6.2's bytes: NCCL's nBytes for collectives, the local
// block for all_to_all).
double CallTimeUs(const NcclTuning& t, const HostSpan& s, const NcclP2pLinks& links, StepKind kind,
                  double bytes) {
  if (s.ranks <= 1) return 0;
  switch (kind) {
    case StepKind::kAllGather:
      return t.Time(NcclFunc::kAllGather, bytes).time_us;
    case StepKind::kReduceScatter:
      return t.Time(NcclFunc::kReduceScatter, bytes).time_us;
    case StepKind::kAllReduce:
      return t.Time(NcclFunc::kAllReduce, bytes).time_us;
    case StepKind::kAllToAll:
      return NcclP2pTimeUs(links, AllToAll(s, bytes));
    // The least a permute or an exchange costs: one message (StepCost
    // prices each by its routes, ExchangeCost).
    case StepKind::kPermute:
    case StepKind::kExchange:
      return NcclP2pTimeUs(links, LeastMessages(s, 1));
    case StepKind::kChunk:
    case StepKind::kPartition:
      return 0;
  }
  return 0;
}

// What a bound model needs of the mesh alone, whatever the tensor: per set
// of mesh dims its communicator and NCCL table, and LowerBound's shares.
struct MeshTables {
  HostSpan span[kNumGroups];
  std::vector<NcclTuning> tunings;  // by the group's bits
  double bound[kMaxMeshDims][kNumStepKinds] = {};
  // The latency of one message on the group (an exchange's least), by bits.
  double one_message[kNumGroups] = {};
  // Whether the group's members share one local rank (OnOneRail), by bits.
  bool one_rail[kNumGroups] = {};
};

MeshTables MakeMeshTables(const NcclProfile& profile, const NcclP2pLinks& links,
                          const DeviceMesh& mesh, int64_t devices_per_host) {
  MeshTables tables;
  const int groups = 1 << mesh.ndim();
  tables.tunings.reserve(groups);
  double min_lat[kNumStepKinds] = {};
  bool seen = false;
  for (int bits = 0; bits < groups; ++bits) {
    const HostSpan& s = tables.span[bits] =
        HostSpanOf(mesh, MeshDimSet::FromBits(static_cast<uint8_t>(bits)), devices_per_host);
    const NcclTuning& t = tables.tunings.emplace_back(TuningFor(profile, s.ranks, s.nodes));
    if (s.ranks <= 1) continue;
    tables.one_rail[bits] = OnOneRail(
        mesh.GroupOf(MeshDimSet::FromBits(static_cast<uint8_t>(bits)), 0), devices_per_host);
    double lat[kNumStepKinds] = {};
    for (StepKind kind : kAllStepKinds) {
      lat[static_cast<int>(kind)] = CallTimeUs(t, s, links, kind, 0);
    }
    tables.one_message[bits] = lat[static_cast<int>(StepKind::kExchange)];
    for (int k = 0; k < kNumStepKinds; ++k) {
      min_lat[k] = seen ? std::min(min_lat[k], lat[k]) : lat[k];
    }
    seen = true;
  }
  // Spec §6.4 "bounds": a call on a group holding mesh dim m (size > 1)
  // costs at least the smallest latency of any group; the share of it
  // per mesh dim sums to at most that over any group.
  // An exchange may replace any communicating step (cost_model.h): its
  // bound is the smallest latency of every communicating kind.
  double min_any = 0;
  bool any = false;
  for (StepKind kind : kAllStepKinds) {
    if (!IsCommunicating(kind)) continue;
    const double lat = min_lat[static_cast<int>(kind)];
    min_any = any ? std::min(min_any, lat) : lat;
    any = true;
  }
  min_lat[static_cast<int>(StepKind::kExchange)] = min_any;
  int sharing = 0;
  for (int m = 0; m < mesh.ndim(); ++m) sharing += mesh.size(m) > 1;
  for (int m = 0; m < mesh.ndim(); ++m) {
    for (int k = 0; k < kNumStepKinds; ++k) {
      tables.bound[m][k] = mesh.size(m) > 1 ? min_lat[k] / sharing : 0;
    }
  }
  return tables;
}

// MakeMeshTables, kept per thread as TuningFor's tunings are: a batch's
// lines share meshes, and a mesh's tables (its groups' host spans above all)
// cost as much as the rest of binding the model. Shared, so that a bound
// model keeps its tables when the cache is emptied.
std::shared_ptr<const MeshTables> MeshTablesFor(const NcclProfile& profile,
                                                const NcclP2pLinks& links, const DeviceMesh& mesh,
                                                int64_t devices_per_host) {
  constexpr size_t kMaxMeshes = 256;  // about 30 KB each on 4-D meshes: 8 MB at most
  using Key = std::pair<std::vector<int64_t>, int64_t>;
  thread_local struct {
    NcclProfile profile;
    absl::flat_hash_map<Key, std::shared_ptr<const MeshTables>> tables;
  } cache;
  if (cache.profile != profile || cache.tables.size() >= kMaxMeshes) {
    cache.profile = profile;
    cache.tables.clear();
  }
  Key key(mesh.sizes(), devices_per_host);
  std::shared_ptr<const MeshTables>& tables = cache.tables[key];
  if (tables == nullptr) {
    tables =
        std::make_shared<const MeshTables>(MakeMeshTables(profile, links, mesh, devices_per_host));
  }
  return tables;
}

// Recent call prices per thread, by (model, kind, group, bytes): a search
// prices the same call from many states (one block size on one group), and
// NCCL's tuning model takes a few hundred instructions per call. A slot per
// key hash; a price is a pure function of its key, so a hit is exact.
class CallTimeMemo {
 public:
  template <typename Price>
  double Get(uint64_t model, StepKind kind, int bits, double bytes, Price price) {
    uint64_t raw;
    std::memcpy(&raw, &bytes, sizeof raw);
    const uint64_t tag = (model << 12) | (uint64_t{static_cast<uint8_t>(kind)} << 8) |
                         static_cast<uint64_t>(bits & 0xff);
    Entry& e = entries_[((raw ^ tag) * 0x9e3779b97f4a7c15ull) >> (64 - kLogSlots)];
    if (e.tag != tag || e.bytes != raw) e = {tag, raw, price()};
    return e.time;
  }

 private:
  static constexpr int kLogSlots = 9;
  struct Entry {
    uint64_t tag = 0;  // model 0 is none
    uint64_t bytes = 0;
    double time = 0;
  };
  Entry entries_[1 << kLogSlots];
};

// Spec §6.4, bound to one problem: one NCCL table per set of mesh dims
// (at most 2^8, its mesh's MeshTables), so that StepCost only looks up and
// compares.
class NcclCosts : public BoundCostModel {
 public:
  NcclCosts(const CostProblem& p, const NcclProfile& profile, int64_t devices_per_host)
      : bytes_(p),
        mesh_(p.mesh),
        global_shape_(p.global_shape),
        itemsize_(p.itemsize),
        links_(NcclP2pLinksFor(profile)),
        memory_bytes_per_us_(profile.memory_gbps * 1e3),
        devices_per_host_(devices_per_host),
        tables_(MeshTablesFor(profile, links_, p.mesh, devices_per_host)) {
    if (p.mesh.ndim() <= ShardSetBlocks::kMaxDims) blocks_.emplace(p);
  }

  double StepCost(const DistState& current, const Step& step) const override {
    const int bits = step.group.bits();
    if (step.kind == StepKind::kExchange || step.kind == StepKind::kPermute) {
      return ExchangeCost(current, step, bits);
    }
    const double bytes = bytes_(current, step, tables_->span[bits].ranks);
    if (!IsCommunicating(step.kind)) return bytes / memory_bytes_per_us_;
    return CallTime(step.kind, bits, bytes);
  }

  double LowerBound(StepKind kind, int mesh_dim) const override {
    return tables_->bound[mesh_dim][static_cast<int>(kind)];
  }

  // Spec §6.4 "bounds": a call on a group costs at least its own
  // communicator's price at the fewest bytes its source's shard set allows.
  const ShardSetBlocks* group_blocks() const override {
    return blocks_.has_value() ? &*blocks_ : nullptr;
  }
  double GroupLowerBoundAt(unsigned shard_set, StepKind kind, MeshDimSet group) const override {
    const int bits = group.bits();
    const HostSpan& s = tables_->span[bits];
    if (s.ranks <= 1 || !IsCommunicating(kind)) return 0;
    const double bytes = blocks_->MinBytes(shard_set);
    const NcclTuning& t = tables_->tunings[bits];
    switch (kind) {
      case StepKind::kAllGather:
        return t.TimeLowerBound(NcclFunc::kAllGather, bytes * static_cast<double>(s.ranks));
      case StepKind::kReduceScatter:
        return t.TimeLowerBound(NcclFunc::kReduceScatter, bytes);
      case StepKind::kAllReduce:
        return t.TimeLowerBound(NcclFunc::kAllReduce, bytes);
      case StepKind::kAllToAll:
        return NcclP2pTimeUs(links_, AllToAll(s, bytes));
      default:  // a permute's or an exchange's least: one message
        return tables_->one_message[bits];
    }
  }
  // A local step writes its output block (the input, for a partition),
  // which holds at least MinBytes of the shard set after it.
  double LocalLowerBoundAt(unsigned shard_set) const override {
    return blocks_->MinBytes(shard_set) / memory_bytes_per_us_;
  }
  // ExchangeTimeLowerBoundUs of one message of `received` elements.
  double ExchangeLowerBoundAt(MeshDimSet group, int64_t received) const override {
    const int bits = group.bits();
    const HostSpan& s = tables_->span[bits];
    if (s.ranks <= 1) return 0;
    return ExchangeLowerBoundAtLatency(tables_->one_message[bits], links_, s,
                                       tables_->one_rail[bits],
                                       itemsize_ * static_cast<double>(received));
  }

  // An exchange's routes are most of native planning's time (spec §5.2
  // item 7): bound it by its first member's received bytes and senders instead.
  std::optional<double> DeferredCostBound(const DistState& current,
                                          const Step& step) const override {
    // A staged permute costs at least one message (spec §11.2).
    if (step.kind == StepKind::kPermute && step.staging.staged()) {
      return tables_->one_message[step.group.bits()] * (1 - 1e-6);
    }
    return ExchangeBound(current, step, [&](absl::Span<const int64_t> logical) {
      const FirstMemberReceipt receipt = FirstMemberReceiptOf(current, step, mesh_, logical);
      int64_t elements = receipt.elements;
      if (blocks_.has_value()) {
        // The members' average may be more (ShardSetBlocks).
        const unsigned bits = step.group.bits();
        unsigned goal_shard = current.ShardSet() & ~bits;
        for (int i = 0; i < step.entries.size(); ++i) goal_shard |= 1u << step.entries.mesh_dim(i);
        elements = std::max(elements,
                            blocks_->AverageReceipt(current, current.ShardSet(), goal_shard, bits));
      }
      return std::make_pair(receipt.senders, elements);
    });
  }

  // The busiest members' load, bounded from every member's blocks; for a
  // staged form also StagedBound.
  std::optional<double> RefinedCostBound(const DistState& current,
                                         const Step& step) const override {
    std::optional<double> bound =
        ExchangeBound(current, step, [&](absl::Span<const int64_t> logical) {
          const ExchangeLoadBound load = ExchangeLoadBoundOf(current, step, mesh_, logical);
          return std::make_pair(load.messages, load.elements);
        });
    if (step.staging.staged()) bound = std::max(bound.value_or(0), StagedBound(current, step));
    if (bound.has_value() && !step.staging.staged()) {
      bound = std::max(*bound, FirstMemberLinkBound(current, step));
    }
    return bound;
  }

  int64_t rails_per_host() const override { return devices_per_host_ > 1 ? devices_per_host_ : 0; }

  // NCCL runs all_gather and reduce_scatter in place (spec §12).
  MemoryBackend memory_backend() const override { return MemoryBackend::kNccl; }

 private:
  // CallTimeUs on the group `bits`.
  double CallTime(StepKind kind, int bits, double bytes) const {
    thread_local CallTimeMemo memo;
    return memo.Get(id_, kind, bits, bytes, [&] {
      return CallTimeUs(tables_->tunings[bits], tables_->span[bits], links_, kind, bytes);
    });
  }

  // The step's LogicalShape at coordinate 0 into `logical`, without
  // allocating (once per exchange edge): the nested chunks at 0 in one pass
  // over the mesh dims, since ceil(ceil(L / a) / b) == ceil(ceil(L / b) / a)
  // (block_bytes.cc). Returns the tensor's ndim.
  int LogicalAtOrigin(const DistState& current, const Step& step, int64_t* logical) const {
    const int ndim = static_cast<int>(global_shape_.size());
    std::copy(global_shape_.begin(), global_shape_.end(), logical);
    for (int m = 0; m < mesh_.ndim(); ++m) {
      const Placement p = current.placement(m);
      if (p.is_shard() && p.dim() < ndim && !step.group.Contains(m)) {
        logical[p.dim()] = PaddedChunkSize(logical[p.dim()], mesh_.size(m));
      }
    }
    return ndim;
  }

  // The two bounds above: for an exchange, staged or not,
  // ExchangeTimeLowerBoundUs of the (messages, elements) that `load` finds at
  // the step's logical shape at coordinate 0; nullopt for other steps.
  template <typename Load>
  std::optional<double> ExchangeBound(const DistState& current, const Step& step, Load load) const {
    if (step.kind != StepKind::kExchange) return std::nullopt;  // permutes: priced at once
    const bool staged = step.staging.staged();
    const HostSpan& span = tables_->span[step.group.bits()];
    if (span.ranks <= 1) return 0.0;
    int64_t logical[kMaxTensorDims];
    const int ndim = LogicalAtOrigin(current, step, logical);
    const auto [messages, elements] = load(absl::MakeConstSpan(logical, ndim));
    // A staged step's busiest member still receives `elements`, over its
    // rounds, but its messages may come through fewer stagers: each round
    // pays at least one message's latency.
    return ExchangeTimeLowerBoundUs(links_, span, tables_->one_rail[step.group.bits()],
                                    staged ? 1 : messages,
                                    itemsize_ * static_cast<double>(elements));
  }

  // Whether the step's group spans hosts on several rails, where its price
  // routes it per link (DirectOf): the dear prices.
  bool RoutedPerLink(const Step& step) const {
    const HostSpan& span = tables_->span[step.group.bits()];
    return span.ranks > 1 && span.local < span.ranks && !tables_->one_rail[step.group.bits()];
  }

  // A direct exchange on hosts of several rails at least takes one message
  // and the first member's receipt over its links (its LinkLoad counts both
  // at its NVLink and its NIC): what only its own host holds on
  // NVLink, what only other hosts hold on the NIC, the rest split as best it
  // can be. Zero elsewhere (ExchangeBound's transfer is exact there).
  double FirstMemberLinkBound(const DistState& current, const Step& step) const {
    if (!RoutedPerLink(step)) return 0;
    int64_t logical[kMaxTensorDims];
    const int ndim = LogicalAtOrigin(current, step, logical);
    const ReceiptByPlace r = FirstMemberReceiptByHostOf(
        current, step, mesh_, absl::MakeConstSpan(logical, ndim), devices_per_host_);
    // max((total - b) / nvlink, b / net) is least at b* = total * net /
    // (nvlink + net); the network's share b lies in [far_only, far_only + either].
    const double nvlink = links_.nvlink_gbps, net = links_.net_gbps;
    const double total = static_cast<double>(r.near_only + r.far_only + r.either);
    const double b = std::clamp(total * net / (nvlink + net), static_cast<double>(r.far_only),
                                static_cast<double>(r.far_only + r.either));
    const double transfer_us = itemsize_ * std::max((total - b) / nvlink, b / net) / 1000;
    return (tables_->one_message[step.group.bits()] + transfer_us) * (1 - 1e-6);
  }

  // Spec §6.4: a permute or an exchange is one grouped send/recv, priced
  // from its routes (§11.1) per link in the group of the rank at coordinate
  // 0 (the largest logical shape). Routed per link (DirectOf) only on
  // groups spanning hosts on several rails; within one host, or on one rail,
  // every route takes that one link, so the busiest member's load is the
  // link's (LinkLoadOnOneLink, no routing where there are no replicas).
  double ExchangeCost(const DistState& current, const Step& step, int bits) const {
    const HostSpan& span = tables_->span[bits];
    if (span.ranks <= 1) return 0;
    if (step.staging.staged()) return StagedCost(current, step, bits);
    if (RoutedPerLink(step)) {
      int64_t logical[kMaxTensorDims];
      const int ndim = LogicalAtOrigin(current, step, logical);
      return DirectPrice(DirectOf(current, step, absl::MakeConstSpan(logical, ndim)), bits);
    }
    const RouteLoad load = ExchangeLoadAtOrigin(current, step, mesh_, global_shape_);
    return ExchangeTimeUs(links_, span, LinkLoadOnOneLink(load, span.local == span.ranks),
                          itemsize_);
  }

  // The per-thread memos' key for `step` from `current` on this binding (as
  // CallTimeMemo's, by id_): the state, and the step's kind, group,
  // entries and staging.
  using StepKey = std::array<uint64_t, 4>;
  StepKey KeyOf(const DistState& current, const Step& step) const {
    uint64_t entries = 0;
    for (int i = 0; i < step.entries.size(); ++i) {
      entries = entries << 8 |
                static_cast<uint64_t>(step.entries.mesh_dim(i) | step.entries.tensor_dim(i) << 4);
    }
    const auto rails = static_cast<uint32_t>(step.staging.rails_per_host);
    const auto chunks = static_cast<uint16_t>(step.staging.chunks);
    return {id_, current.bits(), entries,
            uint64_t{rails} << 32 | uint64_t{chunks} << 16 | static_cast<uint64_t>(step.kind) << 8 |
                step.group.bits()};
  }

  // Spec §11.2: a staged step's rounds (rail_staging.h) in the group of the
  // rank at coordinate 0, each one grouped send/recv priced as above.
  // Routing and staging the whole group is dear, and the search asks for
  // the same forms again (its bound, its price, each chunk count): kept
  // per thread.
  double StagedCost(const DistState& current, const Step& step, int bits) const {
    thread_local absl::flat_hash_map<StepKey, double> memo;
    const StepKey key = KeyOf(current, step);
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    if (memo.size() >= (size_t{1} << 14)) memo.clear();
    return memo[key] = StagedRoundsCost(current, step, bits);
  }

  // A staged form's least, from its routes' sizes (DirectOf): where
  // staging cannot lower the busiest NIC, its price (the direct step's, as
  // StagedRoundsCost prices it); else two rounds' latency, one of them
  // across hosts (at least one network message) and the other at least one
  // message, and the least busiest NIC's elements over the network (the
  // rounds together carry them).
  double StagedBound(const DistState& current, const Step& step) const {
    const int bits = step.group.bits();
    if (tables_->span[bits].ranks <= 1) return 0;
    const std::vector<int64_t> zeros(mesh_.ndim(), 0);
    const Direct direct =
        DirectOf(current, step, LogicalShape(current, step, mesh_, global_shape_, zeros));
    if (!direct.nic.MayStage()) return DirectPrice(direct, bits);
    NcclP2pCall network_message;
    network_message.inter_peers = 1;
    const double net_us =
        itemsize_ * static_cast<double>(direct.nic.least) / (1000 * links_.net_gbps);
    return (NcclP2pTimeUs(links_, network_message) + tables_->one_message[bits] + net_us) *
           (1 - 1e-6);
  }

  // A staged step's routes at coordinate 0 as they are, tallied as found
  // (no box built): their NIC load (its rails are the hosts' GPUs, as
  // rails_per_host says) and link load.
  struct Direct {
    NicLoad nic;
    LinkLoad load;
  };
  // Kept per thread by binding, state and step (its staging aside): the
  // direct step's price, a staged form's bound and its price ask for the
  // same routes in turn.
  Direct DirectOf(const DistState& current, const Step& step,
                  absl::Span<const int64_t> logical) const {
    thread_local absl::flat_hash_map<StepKey, Direct> memo;
    Step direct = step;
    direct.staging = RailStaging();
    const StepKey key = KeyOf(current, direct);
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    thread_local LinkLoadTally tally;
    TallyExchangeAtOrigin(current, step, mesh_, logical, devices_per_host_, &tally);
    if (memo.size() >= (size_t{1} << 14)) memo.clear();
    return memo[key] = {tally.Nic(), tally.Load()};
  }
  // The direct step's price: ExchangeCost's, since a staged group spans
  // hosts and shares one (RoutedPerLink).
  double DirectPrice(const Direct& direct, int bits) const {
    return ExchangeTimeUs(links_, tables_->span[bits], direct.load, itemsize_);
  }

  double StagedRoundsCost(const DistState& current, const Step& step, int bits) const {
    const std::vector<int64_t> zeros(mesh_.ndim(), 0);
    const std::vector<int64_t> logical = LogicalShape(current, step, mesh_, global_shape_, zeros);
    // Nothing to stage (most forms the search meets): the direct price,
    // without routing boxes.
    const Direct direct = DirectOf(current, step, logical);
    if (!direct.nic.MayStage()) return DirectPrice(direct, bits);
    const StagedExchange x = StagedExchangeOf(current, step, mesh_, logical, zeros);
    double us = 0;
    for (int64_t r = 0; r < x.rounds.rounds; ++r) {
      const LinkLoad load = LinkLoadOfRoutes(RoutesOfRound(x.rounds.routes, x.rounds.round_of, r),
                                             x.ranks, devices_per_host_);
      us += ExchangeTimeUs(links_, tables_->span[bits], load, itemsize_);
    }
    return us;
  }

  BlockBytes bytes_;
  DeviceMesh mesh_;
  std::vector<int64_t> global_shape_;
  double itemsize_;
  NcclP2pLinks links_;
  double memory_bytes_per_us_;
  int64_t devices_per_host_;
  std::shared_ptr<const MeshTables> tables_;
  uint64_t id_ = NewCacheOwnerId();  // the per-thread memos' key (KeyOf, CallTimeMemo)
  // Group bounds: meshes of up to ShardSetBlocks::kMaxDims dims.
  std::optional<ShardSetBlocks> blocks_;
};

class NcclCostModel : public CostModel {
 public:
  NcclCostModel(NcclProfile profile, int64_t devices_per_host)
      : CostModel(Fingerprint(profile, devices_per_host)),
        profile_(std::move(profile)),
        devices_per_host_(devices_per_host) {}

  std::unique_ptr<const BoundCostModel> Bind(const CostProblem& problem) const override {
    return std::make_unique<NcclCosts>(problem, profile_, devices_per_host_);
  }
  bool prices_native_steps() const override { return true; }
  std::optional<double> ExchangeAmongRanksUs(absl::Span<const int64_t> ranks,
                                             absl::Span<const SliceRoute> routes,
                                             int itemsize) const override {
    return ExchangeTimeUs(NcclP2pLinksFor(profile_), HostSpanOfRanks(ranks, devices_per_host_),
                          LinkLoadOfRoutes(routes, ranks, devices_per_host_), itemsize);
  }
  int64_t rails_per_host() const override { return devices_per_host_; }

 private:
  static std::string Fingerprint(const NcclProfile& p, int64_t devices_per_host) {
    return absl::StrCat(
        "nccl profile=", p.name, " arch=", GpuArchName(p.arch), " gpus_per_host=", p.gpus_per_host,
        absl::StrFormat(" nvlink_gbps=%.17g", p.nvlink_gbps), " nvswitch=", p.nvswitch ? 1 : 0,
        " nics_per_host=", p.nics_per_host, absl::StrFormat(" nic_gbps=%.17g", p.nic_gbps),
        " amd_cpu=", p.amd_cpu ? 1 : 0, absl::StrFormat(" memory_gbps=%.17g", p.memory_gbps),
        " devices_per_host=", devices_per_host);
  }

  NcclProfile profile_;
  int64_t devices_per_host_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const CostModel>> MakeNcclCostModel(const NcclProfile& profile,
                                                                   int64_t devices_per_host) {
  if (absl::Status s = ValidateNcclProfile(profile); !s.ok()) return s;
  if (devices_per_host < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices per host: ", devices_per_host, "; must be >= 1"));
  }
  return std::make_shared<const NcclCostModel>(profile, devices_per_host);
}

}  // namespace reshard
