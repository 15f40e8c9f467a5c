// CostMatrix (planner/cost_matrix.h) against planning each pair alone.
#include "planner/cost_matrix.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/step.h"

namespace reshard {
namespace {

// Layouts of a 13x8x6 tensor on a 2x3x2 mesh: uneven splits, shard orders and
// Partials of several ops (which change the graph per pair, spec §4 case 6).
const char* const kLayouts[] = {
    "RRR",
    "S(0)RR",
    "S(0)S(0)R",
    "S(0)[1]S(0)[0]R",
    "P(sum)S(1)R",
    "P(avg)P(sum)S(0)",
    "P(max)RS(2)",
    "RS(2)P(max)",
    "S(1)S(0)S(2)",
    "S(2)[1]RS(2)[0]",
    "P(min)RR",
    "RRP(sum)",
    "S(0)[2]S(0)[0]S(0)[1]",
    "P(max)P(max)R",
};

// Parsed layouts: by default kLayouts, bf16.
struct Layouts {
  DeviceMesh mesh;
  std::vector<int64_t> shape;
  DType dtype;
  std::vector<DistSpec> specs;
  std::vector<DistState> states;
  Layouts(std::vector<int64_t> mesh_sizes, std::vector<int64_t> tensor_shape, DType type,
          std::vector<const char*> texts)
      : mesh(*DeviceMesh::Create(mesh_sizes)), shape(std::move(tensor_shape)), dtype(type) {
    for (const char* text : texts) {
      specs.push_back(*DistSpec::Parse(mesh, text, shape, type));
      states.push_back(specs.back().state());
    }
  }
  Layouts()
      : Layouts({2, 3, 2}, {13, 8, 6}, DType::kBF16,
                std::vector<const char*>(std::begin(kLayouts), std::end(kLayouts))) {}
};

// `mode` as both CostMatrix and PlanRedistribution get it.
void ExpectEqualsPairByPair(const std::string& model_name, PlanMode mode = PlanMode::kPyTorch) {
  Layouts l;
  CostMatrixOptions options;
  options.mode = mode;
  options.cost_model = *MakeCostModel(model_name, 4);
  absl::StatusOr<CostMatrixResult> matrix =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, options);
  ASSERT_TRUE(matrix.ok()) << matrix.status();
  ASSERT_EQ(matrix->size(), l.states.size());
  PlanOptions plan_options{mode};
  plan_options.algorithm = Algorithm::kGraph;
  plan_options.cost_model = options.cost_model;
  int with_plan = 0;
  for (size_t i = 0; i < l.specs.size(); ++i) {
    ASSERT_EQ((*matrix)[i].size(), l.specs.size());
    for (size_t j = 0; j < l.specs.size(); ++j) {
      absl::StatusOr<Plan> plan = PlanRedistribution(l.specs[i], l.specs[j], plan_options);
      const std::optional<double>& cost = (*matrix)[i][j];
      ASSERT_EQ(plan.ok(), cost.has_value()) << kLayouts[i] << " -> " << kLayouts[j];
      if (!plan.ok()) continue;
      ++with_plan;
      // Bit-identical: the same sums in the same order.
      EXPECT_EQ(*cost, plan->cost) << kLayouts[i] << " -> " << kLayouts[j];
    }
  }
  EXPECT_GT(with_plan, 100);
}

TEST(CostMatrixTest, EqualsPlanningEachPairAloneWithPytorchCosts) {
  ExpectEqualsPairByPair("pytorch");
}

TEST(CostMatrixTest, EqualsPlanningEachPairAloneWithConstantCosts) {
  ExpectEqualsPairByPair("pytorch-const");
}

// Native mode (spec §5.2): each pair is searched on its own target's graph.
TEST(CostMatrixTest, EqualsPlanningEachPairAloneInNativeMode) {
  ExpectEqualsPairByPair("alpha-beta", PlanMode::kNative);
}

// kAuto follows the model, as PlanOptions::mode does.
TEST(CostMatrixTest, AutoModeIsNativeForANativeModel) {
  Layouts l;
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("alpha-beta", 4);
  absl::StatusOr<CostMatrixResult> automatic =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, options);
  options.mode = PlanMode::kNative;
  absl::StatusOr<CostMatrixResult> native =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, options);
  options.mode = PlanMode::kPyTorch;
  absl::StatusOr<CostMatrixResult> pytorch =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, options);
  ASSERT_TRUE(automatic.ok() && native.ok() && pytorch.ok());
  EXPECT_EQ(*automatic, *native);
  EXPECT_NE(*native, *pytorch);  // group steps and permutes make some pairs cheaper
}

