// Cross-mesh moves (spec §14): a tensor laid out on one mesh of global ranks
// goes to a layout on another mesh of global ranks (disjoint, overlapping or
// the same ranks: a "remesh"), in three parts:
//   before   native steps on the source mesh that reduce every Partial
//            (the crossing moves data; it cannot reduce);
//   crossing one exchange over the union of both rank sets: every
//            destination rank receives exactly the slices of its block it
//            does not hold, from source ranks that hold them, replicas
//            balanced (slice_routes.h, spec §11.1);
//   after    native steps on the destination mesh that turn the crossed
//            layout (the destination's, Partials as Replicate) into it.
//
//   CrossMeshRequest r{src_spec, dst_spec, {4, 5, 6, 7}, {0, 1}};
//   absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, PlanOptions());
//
// Where the cost model prices the crossing, other crossing layouts are tried
// and the cheapest plan taken (spec §14): a Partial source mesh dim may
// reduce_scatter instead of all_reduce before, and a destination mesh dim
// that replicates may receive a shard and all_gather among its replicas
// after (Alpa's choice); a fan-out crossing may be relayed by the
// destination's replicas in rounds (relayed_crossing.h, spec §14
// "Relaying"), and a crossing into few NICs of a host spread over all of
// them (rail_balanced_crossing.h, spec §14 "Rails"). Under
// PlanOptions::max_memory the steps before and after are planned under the
// limit and the crossing is split into rounds (crossing_rounds.h, spec §14
// "Memory").
#ifndef RESHARD_PLANNER_CROSS_MESH_CROSS_MESH_PLAN_H_
#define RESHARD_PLANNER_CROSS_MESH_CROSS_MESH_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"
#include "planner/steps/slice_routes.h"

namespace reshard {

struct CrossMeshRequest {
  DistSpec src;  // on the source mesh
  DistSpec dst;  // on the destination mesh: same global shape and dtype
  // The global rank of each mesh rank (row-major), distinct within a list;
  // empty means 0 .. size - 1.
  std::vector<int64_t> src_ranks;
  std::vector<int64_t> dst_ranks;
};

struct CrossMeshPlan {
  std::vector<int64_t> src_ranks;  // the request's, defaults filled in
  std::vector<int64_t> dst_ranks;
  std::vector<int64_t> participants;  // both sets' union, ascending
  Plan before;                        // on the source mesh: src -> crossing_src
  DistSpec crossing_src;
  DistSpec crossing_dst;
  // Participant indices; boxes in global tensor coordinates (a participant's
  // own box is a local copy). Under a memory limit, pieces of §11.1's routes;
  // relayed or spread over rails, also routes from a participant that an
  // earlier round brought the box (spec §14 "Relaying", "Rails"); sorted by
  // round, then receiver, then sender.
  std::vector<SliceRoute> routes;
  std::vector<int64_t> route_rounds;  // the round of each of `routes`
  int64_t rounds = 1;                 // each one AllToAllV over the participants
  RouteLoad load;                     // of the whole crossing, in elements
  Plan after;                         // on the destination mesh: crossing_dst -> dst
  // The crossing's price by the request's cost model: per round one grouped
  // send/recv over the participants (CostModel::ExchangeAmongRanksUs, the
  // rule of the model's exchange steps), summed; none when the model cannot
  // price an exchange (the pytorch models).
  std::optional<double> crossing_cost;
  // before.cost + crossing_cost + after.cost; none when crossing_cost is.
  std::optional<double> cost;
  // The most any participant holds at once (spec §14 "Memory"): the largest
  // of before.peak_bytes, CrossingPeakBytes() and after.peak_bytes.
  int64_t peak_bytes = 0;

  // Per participant, its peak in the crossing: its source and destination
  // blocks and, in its busiest round, what it sends plus receives.
  std::vector<int64_t> CrossingPeakBytes() const;
  // The least max_memory under which this crossing (these layouts) splits
  // into rounds (LeastCrossingMemory, crossing_rounds.h).
  int64_t LeastCrossingBytes() const;

  // Where global rank `rank` stands: its index in participants (ascending:
  // a binary search), src_ranks or dst_ranks; -1 where it is not.
  int64_t ParticipantIndex(int64_t rank) const;
  int64_t SrcIndex(int64_t rank) const;
  int64_t DstIndex(int64_t rank) const;

  // Spec §14: the crossing's boxes per participant. Participant i holds its
  // crossing_src block if it is a source rank and wants its crossing_dst
  // block if it is a destination rank (empty boxes otherwise).
  void CrossingBoxes(std::vector<Box>* held, std::vector<Box>* wanted) const;

  // Whether a route is sent by a participant that does not hold its box: a
  // relay or a stager (spec §14 "Relaying", "Rails"), so the rounds pipeline
  // rather than fit a memory limit.
  bool Relayed() const;
  // Whether a route is sent by a participant that neither holds nor wants
  // its box: a stager of a crossing spread over rails (spec §14 "Rails").
  bool Staged() const;
  // Why the crossing takes several rounds, by the spec §14 section that
  // makes them: "rails" (Staged), "relaying" (Relayed otherwise) or
  // "memory" (a memory limit); "" for one round.
  absl::string_view RoundsFor() const;

