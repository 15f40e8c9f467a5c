// A planning request: what to plan (source and destination layouts) and how
// (PlanOptions). The one request type of the library: PlanRedistribution,
// PlanCache, the CLI, verify, bench and the Python module all plan with it,
// and ValidatePlanRequest is the one place a rule about a request is checked.
//
//   PlanRequest request{*src, *dst, PlanOptions()};
//   request.options.max_memory = 64 << 20;
//   absl::Status valid = ValidatePlanRequest(request);
//   // "max_memory: must be a positive number of bytes, got 0"
//
// Error messages name the request's fields as they are spelled here, a
// leading "field: " and `field` (in backquotes) elsewhere in the text, so a
// front end can translate them to its own spelling (the CLI prints
// --max-memory, `reshard batch` max_memory; formats/request_fields.h).
#ifndef RESHARD_PLANNER_PLAN_REQUEST_H_
#define RESHARD_PLANNER_PLAN_REQUEST_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"

namespace reshard {

// PlanOptions::max_search_edges: its default (about a second of native
// search on an 8-D mesh and under 150 MB, docs/cli.md "Limits") and its largest
// value (the search indexes edges with 32 bits).
inline constexpr int64_t kDefaultMaxSearchEdges = 1000000;
inline constexpr int64_t kMaxSearchEdgesLimit = int64_t{1} << 30;

struct PlanOptions {
  // kAuto: pytorch when `cost_model` prices compat steps only (the pytorch
  // models), native otherwise (ResolvedMode). Native mode needs a model that
  // prices native steps (CostModel::prices_native_steps).
  PlanMode mode = PlanMode::kAuto;
  // Pytorch mode: kAuto is greedy unless a shard order or StridedShard needs
  // the graph planner (spec §9); that rule also overrides an explicit
  // kGreedy. Native mode always searches its graph (kGreedy is an error).
  Algorithm algorithm = Algorithm::kAuto;
  // Any model, with its parameters (planner/costs/): MakeCostModel by name,
  // or your own. Null: the mode's default (ResolvedCostModel).
  std::shared_ptr<const CostModel> cost_model;
  // The rank whose logical shapes the plan reports; empty means all zeros.
  std::vector<int64_t> coordinate;
  // Bound on the states the graph search may expand (>= 1).
  int64_t max_expanded_states = 1000000;
  // Bound on the edges the graph search may generate, 1 to 2^30: its time
  // and memory (planner/search/search_limits.h; about 1 s and under 150 MB
  // at the default on an 8-D mesh, docs/cli.md "Limits").
  int64_t max_search_edges = kDefaultMaxSearchEdges;
  // Bytes any rank may hold at once (Plan::peak_bytes, >= 1). Native mode
  // plans only steps under it; pytorch mode fails when its plan exceeds it.
  int64_t max_memory = std::numeric_limits<int64_t>::max();
};

struct PlanRequest {
  DistSpec src;
  DistSpec dst;
  PlanOptions options;
};

// The one rule for defaults (spec §13): the mode a request plans in (kAuto
// decided by the model) and the model it is priced with (null decided by the
// mode: "nccl" for native, "pytorch" for pytorch mode). Cheap, no
// copies: PlanCache keys on them.
PlanMode ResolvedMode(const PlanOptions& options);
const std::shared_ptr<const CostModel>& ResolvedCostModel(const PlanOptions& options);
// The name of a mode's default model (MakeCostModel makes it by that name),
// for front ends that build the model themselves (e.g. with another
// devices_per_host).
absl::string_view DefaultCostModelName(PlanMode resolved_mode);

// Every rule about a request, InvalidArgument naming the field:
//   dst: the same mesh, global shape and dtype as src
//   max_expanded_states, max_memory: >= 1
//   max_search_edges: 1 to kMaxSearchEdgesLimit (2^30)
//   coordinate: empty, or a coordinate of the mesh
//   mode: native mode needs a model that prices native steps
//   algorithm: greedy is a pytorch-mode planner
absl::Status ValidatePlanRequest(const PlanRequest& request);
// The rules about the options alone, for planning on `mesh` (CostMatrix
// checks its options with these).
absl::Status ValidatePlanOptions(const PlanOptions& options, const DeviceMesh& mesh);

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLAN_REQUEST_H_