TEST(CostMatrixTest, NativeModeNeedsANativeModel) {
  Layouts l;
  CostMatrixOptions options;
  options.mode = PlanMode::kNative;
  options.cost_model = *MakeCostModel("pytorch", 4);
  absl::StatusOr<CostMatrixResult> m =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, options);
  EXPECT_TRUE(absl::IsInvalidArgument(m.status()));
  EXPECT_TRUE(absl::StrContains(m.status().message(), "mode: native")) << m.status();
}

// The matrix from `sources` to every layout of `l` under `options`, on
// `threads` workers (0: one per core).
absl::StatusOr<CostMatrixResult> MatrixOnThreads(const Layouts& l,
                                                 absl::Span<const DistState> sources,
                                                 CostMatrixOptions options, int threads) {
  options.threads = threads;
  return CostMatrix(l.mesh, l.shape, l.dtype, sources, l.states, options);
}

// Each native worker keeps its own graph (states and edges reused across its
// columns): which columns a worker takes must not change a cost.
TEST(CostMatrixTest, ThreadsGiveTheSameNativeMatrix) {
  const Layouts l;
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("alpha-beta", 4);
  absl::StatusOr<CostMatrixResult> a = MatrixOnThreads(l, l.states, options, 1);
  absl::StatusOr<CostMatrixResult> b = MatrixOnThreads(l, l.states, options, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

// The default (0) takes one thread per core: the same matrix again.
TEST(CostMatrixTest, ThreadsGiveTheSameMatrix) {
  const Layouts l;
  absl::StatusOr<CostMatrixResult> a = MatrixOnThreads(l, l.states, CostMatrixOptions(), 1);
  absl::StatusOr<CostMatrixResult> b = MatrixOnThreads(l, l.states, CostMatrixOptions(), 3);
  absl::StatusOr<CostMatrixResult> c = MatrixOnThreads(l, l.states, CostMatrixOptions(), 0);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *c);
}

// Native workers split the columns: a matrix with fewer rows than threads
// and more columns still gets every entry, the same as on one thread.
TEST(CostMatrixTest, ThreadsSplitANativeMatrixByColumns) {
  const Layouts l;
  const std::vector<DistState> sources(l.states.begin(), l.states.begin() + 2);
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 4);
  absl::StatusOr<CostMatrixResult> a = MatrixOnThreads(l, sources, options, 1);
  absl::StatusOr<CostMatrixResult> b = MatrixOnThreads(l, sources, options, 4);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ(*a, *b);
}

// Progress: one call per row (pytorch) or column (native), rising to 1.
TEST(CostMatrixTest, ProgressRisesToOneOncePerLine) {
  Layouts l;
  std::vector<DistState> sources(l.states.begin(), l.states.begin() + 2);
  for (const char* model : {"pytorch", "nccl"}) {
    CostMatrixOptions options;
    options.cost_model = *MakeCostModel(model, 4);
    options.threads = 2;
    std::vector<double> seen;
    options.on_progress = [&seen](double done) { seen.push_back(done); };
    ASSERT_TRUE(CostMatrix(l.mesh, l.shape, DType::kBF16, sources, l.states, options).ok());
    const size_t lines = std::string(model) == "nccl" ? l.states.size() : sources.size();
    ASSERT_EQ(seen.size(), lines) << model;
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << model;
    EXPECT_EQ(seen.back(), 1.0) << model;
  }
}

