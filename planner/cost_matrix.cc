#include "planner/cost_matrix.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "planner/costs/bounds/remaining_cost_bound.h"
#include "planner/layout/dist_spec.h"
#include "planner/plan_request.h"
#include "planner/search/edge_source.h"
#include "planner/search/graph_planner.h"
#include "planner/search/native_graph_costs.h"
#include "planner/search/state_search.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

absl::Status CheckLayouts(const DeviceMesh& mesh, absl::Span<const int64_t> shape, DType dtype,
                          absl::Span<const DistState> layouts, absl::string_view name) {
  const std::vector<int64_t> global(shape.begin(), shape.end());
  for (size_t i = 0; i < layouts.size(); ++i) {
    absl::StatusOr<DistSpec> spec = DistSpec::Create(mesh, layouts[i], global, dtype);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(name, "[", i, "]: ", spec.status().message()));
    }
  }
  return absl::OkStatus();
}

// The options of each pair's plan (each entry equals its graph plan's cost).
PlanOptions PairOptions(const CostMatrixOptions& options) {
  PlanOptions plan;
  plan.mode = options.mode;
  plan.algorithm = Algorithm::kGraph;
  plan.cost_model = options.cost_model;
  plan.max_expanded_states = options.max_expanded_states;
  plan.max_search_edges = options.max_search_edges;
  return plan;
}

absl::Status CheckOptions(const CostMatrixOptions& options, const DeviceMesh& mesh) {
  if (options.cost_model == nullptr) {
    return absl::InvalidArgumentError(
        "cost_model: null; pass a model (e.g. MakeCostModel(\"pytorch\"))");
  }
  RESHARD_RETURN_IF_ERROR(ValidatePlanOptions(PairOptions(options), mesh));
  if (options.graph_states_per_pair < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph_states_per_pair: ", options.graph_states_per_pair, "; must be >= 0"));
  }
  if (options.threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads: ", options.threads, "; must be >= 0 (0: one per core)"));
  }
  return absl::OkStatus();
}

// CostMatrixOptions::threads, 0 resolved: the cores this process may run on
// (its affinity mask, which taskset and cpusets narrow), at least 1.
int WorkerThreads(int threads) {
  if (threads > 0) return threads;
  cpu_set_t set;
  const int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                        ? CPU_COUNT(&set)
                        : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cores, 1, CostMatrixOptions::kMaxDefaultThreads);
}

// The searches of one worker, one per set of Partial ops: a StateSearch keeps
// the states and edges it has generated, so every row after the first reuses
// them (the graph depends on the ops, not on the source).
class Searches {
 public:
  Searches(int tensor_ndim, const BoundCostModel& model)
      : tensor_ndim_(tensor_ndim), model_(model) {}
  StateSearch& For(unsigned partial_ops) {
    Entry& entry = by_ops_[partial_ops];
    if (entry.search == nullptr) {
      entry.edges = std::make_unique<CompatEdges>(tensor_ndim_, partial_ops);
      entry.search = std::make_unique<StateSearch>(*entry.edges, model_, nullptr);
    }
    return *entry.search;
  }

 private:
  struct Entry {
    std::unique_ptr<CompatEdges> edges;
    std::unique_ptr<StateSearch> search;
  };
  int tensor_ndim_;
  const BoundCostModel& model_;
  absl::flat_hash_map<unsigned, Entry> by_ops_;
};

// A Dijkstra from `src` on the graph of `ops` (Searches::For) until it has
// popped every target whose index is in `which`, each taken at the cost it
// is popped at.
absl::Status SearchRow(const DistState& src, absl::Span<const DistState> targets, unsigned ops,
                       absl::Span<const size_t> which, const SearchLimits& limits,
                       Searches* searches, std::vector<std::optional<double>>* row) {
  std::vector<DistState> goals;
  for (size_t j : which) goals.push_back(targets[j]);
  StateSearch& search = searches->For(ops);
  const StateSearch::Outcome found =
      search.Run(src, goals, StateSearch::Pass::Distances(), limits.max_expanded_states,
                 limits.max_search_edges);
  if (found == StateSearch::Outcome::kBound) {
    return SearchFailure(search, found, src, goals.front(), limits);
  }
  for (size_t j : which) {
    if (search.Popped(targets[j])) (*row)[j] = search.CostTo(targets[j]);
  }
  return absl::OkStatus();
}

