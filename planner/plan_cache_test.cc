#include "planner/plan_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"
#include "tests/util/spec_helpers.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

using test_util::Mesh;
using test_util::Spec;

// Field-by-field equality, with a readable difference.
::testing::AssertionResult SamePlan(const Plan& a, const Plan& b) {
  if (a.algorithm != b.algorithm || a.states != b.states || a.cost != b.cost ||
      a.expanded_states != b.expanded_states || a.steps.size() != b.steps.size()) {
    return ::testing::AssertionFailure()
           << a.Trace() << " (" << AlgorithmName(a.algorithm) << ", cost " << a.cost << ") vs "
           << b.Trace() << " (" << AlgorithmName(b.algorithm) << ", cost " << b.cost << ")";
  }
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const TransformInfo& x = a.steps[i];
    const TransformInfo& y = b.steps[i];
    if (x.step != y.step || x.logical_shape != y.logical_shape || x.cost != y.cost) {
      return ::testing::AssertionFailure() << "step " << i << " differs in " << a.Trace();
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(PlanTest, Names) {
  EXPECT_EQ(AlgorithmName(Algorithm::kAuto), "auto");
  EXPECT_EQ(AlgorithmName(Algorithm::kGraph), "graph");
  EXPECT_EQ(AlgorithmName(Algorithm::kGreedy), "greedy");
}

TEST(PlanTest, TraceNamesTheStates) {
  DeviceMesh mesh = Mesh({2, 2});
  Plan plan;
  plan.states = {Spec(mesh, "S(0)R", {4}).state(), Spec(mesh, "RR", {4}).state(),
                 Spec(mesh, "RS(0)", {4}).state()};
  EXPECT_EQ(plan.Trace(), "S(0)R->RR->RS(0)");
  EXPECT_EQ(Plan().Trace(), "");
}

// A model of the user's own (cost_model.h): every communicating step costs
// `scale`; the fingerprint names the parameter.
class FlatCostModel : public CostModel {
 public:
  explicit FlatCostModel(double scale, std::string name = "flat")
      : CostModel(absl::StrCat(name, " scale=", scale)), scale_(scale) {}
  std::unique_ptr<const BoundCostModel> Bind(const CostProblem&) const override {
    return std::make_unique<Bound>(scale_);
  }

 private:
  struct Bound : BoundCostModel {
    explicit Bound(double s) : scale(s) {}
    double StepCost(const DistState&, const Step& step) const override {
      return IsCommunicating(step.kind) ? scale : 0;
    }
    double scale;
  };
  double scale_;
};

TEST(PlanCacheTest, HitReturnsTheSamePlan) {
  DeviceMesh mesh = Mesh({2, 4});
  DistSpec src = Spec(mesh, "S(0)R", {8, 6});
  DistSpec dst = Spec(mesh, "RS(1)", {8, 6});
  PlanCache cache(16);
  absl::StatusOr<std::shared_ptr<const Plan>> first =
      cache.GetOrPlan(src, dst, PlanOptions{PlanMode::kPyTorch});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::shared_ptr<const Plan>> second =
      cache.GetOrPlan(src, dst, PlanOptions{PlanMode::kPyTorch});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  absl::StatusOr<Plan> direct = PlanRedistribution(src, dst, PlanOptions{PlanMode::kPyTorch});
  ASSERT_TRUE(direct.ok());
  EXPECT_TRUE(SamePlan(**first, *direct));
  PlanCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.size, 1u);
}

TEST(PlanCacheTest, KeyCoversEveryInput) {
  DeviceMesh mesh = Mesh({2, 4});
  DistSpec src = Spec(mesh, "S(0)S(1)", {8, 6});
  DistSpec dst = Spec(mesh, "S(1)R", {8, 6});
  PlanCache cache(64);
  int expected_size = 0;
  // Each request differs from the base in one input, so each is a new entry
  // whose plan must equal the direct one.
  auto check_new = [&](const DistSpec& s, const DistSpec& d, const PlanOptions& o) {
    absl::StatusOr<std::shared_ptr<const Plan>> cached = cache.GetOrPlan(s, d, o);
    ASSERT_TRUE(cached.ok()) << cached.status();
    ++expected_size;
    EXPECT_EQ(cache.stats().size, static_cast<size_t>(expected_size));
    EXPECT_EQ(cache.stats().hits, 0);
    absl::StatusOr<Plan> direct = PlanRedistribution(s, d, o);
    ASSERT_TRUE(direct.ok());
    EXPECT_TRUE(SamePlan(**cached, *direct));
  };
  PlanOptions base{PlanMode::kPyTorch};
  check_new(src, dst, base);
  check_new(dst, src, base);
  check_new(Spec(mesh, "S(0)S(1)", {8, 7}), Spec(mesh, "S(1)R", {8, 7}), base);
  check_new(Spec(mesh, "S(0)S(1)", {8, 6}, DType::kF64), Spec(mesh, "S(1)R", {8, 6}, DType::kF64),
            base);
  DeviceMesh other = Mesh({4, 2});
  check_new(Spec(other, "S(0)S(1)", {8, 6}), Spec(other, "S(1)R", {8, 6}), base);
  PlanOptions o = base;
  o.algorithm = Algorithm::kGraph;
  check_new(src, dst, o);
  o = base;
  o.cost_model = *MakeCostModel("pytorch-const");
  check_new(src, dst, o);
  o = base;
  o.cost_model = *MakeCostModel("pytorch", /*devices_per_host=*/2);
  check_new(src, dst, o);
  // A model's parameters are part of its fingerprint, hence of the key.
  o = base;
  o.cost_model = std::make_shared<FlatCostModel>(1.0);
  check_new(src, dst, o);
  o.cost_model = std::make_shared<FlatCostModel>(2.0);
  check_new(src, dst, o);
  // A fingerprint longer than the key's inline buffer works the same way.
  o.cost_model = std::make_shared<FlatCostModel>(2.0, std::string(1000, 'x'));
  check_new(src, dst, o);
  o = base;
  o.coordinate = {1, 3};
  check_new(src, dst, o);
  o = base;
  o.max_expanded_states = 1000;
  check_new(src, dst, o);

  // An explicit zero coordinate is the default one: a hit. So is another
  // object of a model with the same fingerprint.
  o = base;
  o.coordinate = {0, 0};
  ASSERT_TRUE(cache.GetOrPlan(src, dst, o).ok());
  EXPECT_EQ(cache.stats().hits, 1);
  o = base;
  o.cost_model = *MakeCostModel("pytorch", /*devices_per_host=*/8);
  ASSERT_TRUE(cache.GetOrPlan(src, dst, o).ok());
  EXPECT_EQ(cache.stats().hits, 2);
  EXPECT_EQ(cache.stats().size, static_cast<size_t>(expected_size));
}

TEST(PlanCacheTest, StridedInputIsPartOfTheKey) {
  // `_S(0, 1)S(0)` is the default-order state S(0)S(0), but StridedShard
  // input forces the graph planner (spec §9), so the cache must not mix them.
  DeviceMesh mesh = Mesh({2, 2});
  DistSpec plain = Spec(mesh, "S(0)S(0)", {8});
  DistSpec strided = Spec(mesh, "_S(0, 1)S(0)", {8});
  ASSERT_EQ(plain.state(), strided.state());
  DistSpec dst = Spec(mesh, "RR", {8});
  PlanCache cache;
  absl::StatusOr<std::shared_ptr<const Plan>> a =
      cache.GetOrPlan(plain, dst, PlanOptions{PlanMode::kPyTorch});
  absl::StatusOr<std::shared_ptr<const Plan>> b =
      cache.GetOrPlan(strided, dst, PlanOptions{PlanMode::kPyTorch});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->algorithm, Algorithm::kGreedy);
  EXPECT_EQ((*b)->algorithm, Algorithm::kGraph);
  EXPECT_EQ(cache.stats().size, 2u);
}