TEST(CostMatrixTest, RectangularMatrixHasARowPerSource) {
  Layouts l;
  std::vector<DistState> sources(l.states.begin(), l.states.begin() + 2);
  absl::StatusOr<CostMatrixResult> m =
      CostMatrix(l.mesh, l.shape, DType::kBF16, sources, l.states, CostMatrixOptions());
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].size(), l.states.size());
  EXPECT_EQ((*m)[0][0], 0.0);  // a layout to itself: the empty plan
}

// A random valid state: placements R, S or P (one op, or sum and avg
// together), shuffled shard orders.
DistState RandomState(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim) {
  static constexpr ReduceOp kOps[][2] = {{ReduceOp::kSum, ReduceOp::kSum},
                                         {ReduceOp::kMax, ReduceOp::kMax},
                                         {ReduceOp::kSum, ReduceOp::kAvg}};
  const ReduceOp* ops = kOps[rng() % 3];
  std::vector<Placement> placements;
  for (int m = 0; m < mesh_ndim; ++m) {
    switch (rng() % 4) {
      case 0:
        placements.push_back(Placement::Replicate());
        break;
      case 1:
        placements.push_back(Placement::Partial(ops[rng() % 2]));
        break;
      default:
        placements.push_back(Placement::Shard(static_cast<int>(rng() % tensor_ndim)));
    }
  }
  ShardOrder order = DistState::WithDefaultOrder(placements).shard_order();
  for (ShardOrderEntry& e : order) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
  return *DistState::Create(placements, order);
}

// A random native matrix case: 2-D to 4-D meshes (size-1 dims included),
// 1-3 tensor dims of uneven sizes, layouts as RandomState makes them.
Layouts RandomLayouts(std::mt19937_64& rng, int num_layouts) {
  const int mesh_ndim = 2 + static_cast<int>(rng() % 3);
  std::vector<int64_t> sizes;
  for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(1 + rng() % (mesh_ndim == 4 ? 2 : 3));
  const int tensor_ndim = 1 + static_cast<int>(rng() % 3);
  std::vector<int64_t> shape;
  for (int d = 0; d < tensor_ndim; ++d) shape.push_back(5 + rng() % 60);
  Layouts r(sizes, shape, DType::kF32, {});
  while (static_cast<int>(r.states.size()) < num_layouts) {
    const DistState s = RandomState(rng, mesh_ndim, tensor_ndim);
    absl::StatusOr<DistSpec> spec = DistSpec::Create(r.mesh, s, r.shape, DType::kF32);
    if (!spec.ok()) continue;  // e.g. more shards than elements
    r.specs.push_back(*spec);
    r.states.push_back(s);
  }
  return r;
}

// `matrix` against the plans of its pairs (row-major; an error where the
// plan hit a limit): bit-identical costs, and ResourceExhausted exactly when
// some pair's plan hit a limit. Returns the entries compared.
int ExpectMatrixEqualsPlans(const Layouts& r, const absl::StatusOr<CostMatrixResult>& matrix,
                            const std::vector<absl::StatusOr<Plan>>& plans,
                            const std::string& label) {
  bool plans_ok = true;
  int compared = 0;
  for (size_t i = 0; i < r.states.size(); ++i) {
    for (size_t j = 0; j < r.states.size(); ++j) {
      const absl::StatusOr<Plan>& plan = plans[i * r.states.size() + j];
      const std::string pair = absl::StrCat(label, " mesh ", r.mesh.ToString(), " ",
                                            r.states[i].ToString(), " -> ", r.states[j].ToString());
      if (!plan.ok()) {
        EXPECT_TRUE(absl::IsResourceExhausted(plan.status())) << pair << ": " << plan.status();
        plans_ok = false;
      } else if (matrix.ok() && !(*matrix)[i][j].has_value()) {
        ADD_FAILURE() << pair << ": no cost, plan " << plan->cost;
      } else if (matrix.ok()) {
        EXPECT_EQ(*(*matrix)[i][j], plan->cost) << pair;
        ++compared;
      }
    }
  }
  EXPECT_EQ(matrix.ok(), plans_ok) << label << ": " << matrix.status();
  return compared;
}

