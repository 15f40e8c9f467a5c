// The cost-model interface: the price of one step, used both to search
// (graph planner) and to report (every plan). The models by name are in
// cost_model_registry.h; each model has a file of its own in planner/costs/.
//
// A model of your own: derive from CostModel (its parameters, a fingerprint
// naming them) and BoundCostModel (its prices for one problem, and lower
// bounds on them if it can: the graph search prunes with those, spec §5.1),
// and pass it in PlanOptions. The plan cache keys plans by the fingerprint.
#ifndef RESHARD_PLANNER_COSTS_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/steps/slice_routes.h"
#include "planner/steps/step.h"
#include "planner/steps/step_memory.h"

namespace reshard {

// The problem a plan is made for: what a model may precompute from.
class ShardSetBlocks;  // shard_set_blocks.h

struct CostProblem {
  DeviceMesh mesh;
  std::vector<int64_t> global_shape;
  int itemsize = 4;
};

// A model bound to one problem. The graph search calls StepCost once per
// edge, so it should not allocate.
class BoundCostModel {
 public:
  virtual ~BoundCostModel() = default;
  // Cost of `step` while the tensor is in `current` (the state the step
  // leaves). Only legal steps are asked (step.h, CheckStep).
  virtual double StepCost(const DistState& current, const Step& step) const = 0;

  // A lower bound on StepCost of every `kind` step on `mesh_dim`, from any
  // state of the problem. The graph search prunes with it
  // (remaining_cost_bound.h, spec §5.1), so it must never exceed a real
  // price, bit for bit. A model that prices native steps must also bound
  // steps on groups (spec §5.2): a collective on group G costs at least the
  // sum over G of LowerBound(kind, m), a permute at least their maximum.
  // LowerBound(kExchange, m) must be at most the price of every
  // communicating step (of any kind) whose group holds m: one exchange may
  // replace any sequence of them (spec §5.2). The default, 0, offers no
  // bound: with 0 for every kind the search is plain Dijkstra.
  virtual double LowerBound(StepKind /*kind*/, int /*mesh_dim*/) const { return 0; }

  // A lower bound on StepCost of every `kind` step on the single mesh dim
  // `mesh_dim` from any state whose shard set (the mask of its Shard mesh
  // dims) is `shard_set`, bit for bit like LowerBound. For a model with a
  // bytes bound (has_potential, below) the compat bound's abstract graph
  // prices its edges with it (leave_set_graph.h, spec §5.1). The default,
  // LowerBound, holds for every shard set.
  virtual double LowerBoundAt(unsigned /*shard_set*/, StepKind kind, int mesh_dim) const {
    return LowerBound(kind, mesh_dim);
  }

  // Deferred pricing (spec §5.2 item 7): for a step whose StepCost is
  // expensive (an exchange priced by its routes, §11.1), a much cheaper
  // lower bound on it, bit for bit like LowerBound; the search then prices
  // the step only if a cheapest path could still take it. std::nullopt (the
  // default): the search prices the step when it generates it.
  virtual std::optional<double> DeferredCostBound(const DistState& /*current*/,
                                                  const Step& /*step*/) const {
    return std::nullopt;
  }
  // A second lower bound on a deferred step, at least DeferredCostBound's:
  // dearer than it, far cheaper than StepCost. The search asks for it when
  // the first bound says a cheapest path could take the step, and prices the
  // step only if one still could at this bound (spec §5.2 item 7).
  // std::nullopt (the default): the search prices the step then.
  virtual std::optional<double> RefinedCostBound(const DistState& /*current*/,
                                                 const Step& /*step*/) const {
    return std::nullopt;
  }

  // Group bounds, for the native bound's abstract graph (spec §5.2,
  // native_leave_set_graph.h): a model whose price of a call grows with its
  // group and its bytes may bound each group on its own instead of sharing
  // one call's bound among mesh dims (LowerBound's contract). When
  // group_blocks() is not null (the geometry of its problem's blocks,
  // shard_set_blocks.h, which says what an exchange must move at least):
  //   GroupLowerBoundAt(shard_set, kind, group) <= StepCost of every
  //     communicating `kind` step (not an exchange) on exactly the mesh dims
  //     of `group` from any state whose shard set is `shard_set`;
  //   ExchangeLowerBoundAt(group, received) <= StepCost of every exchange on
  //     exactly the mesh dims of `group` whose busiest member receives at
  //     least `received` elements, and it grows with `received`;
  //   LocalLowerBoundAt(shard_set) <= StepCost of every local step (chunk,
  //     partition) into a state whose shard set is `shard_set`;
  // both bit for bit like LowerBound. The default: none.
  virtual const ShardSetBlocks* group_blocks() const { return nullptr; }
  virtual double GroupLowerBoundAt(unsigned /*shard_set*/, StepKind /*kind*/,
                                   MeshDimSet /*group*/) const {
    return 0;
  }
  virtual double ExchangeLowerBoundAt(MeshDimSet /*group*/, int64_t /*received*/) const {
    return 0;
  }
  virtual double LocalLowerBoundAt(unsigned /*shard_set*/) const { return 0; }