// One row. Each pair's graph has the Partial ops of its source and target
// (the R -> P edges depend on them, spec §4 case 6): one Dijkstra per
// distinct set of ops would do (spec §5.1 item 6). First, though, one
// Dijkstra on the graph of all of the row's ops (a supergraph of every
// pair's, spec §5.1 item 6) answers each target whose path there holds no
// Partial op outside its pair's set; only the others take their own set's
// Dijkstra. Should that first search pass a limit, every target takes its
// own set's, as if it had not run.
absl::Status FillRow(const DistState& src, absl::Span<const DistState> targets,
                     const SearchLimits& limits, Searches* searches,
                     std::vector<std::optional<double>>* row) {
  row->assign(targets.size(), std::nullopt);
  std::vector<unsigned> op_sets;
  unsigned every_op = 0;
  for (const DistState& t : targets) {
    op_sets.push_back(src.PartialOps() | t.PartialOps());
    every_op |= op_sets.back();
  }
  std::vector<size_t> left;
  StateSearch& shared = searches->For(every_op);
  const StateSearch::Outcome found =
      shared.Run(src, targets, StateSearch::Pass::Distances(), limits.max_expanded_states,
                 limits.max_search_edges);
  for (size_t j = 0; j < targets.size(); ++j) {
    if (found == StateSearch::Outcome::kBound) {
      left.push_back(j);
    } else if (!shared.Popped(targets[j])) {
      continue;  // unreachable on the supergraph, so on the pair's graph too
    } else if (op_sets[j] == every_op || (shared.PartialOpsOnPath(targets[j]) & ~op_sets[j]) == 0) {
      (*row)[j] = shared.CostTo(targets[j]);
    } else {
      left.push_back(j);
    }
  }
  std::vector<unsigned> distinct;
  for (size_t j : left) distinct.push_back(op_sets[j]);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<size_t> which;
  for (unsigned ops : distinct) {
    which.clear();
    for (size_t j : left) {
      if (op_sets[j] == ops) which.push_back(j);
    }
    RESHARD_RETURN_IF_ERROR(SearchRow(src, targets, ops, which, limits, searches, row));
  }
  return absl::OkStatus();
}

// The native searches of one worker for pairs whose graph passes a limit
// (NativeGraphCosts::AddReachable, AddGoal), one per Partial ops and goal (the goal
// exchange depends on the whole goal, spec §4.2 edge 13), each keeping its
// states and edges across rows, and its goal's bound: building one (the
// abstract graph of spec §5.2 item 2) costs about as much as a short search.
class NativeSearches {
 public:
  NativeSearches(const CostProblem& problem, DType dtype, const BoundCostModel& model)
      : problem_(problem), dtype_(dtype), model_(model) {}
  // The search holds the edges and the bound: declared after them, it goes first.
  struct Entry {
    std::unique_ptr<NativeEdges> edges;
    std::unique_ptr<RemainingCostBound> bound;  // towards the goal
    std::unique_ptr<StateSearch> search;
  };
  Entry& For(unsigned partial_ops, const DistState& goal) {
    Entry& entry = by_graph_[{partial_ops, goal.bits()}];
    if (entry.search == nullptr) {
      entry.edges = std::make_unique<NativeEdges>(
          problem_.mesh, problem_.global_shape, dtype_, goal, partial_ops,
          std::numeric_limits<int64_t>::max(), model_.memory_backend(), model_.rails_per_host());
      entry.bound =
          std::make_unique<RemainingCostBound>(goal, model_, RemainingCostBound::Graph::kNative);
      entry.search = std::make_unique<StateSearch>(*entry.edges, model_, nullptr);
    }
    return entry;
  }

 private:
  const CostProblem& problem_;
  DType dtype_;
  const BoundCostModel& model_;
  absl::flat_hash_map<std::pair<unsigned, uint64_t>, Entry> by_graph_;
};

// A graph is worth building when its pairs would expand more states alone
// (on 2x2x2x2, about 215 each of its 536): at most `states_per_pair` states
// per pair it serves and kMaxStates in all, bounding time and memory where
// the graphs are large and serve few pairs (e.g. a few layouts on 4x4x4x4).
SearchLimits GraphLimits(const SearchLimits& limits, int64_t states_per_pair, int64_t pairs) {
  constexpr int64_t kMaxStates = int64_t{1} << 14;
  constexpr int64_t kEdgesPerState = 128;
  SearchLimits graph;
  const int64_t budget =
      pairs > 0 && states_per_pair > kMaxStates / pairs ? kMaxStates : states_per_pair * pairs;
  graph.max_expanded_states = std::min({limits.max_expanded_states, kMaxStates, budget});
  graph.max_search_edges =
      std::min(limits.max_search_edges, kEdgesPerState * graph.max_expanded_states);
  return graph;
}

// One pair the way PlanRedistribution searches it (SearchToward with its
// bound): for graphs past a limit, which may then end the matrix.
absl::Status SearchNativePair(const DistState& src, const DistState& dst,
                              const SearchLimits& limits, NativeSearches* searches,
                              std::optional<double>* cost) {
  NativeSearches::Entry& entry = searches->For(src.PartialOps() | dst.PartialOps(), dst);
  StateSearch& search = *entry.search;
  const StateSearch::Outcome found = SearchToward(&search, src, dst, entry.bound.get(), limits);
  if (found == StateSearch::Outcome::kBound) return SearchFailure(search, found, src, dst, limits);
  if (found == StateSearch::Outcome::kReached) *cost = search.CostTo(dst);
  return absl::OkStatus();
}