// `l`'s native matrix under `options` (model, limits), once per graph budget,
// against PlanRedistribution of every pair under the same model and limits.
struct MatrixCheck {
  int compared = 0;              // entries compared, over all budgets
  bool exhausted_alone = false;  // budget 0 (every pair alone) hit a limit
};
MatrixCheck ExpectNativeMatrixEqualsPlans(const Layouts& l, CostMatrixOptions options,
                                          std::initializer_list<int64_t> budgets,
                                          const std::string& label) {
  options.mode = PlanMode::kNative;
  PlanOptions plan_options{PlanMode::kNative};
  plan_options.algorithm = Algorithm::kGraph;
  plan_options.cost_model = options.cost_model;
  plan_options.max_expanded_states = options.max_expanded_states;
  std::vector<absl::StatusOr<Plan>> plans;
  for (const DistSpec& src : l.specs) {
    for (const DistSpec& dst : l.specs) plans.push_back(PlanRedistribution(src, dst, plan_options));
  }
  MatrixCheck check;
  for (int64_t budget : budgets) {
    options.graph_states_per_pair = budget;
    absl::StatusOr<CostMatrixResult> matrix =
        CostMatrix(l.mesh, l.shape, DType::kF32, l.states, l.states, options);
    check.compared +=
        ExpectMatrixEqualsPlans(l, matrix, plans, absl::StrCat(label, " budget ", budget));
    if (!matrix.ok() && budget == 0) check.exhausted_alone = true;
  }
  return check;
}

// Random cases, each matrix against PlanRedistribution of its pairs, with
// graphs built as by default, always (a budget past any graph) and never
// (every pair alone). Returns how many cases hit a limit.
int ExpectRandomNativeCasesEqualPlans(const std::string& model_name, int64_t max_states, int cases,
                                      uint64_t seed) {
  std::mt19937_64 rng(seed);
  int compared = 0;
  int exhausted = 0;
  for (int c = 0; c < cases; ++c) {
    const Layouts r = RandomLayouts(rng, 6);
    CostMatrixOptions options;
    options.cost_model = *MakeCostModel(model_name, 1 + static_cast<int>(rng() % 4));
    options.max_expanded_states = max_states;
    const MatrixCheck check = ExpectNativeMatrixEqualsPlans(r, options, {32, int64_t{1} << 30, 0},
                                                            absl::StrCat("case ", c));
    compared += check.compared;
    if (check.exhausted_alone) ++exhausted;
  }
  EXPECT_GT(compared, (cases - exhausted) * 36 * 3 / 2);
  return exhausted;
}

// Spec §5.2 item 6: each pair's exact cheapest cost on its own graph, shared
// graphs and distance tables notwithstanding.
TEST(CostMatrixTest, RandomNativeMatricesEqualPlanningEachPairWithNcclCosts) {
  EXPECT_EQ(ExpectRandomNativeCasesEqualPlans("nccl", 1000000, 16, 17), 0);
}

TEST(CostMatrixTest, RandomNativeMatricesEqualPlanningEachPairWithAlphaBetaCosts) {
  EXPECT_EQ(ExpectRandomNativeCasesEqualPlans("alpha-beta", 1000000, 16, 18), 0);
}

// Spec §5.1 item 6 on random layouts mixing the ops sum, max and sum with
// avg: each row's one search on the graph of all the row's Partial ops, and
// the searches of the targets whose path there holds another op, give every
// pair the cost of its plan on its own graph.
void ExpectRandomPytorchCasesEqualPlans(const std::string& model_name, int cases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int compared = 0;
  for (int c = 0; c < cases; ++c) {
    const Layouts r = RandomLayouts(rng, 6);
    CostMatrixOptions options;
    options.mode = PlanMode::kPyTorch;
    options.cost_model = *MakeCostModel(model_name, 1 + static_cast<int>(rng() % 4));
    PlanOptions plan_options{PlanMode::kPyTorch};
    plan_options.algorithm = Algorithm::kGraph;
    plan_options.cost_model = options.cost_model;
    std::vector<absl::StatusOr<Plan>> plans;
    for (const DistSpec& src : r.specs) {
      for (const DistSpec& dst : r.specs) {
        plans.push_back(PlanRedistribution(src, dst, plan_options));
      }
    }
    compared += ExpectMatrixEqualsPlans(
        r, CostMatrix(r.mesh, r.shape, DType::kF32, r.states, r.states, options), plans,
        absl::StrCat("case ", c));
  }
  EXPECT_GT(compared, cases * 36 / 2);
}