TEST(PlanCacheTest, EvictsLeastRecentlyUsed) {
  DeviceMesh mesh = Mesh({2, 2});
  DistSpec r = Spec(mesh, "RR", {8, 8});
  DistSpec a = Spec(mesh, "S(0)R", {8, 8});
  DistSpec b = Spec(mesh, "RS(1)", {8, 8});
  DistSpec c = Spec(mesh, "S(1)S(0)", {8, 8});
  PlanCache cache(2);
  const PlanOptions o{PlanMode::kPyTorch};
  std::shared_ptr<const Plan> plan_a = *cache.GetOrPlan(a, r, o);
  ASSERT_TRUE(cache.GetOrPlan(b, r, o).ok());
  // Touch A so that B is the least recently used, then C evicts B.
  EXPECT_EQ(cache.GetOrPlan(a, r, o)->get(), plan_a.get());
  ASSERT_TRUE(cache.GetOrPlan(c, r, o).ok());
  EXPECT_EQ(cache.stats().size, 2u);
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_EQ(cache.stats().misses, 3);
  EXPECT_EQ(cache.GetOrPlan(a, r, o)->get(), plan_a.get());  // still cached
  EXPECT_EQ(cache.stats().hits, 2);
  ASSERT_TRUE(cache.GetOrPlan(b, r, o).ok());  // evicted: planned again
  EXPECT_EQ(cache.stats().misses, 4);
  EXPECT_EQ(cache.stats().size, 2u);
  // B's return evicted C (A was used more recently).
  ASSERT_TRUE(cache.GetOrPlan(c, r, o).ok());
  EXPECT_EQ(cache.stats().misses, 5);
}