  // Where a permute or an exchange may also be staged over rails (spec
  // §11.2, rail_staging.h): the ranks per host whose NICs the model prices
  // one by one (CostModel::rails_per_host); 0 where it prices none.
  virtual int64_t rails_per_host() const { return 0; }

  // Whose buffers the plan's memory is counted for (step_memory.h, spec
  // §12): the backend the model describes. Gloo unless a model says so.
  virtual MemoryBackend memory_backend() const { return MemoryBackend::kGloo; }

  // An optional second, bytes-aware bound (spec §5.1). It abstracts a state
  // to its *shard set*, the mask of its Shard mesh dims (what the bytes each
  // rank holds depend on). In the abstract graph a mesh dim joins the set for
  // free and leaves it for GatherBytes(set, mesh_dim). Contract: every legal
  // step u -> v costs at least its share of what LowerBound's contract asks,
  // with PotentialLowerBound in LowerBound's place, plus the cheapest
  // abstract path from u's shard set to v's. RemainingCostBound then also
  // bounds the rest of a path by PotentialLowerBound's must-leave sum plus
  // the cheapest abstract path to dst's shard set, and keeps the larger
  // bound. Both must hold bit for bit like LowerBound (the bound shrinks by a
  // millionth for rounding). The default: none.
  virtual bool has_potential() const { return false; }
  virtual double GatherBytes(unsigned /*shard_set*/, int /*mesh_dim*/) const { return 0; }
  virtual double PotentialLowerBound(StepKind /*kind*/, int /*mesh_dim*/) const { return 0; }
};

// A model with its parameters; immutable, so one object may serve many
// plans and threads.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // The model's name and every parameter that changes a cost, e.g.
  // "pytorch devices_per_host=8". Two models with one fingerprint must price
  // every step alike: the plan cache returns one's plans for the other.
  // Fingerprints start with the model's name (its MakeCostModel name).
  const std::string& fingerprint() const { return fingerprint_; }
  // "pytorch", "alpha-beta", ...: the fingerprint's first word.
  absl::string_view name() const {
    return absl::string_view(fingerprint_).substr(0, fingerprint_.find(' '));
  }
  virtual std::unique_ptr<const BoundCostModel> Bind(const CostProblem& problem) const = 0;
  // True when the model prices native steps (spec §4.2: groups of several
  // mesh dims, permutes) honestly; native planning needs such a model, and a
  // request naming one that does not (the pytorch models) plans in pytorch
  // mode.
  virtual bool prices_native_steps() const { return false; }

  // How far apart, relatively, two prices must be for the model to tell them
  // apart: 0 for formulas (exact), the measured model's held-out error for
  // tables of timings. Native mode keeps pytorch mode's plan over a cheaper
  // one within it, where the memory limit allows (spec §5.2 item 10).
  virtual double tie_resolution() const { return 0; }

  // The price of one exchange among the global ranks `ranks` (ascending,
  // distinct; rank r on host r / devices_per_host) moving `routes` (their
  // senders and receivers index `ranks`; elements of `itemsize` bytes): a
  // cross-mesh move's crossing (spec §14), priced by the same rule as the
  // model's in-mesh exchange steps. std::nullopt for a model that cannot
  // price an exchange (the pytorch models).
  virtual std::optional<double> ExchangeAmongRanksUs(absl::Span<const int64_t> /*ranks*/,
                                                     absl::Span<const SliceRoute> /*routes*/,
                                                     int /*itemsize*/) const {
    return std::nullopt;
  }

  // Where ExchangeAmongRanksUs prices each NIC of a host on its own, one
  // per local rank (the nccl model's rails, spec §6.4): the devices per host
  // (rank r on host r / it, rail r % it); 0 where it prices no rails. A
  // crossing then also tries spreading what enters a host over all its
  // rails (spec §14 "Rails").
  virtual int64_t rails_per_host() const { return 0; }

 protected:
  explicit CostModel(std::string fingerprint) : fingerprint_(std::move(fingerprint)) {}

 private:
  std::string fingerprint_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_COST_MODEL_H_