TEST(CostMatrixTest, RandomPytorchMatricesEqualPlanningEachPairWithPytorchCosts) {
  ExpectRandomPytorchCasesEqualPlans("pytorch", 24, 23);
}

TEST(CostMatrixTest, RandomPytorchMatricesEqualPlanningEachPairWithConstantCosts) {
  ExpectRandomPytorchCasesEqualPlans("pytorch-const", 24, 29);
}

// A model named `name` whose every problem binds to a `Bound`.
template <typename Bound>
class ModelOf : public CostModel {
 public:
  explicit ModelOf(std::string name) : CostModel(std::move(name)) {}
  std::unique_ptr<const BoundCostModel> Bind(const CostProblem&) const override {
    return std::make_unique<Bound>();
  }
};

// The pytorch-mode graph plan of every pair of `l` under `model`, row-major.
std::vector<absl::StatusOr<Plan>> PytorchPlans(const Layouts& l,
                                               std::shared_ptr<const CostModel> model) {
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGraph;
  options.cost_model = std::move(model);
  std::vector<absl::StatusOr<Plan>> plans;
  for (const DistSpec& src : l.specs) {
    for (const DistSpec& dst : l.specs) plans.push_back(PlanRedistribution(src, dst, options));
  }
  return plans;
}

absl::StatusOr<CostMatrixResult> PytorchMatrix(const Layouts& l,
                                               std::shared_ptr<const CostModel> model) {
  CostMatrixOptions options;
  options.mode = PlanMode::kPyTorch;
  options.cost_model = std::move(model);
  return CostMatrix(l.mesh, l.shape, l.dtype, l.states, l.states, options);
}

// Prices of no pattern, each step deferred (spec §5.2 item 7) at half its
// price and refined at three quarters: every edge of a row's search goes
// through stand-ins, as an exchange's does under nccl.
struct DeferringCosts : BoundCostModel {
  double StepCost(const DistState& current, const Step& step) const override {
    return 0.1 + 0.37 * static_cast<double>(step.kind) +
           0.013 * static_cast<double>(current.bits() % 97) + 0.7 * step.group.bits();
  }
  std::optional<double> DeferredCostBound(const DistState& current,
                                          const Step& step) const override {
    return StepCost(current, step) * 0.5;
  }
  std::optional<double> RefinedCostBound(const DistState& current,
                                         const Step& step) const override {
    return StepCost(current, step) * 0.75;
  }
};

TEST(CostMatrixTest, DeferredStepsKeepPytorchRowCostsExact) {
  const Layouts l;
  const auto model = std::make_shared<ModelOf<DeferringCosts>>("deferring");
  EXPECT_EQ(
      ExpectMatrixEqualsPlans(l, PytorchMatrix(l, model), PytorchPlans(l, model), "deferring"),
      14 * 14);
}

// Chunks dear, every other step cheap: RR -> S(0)R costs 1 through P(sum)R
// (partition, then reduce_scatter), where a P(sum) is on the graph, and 10
// (the chunk) on the pair's own graph, which has no P(sum) (spec §4 case 6).
struct DearChunkCosts : BoundCostModel {
  double StepCost(const DistState&, const Step& step) const override {
    if (step.kind == StepKind::kChunk) return 10;
    return IsCommunicating(step.kind) ? 1 : 0;
  }
};

// A row's target whose path on the row's graph (with the ops of every
// target) holds an op its pair's graph lacks takes its own graph's search.
TEST(CostMatrixTest, TargetsWhosePathHoldsAnotherOpTakeTheirOwnGraph) {
  const Layouts l({2, 2}, {8, 8}, DType::kF32, {"RR", "S(0)R", "P(sum)R"});
  const auto model = std::make_shared<ModelOf<DearChunkCosts>>("dear-chunk");
  absl::StatusOr<CostMatrixResult> m = PytorchMatrix(l, model);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)[0][1], 10.0);
  EXPECT_EQ((*m)[0][2], 0.0);
  EXPECT_EQ(ExpectMatrixEqualsPlans(l, m, PytorchPlans(l, model), "dear chunk"), 9);
}