TEST(PlanCacheTest, ZeroCapacityStoresNothing) {
  DeviceMesh mesh = Mesh({2});
  PlanCache cache(0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cache
                    .GetOrPlan(Spec(mesh, "S(0)", {4}), Spec(mesh, "R", {4}),
                               PlanOptions{PlanMode::kPyTorch})
                    .ok());
  }
  EXPECT_EQ(cache.stats().misses, 3);
  EXPECT_EQ(cache.stats().size, 0u);
}

TEST(PlanCacheTest, ErrorsAreNotCached) {
  DeviceMesh mesh = Mesh({2});
  PlanCache cache;
  // S -> P has no path (spec §4).
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::shared_ptr<const Plan>> plan = cache.GetOrPlan(
        Spec(mesh, "S(0)", {4}), Spec(mesh, "P", {4}), PlanOptions{PlanMode::kPyTorch});
    EXPECT_FALSE(plan.ok());
  }
  // A bad option.
  PlanOptions bad{PlanMode::kPyTorch};
  bad.max_memory = 0;
  EXPECT_THAT(
      cache.GetOrPlan(Spec(mesh, "S(0)", {4}), Spec(mesh, "R", {4}), bad).status().message(),
      HasSubstr("max_memory: "));
  bad = PlanOptions{PlanMode::kPyTorch};
  bad.max_expanded_states = 0;
  EXPECT_FALSE(cache.GetOrPlan(Spec(mesh, "S(0)", {4}), Spec(mesh, "R", {4}), bad).ok());
  // Specs that do not match.
  absl::StatusOr<std::shared_ptr<const Plan>> mismatch = cache.GetOrPlan(
      Spec(mesh, "S(0)", {4}), Spec(mesh, "R", {5}), PlanOptions{PlanMode::kPyTorch});
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("shape"));
  EXPECT_EQ(cache.stats().size, 0u);
  EXPECT_EQ(cache.stats().hits, 0);
  EXPECT_EQ(cache.stats().misses, 5);
}

struct Case {
  DistSpec src;
  DistSpec dst;
  PlanOptions options{PlanMode::kPyTorch};
};

