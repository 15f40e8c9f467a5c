// CostMatrix (planner/cost_matrix.h) against planning each pair alone.
#include "planner/cost_matrix.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

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

struct Layouts {
  DeviceMesh mesh = *DeviceMesh::Create({2, 3, 2});
  std::vector<int64_t> shape = {13, 8, 6};
  std::vector<DistSpec> specs;
  std::vector<DistState> states;
  Layouts() {
    for (const char* text : kLayouts) {
      specs.push_back(*DistSpec::Parse(mesh, text, shape, DType::kBF16));
      states.push_back(specs.back().state());
    }
  }
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

// Each worker keeps its own native searches (states and edges reused across
// its rows): which rows a worker takes must not change a cost.
TEST(CostMatrixTest, ThreadsGiveTheSameNativeMatrix) {
  Layouts l;
  CostMatrixOptions one;
  one.cost_model = *MakeCostModel("alpha-beta", 4);
  CostMatrixOptions three = one;
  three.threads = 3;
  absl::StatusOr<CostMatrixResult> a =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, one);
  absl::StatusOr<CostMatrixResult> b =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, three);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(CostMatrixTest, ThreadsGiveTheSameMatrix) {
  Layouts l;
  CostMatrixOptions one;
  CostMatrixOptions three;
  three.threads = 3;
  absl::StatusOr<CostMatrixResult> a =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, one);
  absl::StatusOr<CostMatrixResult> b =
      CostMatrix(l.mesh, l.shape, DType::kBF16, l.states, l.states, three);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
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
  bad.threads = 0;
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