// Spec §5.2 item 6: column j of a native matrix, each pair's exact cheapest
// cost on its graph, the cost PlanRedistribution's search returns for it.
// One graph serves every pair: it has every Partial op of the matrix, and
// each pair's search keeps to the states of its own ops, which are its
// graph (NativeGraphCosts::Cost). Workers split the columns, not the rows:
// what a column needs beyond the shared graph (its goal edges, their prices,
// its table) is its own, so no two workers build it. Every source joins the
// graph first, so that the table, made for the graph as it then is, is made
// once.
absl::Status FillNativeColumn(absl::Span<const DistState> sources, const DistState& dst, size_t j,
                              const SearchLimits& limits, NativeGraphCosts* graph,
                              NativeSearches* searches, CostMatrixResult* result) {
  for (const DistState& src : sources) graph->AddReachable(src);
  // False when the graph, or it with dst's goal edges, would pass a limit:
  // the column's pairs are then searched alone.
  const bool shared = graph->AddGoal(dst);
  for (size_t i = 0; i < sources.size(); ++i) {
    std::optional<double>& cost = (*result)[i][j];
    if (shared) {
      cost = graph->Cost(sources[i], dst);
    } else {
      RESHARD_RETURN_IF_ERROR(SearchNativePair(sources[i], dst, limits, searches, &cost));
    }
  }
  graph->DropGoal(dst);  // the column is done
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CostMatrixResult> CostMatrix(const DeviceMesh& mesh, absl::Span<const int64_t> shape,
                                            DType dtype, absl::Span<const DistState> sources,
                                            absl::Span<const DistState> targets,
                                            const CostMatrixOptions& options) {
  RESHARD_RETURN_IF_ERROR(CheckOptions(options, mesh));
  // The shape alone, on an all-Replicate layout, so that its errors are not
  // blamed on a layout.
  if (absl::StatusOr<DistSpec> s = DistSpec::Create(
          mesh, DistState(mesh.ndim()), std::vector<int64_t>(shape.begin(), shape.end()), dtype);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("shape: ", s.status().message()));
  }
  RESHARD_RETURN_IF_ERROR(CheckLayouts(mesh, shape, dtype, sources, "sources"));
  RESHARD_RETURN_IF_ERROR(CheckLayouts(mesh, shape, dtype, targets, "targets"));
  const CostProblem problem{mesh, std::vector<int64_t>(shape.begin(), shape.end()),
                            ItemSize(dtype)};
  const std::unique_ptr<const BoundCostModel> model = options.cost_model->Bind(problem);
  const int tensor_ndim = static_cast<int>(shape.size());
  const bool native = ResolvedMode(PairOptions(options)) == PlanMode::kNative;

  const SearchLimits limits{options.max_expanded_states, options.max_search_edges};
  unsigned every_op = 0;  // of the matrix: the native graph's (FillNativeColumn)
  for (const DistState& s : sources) every_op |= s.PartialOps();
  for (const DistState& t : targets) every_op |= t.PartialOps();
  const SearchLimits graph_limits =
      GraphLimits(limits, options.graph_states_per_pair,
                  static_cast<int64_t>(sources.size()) * static_cast<int64_t>(targets.size()));
  CostMatrixResult result(sources.size(),
                          std::vector<std::optional<double>>(targets.size(), std::nullopt));
  // Pytorch mode splits the rows among the workers, native mode the columns
  // (FillNativeColumn); each worker takes the next one until none is left.
  const size_t lines = native ? targets.size() : sources.size();
  std::atomic<size_t> next{0};
  absl::Mutex mu;
  absl::Status failure;
  size_t lines_done = 0;  // guarded by mu
  auto work = [&] {
    Searches searches(tensor_ndim, *model);
    NativeGraphCosts native_graph(mesh, tensor_ndim, every_op, *model, graph_limits);
    NativeSearches native_searches(problem, dtype, *model);
    for (size_t i = next++; i < lines; i = next++) {
      absl::Status s = native ? FillNativeColumn(sources, targets[i], i, limits, &native_graph,
                                                 &native_searches, &result)
                              : FillRow(sources[i], targets, limits, &searches, &result[i]);
      absl::MutexLock lock(&mu);
      if (!s.ok() && failure.ok()) failure = s;
      ++lines_done;
      if (options.on_progress) options.on_progress(static_cast<double>(lines_done) / lines);
    }
  };
  std::vector<std::thread> workers;
  const size_t extra =
      std::min<size_t>(WorkerThreads(options.threads), std::max<size_t>(lines, 1)) - 1;
  for (size_t t = 0; t < extra; ++t) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  if (!failure.ok()) return failure;
  return result;
}

}  // namespace reshard
