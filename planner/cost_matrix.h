// CostMatrix: the cost of the graph plan (spec §5) for every (source, target)
// pair of layouts of one tensor, for solvers that price many layouts at once.
//
//   std::vector<DistState> layouts = ...;   // e.g. DistSpec::Parse(...)->state()
//   absl::StatusOr<CostMatrixResult> m =
//       CostMatrix(mesh, {1024, 4096}, DType::kF32, layouts, layouts, CostMatrixOptions());
//   (*m)[i][j]   // std::optional<double>: nullopt when no plan exists
//
// Each entry is bit-identical to PlanRedistribution's cost with
// Algorithm::kGraph and the same mode for that pair alone. Pytorch mode: one
// Dijkstra per source, on the graph of every Partial op of the row's pairs
// (the ops change the graph, spec §4 case 6), pops each target at its pair's
// cost wherever its path holds no op foreign to the pair; other targets take
// a Dijkstra on their pair's graph (spec §5.1 item 6). The states and edges
// generated are shared by all rows. Native mode: every search of a pair returns the exact
// minimum sum on the pair's graph (spec §5.2 item 2), so the matrix computes
// that with work shared by all pairs (spec §5.2 item 6): one graph with every
// Partial op of the matrix (each pair's search keeps to the states of its
// own ops), each target's goal edges and table of distances, and a short A*
// per pair guided by it; pairs past a limit fall back to the A* pass
// PlanRedistribution runs for each of them.
#ifndef RESHARD_PLANNER_COST_MATRIX_H_
#define RESHARD_PLANNER_COST_MATRIX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace reshard {

struct CostMatrixOptions {
  // As PlanOptions::mode: kAuto is native when the model prices native
  // steps, pytorch otherwise; kNative needs such a model.
  PlanMode mode = PlanMode::kAuto;
  // As PlanOptions::cost_model; must not be null.
  std::shared_ptr<const CostModel> cost_model = DefaultCostModel();
  // Bound on the states each source's search expands (native: each pair's).
  int64_t max_expanded_states = 1000000;
  // Bound on the edges each pass generates (PlanOptions::max_search_edges).
  int64_t max_search_edges = kDefaultMaxSearchEdges;
  // Native mode: a shared graph is built only while it holds at most this
  // many states per pair it serves (spec §5.2 item 6); the pairs of a graph
  // past it are searched one by one. 0: every pair alone. The costs are the
  // same either way; only the time differs.
  int64_t graph_states_per_pair = 32;
  // The matrix is computed on this many threads: pytorch mode splits the
  // rows among them, native mode the columns. 0: one per core this process
  // may run on (its affinity mask), at most kMaxDefaultThreads. The entries
  // do not depend on it.
  int threads = 0;
  static constexpr int kMaxDefaultThreads = 16;  // each native worker holds a graph
  // If set, called after each row (pytorch mode) or column (native) with the
  // share of the matrix done so far, in (0, 1], from the worker threads (one
  // call at a time): progress for long runs.
  std::function<void(double done)> on_progress;
};

// Row i is sources[i]; entry j is targets[j].
using CostMatrixResult = std::vector<std::vector<std::optional<double>>>;

// InvalidArgument when the shape, a layout ("sources[3]: ...") or an option
// is invalid, as DistSpec::Create and PlanRedistribution check them;
// ResourceExhausted when a source's search (native: a pair's) reaches
// max_expanded_states or max_search_edges (PlanLimitOf says which,
// planner/steps/plan_limit.h).
absl::StatusOr<CostMatrixResult> CostMatrix(const DeviceMesh& mesh, absl::Span<const int64_t> shape,
                                            DType dtype, absl::Span<const DistState> sources,
                                            absl::Span<const DistState> targets,
                                            const CostMatrixOptions& options);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_MATRIX_H_
