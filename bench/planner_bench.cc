// Planning latency (Google Benchmark): greedy, graph and cached lookups on
// 1-D to 4-D meshes with 1-D to 4-D tensors, and CostMatrix against planning
// the same pairs one by one, and the hard 4-D cases of bench/data/hard4d.jsonl
// in pytorch and native mode. See bench/README.md for the command and the
// numbers.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "planner/cost_matrix.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/plan_cache.h"
#include "planner/planner.h"

namespace reshard {
namespace {

struct Case {
  DistSpec src;
  DistSpec dst;
};

// A `mesh_ndim`-D mesh of size 2 per dim (4 for the first dim, so that
// sizes differ) and a tensor of `tensor_ndim` dims of uneven sizes. The
// source shards tensor dim 0 over every mesh dim, the destination shards the
// last tensor dim, with a Partial (graph) or a Replicate (greedy, which cannot
// go S -> P) on mesh dim 0; with `reversed_order` both use non-default shard
// orders, which forces the graph planner.
Case MakeCase(int mesh_ndim, int tensor_ndim, bool reversed_order, bool partial) {
  std::vector<int64_t> sizes(mesh_ndim, 2);
  sizes[0] = 4;
  std::vector<int64_t> shape;
  for (int d = 0; d < tensor_ndim; ++d) shape.push_back(64 + 13 * d);
  DeviceMesh mesh = *DeviceMesh::Create(sizes);
  std::string src, dst;
  for (int m = 0; m < mesh_ndim; ++m) {
    std::string k =
        reversed_order && mesh_ndim > 1 ? absl::StrCat("[", mesh_ndim - 1 - m, "]") : "";
    absl::StrAppend(&src, "S(0)", k);
    if (m == 0 && mesh_ndim > 1) {
      absl::StrAppend(&dst, partial ? "P(sum)" : "R");
    } else {
      std::string kd =
          reversed_order && mesh_ndim > 2 ? absl::StrCat("[", mesh_ndim - 1 - m, "]") : "";
      absl::StrAppend(&dst, "S(", tensor_ndim - 1, ")", kd);
    }
  }
  if (mesh_ndim == 1) dst = absl::StrCat("S(", tensor_ndim - 1, ")");
  return Case{*DistSpec::Parse(mesh, src, shape, DType::kF32),
              *DistSpec::Parse(mesh, dst, shape, DType::kF32)};
}

void PlanLoop(benchmark::State& state, Algorithm algorithm, bool reversed_order) {
  Case c = MakeCase(state.range(0), state.range(1), reversed_order,
                    /*partial=*/algorithm == Algorithm::kGraph);
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = algorithm;
  int64_t expanded = 0;
  for (auto _ : state) {
    absl::StatusOr<Plan> plan = PlanRedistribution(c.src, c.dst, options);
    if (!plan.ok()) {
      state.SkipWithError(plan.status().ToString().c_str());
      return;
    }
    expanded = plan->expanded_states;
    benchmark::DoNotOptimize(plan->cost);
  }
  state.counters["expanded_states"] = static_cast<double>(expanded);
  state.SetLabel(absl::StrCat(c.src.state().ToString(), " -> ", c.dst.state().ToString()));
}

void BM_Greedy(benchmark::State& state) { PlanLoop(state, Algorithm::kGreedy, false); }
void BM_GraphDefaultOrder(benchmark::State& state) { PlanLoop(state, Algorithm::kGraph, false); }
void BM_GraphShardOrder(benchmark::State& state) { PlanLoop(state, Algorithm::kGraph, true); }

void BM_CachedLookup(benchmark::State& state) {
  Case c = MakeCase(state.range(0), state.range(1), true, true);
  PlanCache cache;
  PlanOptions options{PlanMode::kPyTorch};
  if (!cache.GetOrPlan(c.src, c.dst, options).ok()) {
    state.SkipWithError("planning failed");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::shared_ptr<const Plan>> plan = cache.GetOrPlan(c.src, c.dst, options);
    benchmark::DoNotOptimize(plan);
  }
}

void MeshByTensor(benchmark::internal::Benchmark* b) {
  b->ArgNames({"mesh_dims", "tensor_dims"});
  for (int m = 1; m <= 4; ++m) {
    for (int t = 1; t <= 4; ++t) b->Args({m, t});
  }
}

// All pairs of `count` layouts of a 1024x4096 f32 tensor on a 2x...x2 mesh of
// `mesh_ndim` dims: every mesh dim R, S(0), S(1) or P(sum) (default shard
// order), the first `count` of these in lexicographic order, stepping by 2
// when there are twice as many.
struct LayoutSet {
  DeviceMesh mesh;
  std::vector<int64_t> shape = {1024, 4096};
  std::vector<DistSpec> specs;
  std::vector<DistState> states;
};
LayoutSet MakeLayouts(int mesh_ndim, int count) {
  LayoutSet set{*DeviceMesh::Create(std::vector<int64_t>(mesh_ndim, 2))};
  const char* const kTokens[] = {"R", "S(0)", "S(1)", "P(sum)"};
  int total = 1;
  for (int m = 0; m < mesh_ndim; ++m) total *= 4;
  const int stride = total / count;
  for (int i = 0; i < total; i += stride) {
    std::string text;
    for (int m = 0, k = i; m < mesh_ndim; ++m, k /= 4) absl::StrAppend(&text, kTokens[k % 4]);
    set.specs.push_back(*DistSpec::Parse(set.mesh, text, set.shape, DType::kF32));
    set.states.push_back(set.specs.back().state());
  }
  return set;
}

void CostMatrixLoop(benchmark::State& state, PlanMode mode) {
  LayoutSet set = MakeLayouts(state.range(0), state.range(1));
  CostMatrixOptions options;
  options.mode = mode;
  options.threads = 1;  // one thread's work, as the other benchmarks measure
  // Native: nccl, as `reshard costs` (pytorch mode: pytorch, the default).
  if (mode == PlanMode::kNative) options.cost_model = DefaultNativeCostModel();
  for (auto _ : state) {
    absl::StatusOr<CostMatrixResult> m =
        CostMatrix(set.mesh, set.shape, DType::kF32, set.states, set.states, options);
    if (!m.ok()) {
      state.SkipWithError(m.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(m->data());
  }
  const double pairs = static_cast<double>(set.states.size() * set.states.size());
  state.counters["pairs_per_second"] =
      benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CostMatrix(benchmark::State& state) { CostMatrixLoop(state, PlanMode::kPyTorch); }
// Native mode (nccl): one graph per Partial ops and target shard orders, a
// distance table per target, a short A* per pair (spec §5.2 item 6).
void BM_CostMatrixNative(benchmark::State& state) { CostMatrixLoop(state, PlanMode::kNative); }

// The same pairs planned one by one (graph planner), as `reshard batch` would.
void PairByPairLoop(benchmark::State& state, PlanMode mode) {
  LayoutSet set = MakeLayouts(state.range(0), state.range(1));
  PlanOptions options{mode};
  if (mode == PlanMode::kNative) options.cost_model = DefaultNativeCostModel();
  options.algorithm = Algorithm::kGraph;
  for (auto _ : state) {
    double sum = 0;
    for (const DistSpec& src : set.specs) {
      for (const DistSpec& dst : set.specs) {
        absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, options);
        if (plan.ok()) sum += plan->cost;
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  const double pairs = static_cast<double>(set.specs.size() * set.specs.size());
  state.counters["pairs_per_second"] =
      benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_CostMatrixPairByPair(benchmark::State& state) { PairByPairLoop(state, PlanMode::kPyTorch); }
void BM_CostMatrixNativePairByPair(benchmark::State& state) {
  PairByPairLoop(state, PlanMode::kNative);
}

void MatrixSizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"mesh_dims", "layouts"})
      ->Args({3, 64})
      ->Args({4, 128})
      ->Unit(benchmark::kMillisecond);
}

// The cases of bench/data/hard4d.jsonl (run from the workspace root, or pass
// the file in RESHARD_HARD_CASES), each with the options of its line.
struct HardCase {
  DistSpec src;
  DistSpec dst;
  PlanOptions options;
};
std::vector<HardCase> LoadHardCases(PlanMode mode) {
  const char* env = std::getenv("RESHARD_HARD_CASES");
  std::ifstream in(env != nullptr ? env : "bench/data/hard4d.jsonl");
  std::vector<HardCase> cases;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const DeviceMesh mesh = *DeviceMesh::Create(j["mesh"].get<std::vector<int64_t>>());
    const std::vector<int64_t> shape = j["shape"].get<std::vector<int64_t>>();
    const DType dtype = *ParseDType(j["dtype"].get<std::string>());
    PlanOptions options{mode};
    // Native mode needs a model that prices native steps: alpha-beta, with
    // the line's devices per host.
    const std::string model =
        mode == PlanMode::kNative ? "alpha-beta" : j["cost_model"].get<std::string>();
    options.cost_model = *MakeCostModel(model, j["devices_per_host"].get<int64_t>());
    options.algorithm = Algorithm::kGraph;
    options.coordinate = j["coordinate"].get<std::vector<int64_t>>();
    cases.push_back({*DistSpec::Parse(mesh, j["src"].get<std::string>(), shape, dtype),
                     *DistSpec::Parse(mesh, j["dst"].get<std::string>(), shape, dtype), options});
  }
  return cases;
}

// Plans every case once per iteration; reports time per case and the mean
// number of states expanded.
void HardCasesLoop(benchmark::State& state, PlanMode mode) {
  const std::vector<HardCase> cases = LoadHardCases(mode);
  if (cases.empty()) {
    state.SkipWithError("no cases: run from the workspace root or set RESHARD_HARD_CASES");
    return;
  }
  int64_t expanded = 0;
  for (auto _ : state) {
    expanded = 0;
    for (const HardCase& c : cases) {
      absl::StatusOr<Plan> plan = PlanRedistribution(c.src, c.dst, c.options);
      if (!plan.ok()) {
        state.SkipWithError(plan.status().ToString().c_str());
        return;
      }
      expanded += plan->expanded_states;
      benchmark::DoNotOptimize(plan->cost);
    }
  }
  const double n = static_cast<double>(cases.size());
  state.counters["time_per_case"] = benchmark::Counter(
      n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["expanded_per_case"] = static_cast<double>(expanded) / n;
}

void BM_Hard4dPyTorch(benchmark::State& state) { HardCasesLoop(state, PlanMode::kPyTorch); }
void BM_Hard4dNative(benchmark::State& state) { HardCasesLoop(state, PlanMode::kNative); }

// Native plans (default model) whose permutes and exchanges route over
// large groups, the cases of issue 17: S(0) -> R on one mesh dim of 256 ranks
// (its exchange meets 256 x 256 boxes, at the routing limit, spec §4.2), and
// transposes and exchanges on a 16 x 16 mesh.
void NativeLoop(benchmark::State& state, std::vector<int64_t> sizes, std::vector<int64_t> shape,
                const char* src, const char* dst) {
  const DeviceMesh mesh = *DeviceMesh::Create(sizes);
  const DistSpec from = *DistSpec::Parse(mesh, src, shape, DType::kF32);
  const DistSpec to = *DistSpec::Parse(mesh, dst, shape, DType::kF32);
  PlanOptions options{PlanMode::kNative};
  for (auto _ : state) {
    absl::StatusOr<Plan> plan = PlanRedistribution(from, to, options);
    if (!plan.ok()) {
      state.SkipWithError(plan.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(plan->cost);
  }
  state.SetLabel(absl::StrCat(src, " -> ", dst));
}
void BM_NativeGather256(benchmark::State& state) { NativeLoop(state, {256}, {256}, "S(0)", "R"); }
void BM_NativeTranspose16x16(benchmark::State& state) {
  NativeLoop(state, {16, 16}, {1024, 1024}, "S(0)S(1)", "S(1)S(0)");
}
void BM_NativeExchange16x16(benchmark::State& state) {
  NativeLoop(state, {16, 16}, {1000, 1000}, "S(0)S(1)", "RS(0)");
}

BENCHMARK(BM_Greedy)->Apply(MeshByTensor);
BENCHMARK(BM_GraphDefaultOrder)->Apply(MeshByTensor);
BENCHMARK(BM_GraphShardOrder)->Apply(MeshByTensor);
BENCHMARK(BM_CachedLookup)->Apply(MeshByTensor);
BENCHMARK(BM_CostMatrix)->Apply(MatrixSizes);
BENCHMARK(BM_CostMatrixPairByPair)->Apply(MatrixSizes);
BENCHMARK(BM_CostMatrixNative)->Apply(MatrixSizes);
BENCHMARK(BM_CostMatrixNativePairByPair)->Apply(MatrixSizes);
BENCHMARK(BM_Hard4dPyTorch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Hard4dNative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NativeGather256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NativeTranspose16x16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NativeExchange16x16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace reshard

BENCHMARK_MAIN();