// Graphs past the limit are searched pair by pair: the same costs, and the
// same pairs fail as when planned alone.
TEST(CostMatrixTest, RandomNativeMatricesObeyTheStateLimitAsPlansDo) {
  const int exhausted = ExpectRandomNativeCasesEqualPlans("nccl", 40, 16, 19);
  EXPECT_GT(exhausted, 0);
  EXPECT_LT(exhausted, 16);
}

// Targets share their Partial ops' graph but not their goal edges (spec §4.2
// edge 13 leads to the whole goal): RRP(sum)R after RP(sum)RR.
TEST(CostMatrixTest, TargetsAlikeInShardOrdersKeepTheirOwnGoalExchanges) {
  const Layouts l({2, 2, 2, 2}, {1024, 4096}, DType::kF32,
                  {"S(1)RRR", "RP(sum)RR", "RRP(sum)R", "RRRP(sum)"});
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 8);
  // A shared graph, or none.
  EXPECT_EQ(ExpectNativeMatrixEqualsPlans(l, options, {int64_t{1} << 30, 0}, "").compared, 32);
}

// Spec §5.2 item 6: targets differing only in shard orders share one graph
// now, each with its own goal permute and goal-ordered reduce_scatters
// (spec §4.2 edges 10 and 12), from sources whose Partials and orders those
// edges serve.
TEST(CostMatrixTest, TargetsDifferingInShardOrdersKeepTheirOwnGoalEdges) {
  const Layouts l({2, 2, 2, 2}, {1024, 4096}, DType::kF32,
                  {"P(sum)P(sum)P(sum)R", "S(0)[0]S(0)[1]S(0)[2]R", "S(0)[2]S(0)[0]S(0)[1]R",
                   "S(0)[1]S(0)[2]S(0)[0]R", "S(1)[1]S(1)[0]RS(0)", "S(1)[0]S(1)[1]RS(0)"});
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 8);
  const int64_t by_default = CostMatrixOptions().graph_states_per_pair;
  EXPECT_EQ(ExpectNativeMatrixEqualsPlans(l, options, {by_default}, "").compared, 36);
}

// `count` distinct random layouts from {R, S(0), S(1), S(2), P(sum)}^4 on
// 2x2x2x2 for an f32 tensor of `shape` (on large ones their exchanges'
// routed loads lie far above the deferred bounds). The matrix against each
// pair's plan.
void ExpectRandomNativeMatrixExact(uint64_t seed, std::vector<int64_t> shape, size_t count = 12) {
  std::mt19937_64 rng(seed);
  const char* const kPlacements[] = {"R", "S(0)", "S(1)", "S(2)", "P(sum)"};
  std::vector<std::string> texts;
  while (texts.size() < count) {
    std::string text;
    for (int m = 0; m < 4; ++m) text += kPlacements[rng() % 5];
    if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(text);
  }
  std::vector<const char*> layouts;
  for (const std::string& text : texts) layouts.push_back(text.c_str());
  const Layouts l({2, 2, 2, 2}, std::move(shape), DType::kF32, layouts);
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 8);
  EXPECT_EQ(ExpectNativeMatrixEqualsPlans(l, options, {int64_t{1} << 30}, "").compared,
            static_cast<int>(count * count));
}

// Spec §5.2 item 6 where pricing exchanges raises the targets' tables, so
// later pairs search under repriced bounds: still each pair's exact cost.
TEST(CostMatrixTest, RepricedTablesKeepNativeCostsExact) {
  ExpectRandomNativeMatrixExact(2727, {1031, 523, 77});
}

// Spec §5.2 item 6: every exchange edge is made at its refined bound, on a
// large tensor often twice its deferred one: the tables stay consistent
// bounds, and each pair's cost exact.
TEST(CostMatrixTest, ExchangesAtTheirRefinedBoundKeepNativeCostsExact) {
  ExpectRandomNativeMatrixExact(7171, {777, 1500, 61});
}