  // Per participant, the bytes it sends to other participants in the
  // crossing (local copies not counted).
  std::vector<int64_t> BytesSent() const;
  // Per participant, the bytes of its crossing_dst block that its own
  // crossing_src block does not hold: what it must receive whatever the
  // routes (the routes receive exactly that, spec §11.1, unless staged).
  std::vector<int64_t> ReceiveLowerBoundBytes() const;
  // Per participant, the bytes the routes bring it from other participants:
  // ReceiveLowerBoundBytes() plus what it stages for others (spec §14 "Rails").
  std::vector<int64_t> BytesReceived() const;

  // "S(0)R on 2x4 ranks 0-7 -> ... -> RS(0) on 2 ranks 8-9", one line.
  std::string Summary() const;
};

// The most slices a crossing may move (before balancing splits any: per
// destination rank, the source blocks its block meets). 2^20 slices take
// seconds to route and about 400 MB; a move of every block of a 1024-rank
// layout to 1024 replicas is at this limit.
inline constexpr int64_t kMaxCrossingSlices = int64_t{1} << 20;

// The most ranks one move may name, its source and destination meshes'
// together: planning reads every rank's block for each candidate layout, and
// the plan lists every rank (about 10 us per rank here). At this bound, more
// GPUs than any cluster of 2026, a move plans in about a second (1.2 s user,
// 47 MB, its JSON 1.6 MB); 2^20 took 10 s, and 2^24 destination ranks took
// 59 s and 5.5 GB and printed 280 MB (issue 44).
inline constexpr int64_t kMaxCrossingRanks = int64_t{1} << 17;

// The most crossing layouts (pairs of crossing_src and crossing_dst) one
// move tries: per free mesh dim, Replicate or a Shard of each tensor dim.
inline constexpr int64_t kMaxCrossingCandidates = 64;

// InvalidArgument (naming the field: src_ranks, dst_ranks, dst) for rank
// lists of the wrong size, repeated ranks or negative ranks, or specs of
// different shapes or dtypes; ResourceExhausted "dst_ranks: ..." for a
// move of more than kMaxCrossingRanks ranks or a crossing of more than
// kMaxCrossingSlices slices (each candidate's ranks and slices count against
// that budget, so the candidates tried shrink as the meshes grow); the planner's errors for
// the steps before and after; ResourceExhausted carrying PlanLimit::kMaxMemory
// when no candidate's steps and rounds fit options.max_memory (the plain
// candidate's error, with the least limit its crossing needs). `options`
// plans those steps, bounds the crossing's rounds and prices them; of the
// candidate layouts (kMaxCrossingCandidates), each also with its crossing
// relayed and spread over rails where the model prices rails
// (CostModel::rails_per_host; kPipelineChunks each), the cheapest plan
// wins, the earlier on ties (the plain one, Partials as Replicate, first),
// the plain one when the model prices no exchange.
absl::StatusOr<CrossMeshPlan> PlanCrossMesh(const CrossMeshRequest& request,
                                            const PlanOptions& options);

// The plain candidate alone (spec §14 items 1-3: crossing_src and
// crossing_dst are src and dst with every Partial Replicate), priced but not
// compared with others; PlanCrossMesh's errors. The naive baseline
// (naive_plan.h) replaces its crossing.
absl::StatusOr<CrossMeshPlan> PlanPlainCrossMesh(const CrossMeshRequest& request,
                                                 const PlanOptions& options);

// Spec §14 "Rails": `direct` (its crossing one round of §11.1's routes)
// with its crossing spread over the receiving hosts' rails in 1 + chunks
// rounds (SpreadOverRails, rail_balanced_crossing.h), its load and
// peak_bytes set, unpriced; none when no host is spread or its routes could
// be more than `max_routes`.
std::optional<CrossMeshPlan> SpreadPlan(const CrossMeshPlan& direct, int64_t chunks,
                                        int64_t rails_per_host,
                                        int64_t max_routes = kMaxCrossingSlices);

// Spec §14 "Rails" and §11.2: `direct` (its crossing one round of §11.1's
// routes) with its routes across hosts staged over rails in 1 + chunks
// rounds (StageOverRails, planner/steps/rail_staging.h: each host's sends
// and receipts spread over its NICs, a Latin square of rails), its load and
// peak_bytes set, unpriced; none when no route is staged or its routes
// could be more than `max_routes`.
std::optional<CrossMeshPlan> StagedPlan(const CrossMeshPlan& direct, int64_t chunks,
                                        int64_t rails_per_host,
                                        int64_t max_routes = kMaxCrossingSlices);

// Spec §14 "Relaying": `direct` (its crossing one round of §11.1's routes)
// with its crossing relayed in 1 + chunks rounds (RelayThroughReplicas,
// relayed_crossing.h), its load and peak_bytes set, unpriced (cost and
// crossing_cost none); none when no piece of the crossing has a relay or its
// routes could be more than `max_routes`.
std::optional<CrossMeshPlan> RelayedPlan(const CrossMeshPlan& direct, int64_t chunks,
                                         int64_t max_routes = kMaxCrossingSlices);

// The box of the global tensor held by the rank at `coordinate` of spec's
// mesh: per tensor dim, its nested chunk over the shard order (spec §2).
Box BlockOf(const DistSpec& spec, absl::Span<const int64_t> coordinate);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_CROSS_MESH_PLAN_H_