std::vector<Case> MixedCases() {
  std::vector<Case> cases;
  DeviceMesh m2 = Mesh({2, 4});
  DeviceMesh m3 = Mesh({2, 3, 2});
  const std::vector<int64_t> s2 = {13, 7}, s3 = {12, 5, 9};
  PlanOptions graph{PlanMode::kPyTorch};
  graph.algorithm = Algorithm::kGraph;
  PlanOptions constant{PlanMode::kPyTorch};
  constant.cost_model = *MakeCostModel("pytorch-const");
  PlanOptions coord{PlanMode::kPyTorch};
  coord.coordinate = {1, 2, 1};
  coord.cost_model = *MakeCostModel("pytorch", /*devices_per_host=*/4);
  cases.push_back({Spec(m2, "S(0)R", s2), Spec(m2, "RS(1)", s2), PlanOptions{PlanMode::kPyTorch}});
  cases.push_back({Spec(m2, "S(0)R", s2), Spec(m2, "RS(1)", s2), graph});
  cases.push_back({Spec(m2, "S(0)R", s2), Spec(m2, "RS(1)", s2), constant});
  cases.push_back(
      {Spec(m2, "P(sum)S(1)", s2), Spec(m2, "S(0)S(0)", s2), PlanOptions{PlanMode::kPyTorch}});
  cases.push_back(
      {Spec(m2, "S(0)[1]S(0)[0]", s2), Spec(m2, "S(1)R", s2), PlanOptions{PlanMode::kPyTorch}});
  cases.push_back({Spec(m3, "S(0)[1]S(0)[0]S(0)[2]", s3), Spec(m3, "RS(0)[0]S(0)[1]", s3),
                   PlanOptions{PlanMode::kPyTorch}});
  cases.push_back({Spec(m3, "S(0)[1]S(0)[0]S(0)[2]", s3), Spec(m3, "RS(0)[0]S(0)[1]", s3), coord});
  cases.push_back(
      {Spec(m3, "_S(0, 2)S(1)S(0)", s3), Spec(m3, "RRS(2)", s3), PlanOptions{PlanMode::kPyTorch}});
  cases.push_back({Spec(m3, "P(avg)P(sum)S(2)", s3), Spec(m3, "S(1)RR", s3), graph});
  cases.push_back({Spec(m3, "RRR", s3), Spec(m3, "S(2)S(1)S(0)", s3), coord});
  cases.push_back({Spec(m3, "S(0)S(1)S(2)", s3), Spec(m3, "S(2)S(1)S(0)", s3), constant});
  cases.push_back({Spec(m3, "P(max)RS(0)", s3, DType::kI8), Spec(m3, "RRR", s3, DType::kI8),
                   PlanOptions{PlanMode::kPyTorch}});
  return cases;
}

// 8 threads plan a mix of cases through one cache (large enough for all) and
// through one that keeps evicting; every plan must equal the direct one.
TEST(PlanCacheTest, HammerFromEightThreads) {
  const std::vector<Case> cases = MixedCases();
  std::vector<Plan> expected;
  for (const Case& c : cases) {
    absl::StatusOr<Plan> plan = PlanRedistribution(c.src, c.dst, c.options);
    ASSERT_TRUE(plan.ok()) << c.src.state().ToString() << " -> " << c.dst.state().ToString() << ": "
                           << plan.status();
    expected.push_back(*plan);
  }
  PlanCache big(64);
  PlanCache small(3);
  constexpr int kThreads = 8;
  constexpr int kIterations = 600;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const size_t k = (static_cast<size_t>(t) * 7 + i * 5 + i / 3) % cases.size();
        PlanCache& cache = (i % 4 == 0) ? small : big;
        absl::StatusOr<std::shared_ptr<const Plan>> plan =
            cache.GetOrPlan(cases[k].src, cases[k].dst, cases[k].options);
        if (!plan.ok() || !SamePlan(**plan, expected[k])) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  PlanCache::Stats b = big.stats(), s = small.stats();
  EXPECT_EQ(b.hits + b.misses + s.hits + s.misses, kThreads * kIterations);
  EXPECT_EQ(b.size, cases.size());
  EXPECT_LE(s.size, 3u);
  // Each key misses at least once; with 8 threads racing a few may miss twice.
  EXPECT_GE(b.misses, static_cast<int64_t>(cases.size()));
  EXPECT_GT(b.hits, 0);
}

}  // namespace
}  // namespace reshard