// Each native column frees its goal's edges and table when it is done
// (NativeGraphCosts::DropGoal); a layout listed twice is a target twice, so
// its second column builds them again: every entry as planned alone.
TEST(CostMatrixTest, ATargetListedTwiceIsBuiltAgainForItsSecondColumn) {
  const Layouts l({2, 2, 2}, {24, 13, 48}, DType::kF32,
                  {"S(1)S(0)P(sum)", "P(sum)S(2)R", "RS(0)[1]S(0)[0]", "S(1)S(0)P(sum)"});
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 8);
  options.threads = 1;
  EXPECT_EQ(ExpectNativeMatrixEqualsPlans(l, options, {int64_t{1} << 30}, "").compared, 16);
}

// The same on a small tensor, where the refined bounds lie close to the
// prices, over more layouts.
TEST(CostMatrixTest, ExchangesAtTheirRefinedBoundKeepSmallTensorCostsExact) {
  ExpectRandomNativeMatrixExact(9696, {96, 200, 77}, 24);
}

// Spec §5.2 item 2: two paths here sum to 22.570659383931403 and one ulp
// more, and g + h rounds alike on both; A* takes the smaller g, so the plan
// costs the exact minimum, as the matrix (computed otherwise) does. Breaking
// that tie by sequence alone planned the ulp-dearer path.
TEST(CostMatrixTest, PlansAndMatrixAgreeWhereTwoSumsRoundOneUlpApart) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2});
  const std::vector<int64_t> shape = {24, 13, 48};
  const DistSpec src = *DistSpec::Parse(mesh, "S(1)S(0)P(sum)", shape, DType::kF32);
  const DistSpec dst = *DistSpec::Parse(mesh, "P(sum)S(2)R", shape, DType::kF32);
  CostMatrixOptions options;
  options.cost_model = *MakeCostModel("nccl", 8);
  options.graph_states_per_pair = int64_t{1} << 30;  // the shared graph, not the pair's A*
  absl::StatusOr<CostMatrixResult> m =
      CostMatrix(mesh, shape, DType::kF32, {src.state()}, {dst.state()}, options);
  ASSERT_TRUE(m.ok()) << m.status();
  PlanOptions plan_options{PlanMode::kNative};
  plan_options.cost_model = options.cost_model;
  absl::StatusOr<Plan> plan = PlanRedistribution(src, dst, plan_options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ((*m)[0][0], plan->cost);
}

TEST(CostMatrixTest, ErrorsNameTheBadInput) {
  Layouts l;
  std::vector<DistState> targets = l.states;
  targets.push_back(DistState::WithDefaultOrder(
      {Placement::Shard(5), Placement::Replicate(), Placement::Replicate()}));
  absl::StatusOr<CostMatrixResult> m =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, targets, CostMatrixOptions());
  EXPECT_TRUE(absl::IsInvalidArgument(m.status()));
  EXPECT_TRUE(absl::StrContains(m.status().message(), "targets[14]")) << m.status();

  CostMatrixOptions bad;
  bad.graph_states_per_pair = -1;
  m = CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, bad);
  EXPECT_TRUE(absl::StrContains(m.status().message(), "graph_states_per_pair")) << m.status();
  bad = CostMatrixOptions();
  bad.threads = -1;
  m = CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, bad);
  EXPECT_TRUE(absl::StrContains(m.status().message(), "threads")) << m.status();
  bad = CostMatrixOptions();
  bad.cost_model = nullptr;
  m = CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, bad);
  EXPECT_TRUE(absl::IsInvalidArgument(m.status()));

  m = CostMatrix(l.mesh, {13, 0, 6}, DType::kBF16, l.states, l.states, CostMatrixOptions());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "shape")) << m.status();

  bad = CostMatrixOptions();
  bad.max_expanded_states = 1;
  m = CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, bad);
  EXPECT_TRUE(absl::IsResourceExhausted(m.status())) << m.status();
}

}  // namespace
}  // namespace reshard
