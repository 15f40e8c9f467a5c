// Spec §4.2, edge 10: a group reduce_scatter is generated in two orders of
// its mesh dims (ascending and the goal's), not in every order, so that a
// state with many Partial mesh dims does not have factorially many edges
// (issue 19: on a mesh of eight 2s, P(sum)x8 had 40,320 orders per set).
// These tests pin what that costs: nothing, on random cases small enough to
// search with every order (3-4 mesh dims of sizes 1-4, many Partials,
// random shard orders, alpha-beta with random profiles and the
// fewest-collectives model): the cheapest plan over the two-order graph
// costs the same as the cheapest over the every-order graph of the old rule.
// And they pin the split the cost matrix's shared graphs rely on (spec §5.2
// item 6): the goal-free edges and a goal's edges are the native edges.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/search/native_transitions.h"
#include "planner/steps/step.h"
#include "tests/collective_count_cost_model.h"
#include "tests/util/spec_helpers.h"

namespace reshard {
namespace {

using EdgeFn = std::function<void(const DistState&, std::vector<Step>*)>;

// Where the order of a group reduce_scatter matters: a collective costs 1
// whatever its group (so one group step beats several single ones) and a
// local step 0.6 (so all_reduce-then-chunk is no free way around it). Under
// alpha-beta a group collective never beats its single steps on latency
// (spec §6.2), and under the fewest-collectives model chunks are free, so
// neither alone would notice a missing order.
class GroupsWinCosts : public BoundCostModel {
 public:
  explicit GroupsWinCosts(DeviceMesh mesh) : mesh_(std::move(mesh)) {}
  double StepCost(const DistState&, const Step& step) const override {
    if (mesh_.GroupSize(step.group) == 1) return 0;
    return IsCommunicating(step.kind) ? 1.0 : 0.6;
  }

 private:
  DeviceMesh mesh_;
};

// Dijkstra over every state reachable from src (costs are >= 0).
double CheapestCost(const DistState& src, const DistState& dst, const BoundCostModel& model,
                    const EdgeFn& edges_of) {
  absl::flat_hash_map<DistState, double> best;
  using Entry = std::pair<double, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  absl::flat_hash_map<uint64_t, DistState> by_bits;
  best[src] = 0;
  by_bits.emplace(src.bits(), src);
  heap.push({0, src.bits()});
  std::vector<Step> out;
  while (!heap.empty()) {
    const auto [g, bits] = heap.top();
    heap.pop();
    const DistState u = by_bits.at(bits);
    if (g > best[u]) continue;
    if (u == dst) return g;
    out.clear();
    edges_of(u, &out);
    for (const Step& step : out) {
      const DistState v = ApplyStep(u, step);
      const double cost = g + model.StepCost(u, step);
      auto [it, inserted] = best.try_emplace(v, cost);
      if (!inserted && it->second <= cost) continue;
      it->second = cost;
      by_bits.emplace(v.bits(), v);
      heap.push({cost, v.bits()});
    }
  }
  return std::numeric_limits<double>::infinity();
}

// The old rule of edge 10: every group reduce_scatter in every order of its
// group (the generated ones and all their permutations, each once).
EdgeFn EveryOrder(const DistState& goal, int tensor_ndim, unsigned ops) {
  return [=](const DistState& s, std::vector<Step>* out) {
    std::vector<Step> two;
    AppendNativeTransitions(s, goal, tensor_ndim, ops, &two);
    for (const Step& step : two) {
      if (step.kind != StepKind::kReduceScatter || step.group.size() < 2) {
        out->push_back(step);
        continue;
      }
      std::vector<int> order;
      for (int i = 0; i < step.entries.size(); ++i) order.push_back(step.entries.mesh_dim(i));
      // The goal's order is among the permutations of the ascending one.
      if (!std::is_sorted(order.begin(), order.end())) continue;
      do {
        out->push_back(MakeGroupStep(order, step.src, step.dst));
      } while (std::next_permutation(order.begin(), order.end()));
    }
  };
}

EdgeFn TwoOrders(const DistState& goal, int tensor_ndim, unsigned ops) {
  return [=](const DistState& s, std::vector<Step>* out) {
    AppendNativeTransitions(s, goal, tensor_ndim, ops, out);
  };
}

class Cases {
 public:
  explicit Cases(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // Mesh dims Partial (mostly sum, some avg) with probability `partial`,
  // else Shard (in a random order) with probability `shard`, else Replicate.
  DistState State(int mesh_ndim, int tensor_ndim, double partial, double shard) {
    std::vector<Placement> placements;
    for (int m = 0; m < mesh_ndim; ++m) {
      if (std::bernoulli_distribution(partial)(rng_)) {
        placements.push_back(Placement::Partial(Uniform(0, 3) ? ReduceOp::kSum : ReduceOp::kAvg));
      } else if (!std::bernoulli_distribution(shard)(rng_)) {
        placements.push_back(Placement::Replicate());
      } else {
        placements.push_back(Placement::Shard(static_cast<int>(Uniform(0, tensor_ndim - 1))));
      }
    }
    return test_util::WithShardOrders(placements, tensor_ndim, /*ascending=*/false, &rng_);
  }

  std::shared_ptr<const CostModel> Model() {
    static constexpr int64_t kPerHost[] = {1, 2, 4, 8};
    const int64_t per_host = kPerHost[Uniform(0, 3)];
    std::uniform_real_distribution<double> alpha(0.0, 5.0), beta(0.5, 500.0);
    switch (Uniform(-1, 2)) {
      case -1:
      case 0:
        return test_util::MakeCollectiveCountCostModel();
      case 1:
        return *MakeCostModel("alpha-beta", per_host);
      default:
        return *MakeAlphaBetaCostModel(
            CostProfile{"random", {alpha(rng_), beta(rng_)}, {alpha(rng_), beta(rng_)}, beta(rng_)},
            per_host);
    }
  }

  std::mt19937_64 rng_;
};

void CheckNothingLost(int mesh_ndim, int max_tensor_ndim, int cases, uint64_t seed) {
  Cases gen(seed);
  static constexpr int64_t kShape[] = {1, 3, 8, 13, 64};
  int with_groups = 0;
  for (int i = 0; i < cases; ++i) {
    std::vector<int64_t> sizes;
    for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(gen.Uniform(0, 5) ? gen.Uniform(2, 4) : 1);
    const int tensor_ndim = static_cast<int>(gen.Uniform(1, max_tensor_ndim));
    std::vector<int64_t> shape;
    for (int d = 0; d < tensor_ndim; ++d) shape.push_back(kShape[gen.Uniform(0, 4)]);
    const DeviceMesh mesh = *DeviceMesh::Create(sizes);
    const DistState src = gen.State(mesh_ndim, tensor_ndim, 0.7, 0.5);
    const DistState dst = gen.State(mesh_ndim, tensor_ndim, 0.1, 0.8);
    const std::shared_ptr<const CostModel> model = gen.Model();
    const std::unique_ptr<const BoundCostModel> bound =
        gen.Uniform(0, 1) ? std::make_unique<GroupsWinCosts>(mesh)
                          : model->Bind(CostProblem{mesh, shape, ItemSize(DType::kF32)});
    const unsigned ops = src.PartialOps() | dst.PartialOps();
    const std::string what =
        absl::StrCat("mesh ", mesh.ToString(), " shape [", absl::StrJoin(shape, ","), "] ",
                     src.ToString(), " -> ", dst.ToString(), " model ", model->fingerprint());
    const double every = CheapestCost(src, dst, *bound, EveryOrder(dst, tensor_ndim, ops));
    const double two = CheapestCost(src, dst, *bound, TwoOrders(dst, tensor_ndim, ops));
    EXPECT_LE(std::fabs(two - every), 1e-9 * std::max(1.0, every))
        << what << ": two orders " << two << ", every order " << every;
    int partials = 0;
    for (int m = 0; m < mesh_ndim; ++m) partials += src.placement(m).is_partial();
    with_groups += partials >= 3;
  }
  EXPECT_GT(with_groups, cases / 4);  // the orders mattered in many cases
}

TEST(NativeOrdersTest, TwoOrdersLoseNothingOnThreeMeshDims) { CheckNothingLost(3, 2, 400, 1); }

TEST(NativeOrdersTest, TwoOrdersLoseNothingOnFourMeshDims) { CheckNothingLost(4, 2, 150, 2); }

// The eight-dim repro of issue 19: at most two orders per set and tensor dim.
TEST(NativeOrdersTest, EightPartialsHaveBoundedEdges) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2, 2, 2, 2, 2, 2});
  const std::vector<int64_t> shape(8, 64);
  const DistState src = DistSpec::Parse(mesh, "PPPPPPPP", shape, DType::kF32)->state();
  const DistState dst =
      DistSpec::Parse(mesh, "S(0)S(1)S(2)S(3)S(4)S(5)S(6)S(7)", shape, DType::kF32)->state();
  std::vector<Step> steps;
  AppendNativeTransitions(src, dst, 8, src.PartialOps(), &steps);
  // 247 sets of >= 2 mesh dims, each an all_reduce and <= 2 orders onto each
  // of 8 tensor dims; plus the 8 single all_reduces and 64 reduce_scatters.
  EXPECT_LE(steps.size(), 247u * (1 + 8 * 2) + 8 + 64);
}

std::vector<std::string> Sorted(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& step : steps) out.push_back(step.ToString());
  std::sort(out.begin(), out.end());
  return out;
}

// Random states and goals with many Partials and shuffled shard orders, so
// that edges 10 (goal orders), 12 and 13 all occur.
TEST(NativeOrdersTest, GoalFreeAndGoalEdgesAreTheNativeEdges) {
  Cases gen(3);
  int with_goal_edges = 0;
  for (int i = 0; i < 600; ++i) {
    const int mesh_ndim = static_cast<int>(gen.Uniform(2, 5));
    const int tensor_ndim = static_cast<int>(gen.Uniform(1, 3));
    const DistState state = gen.State(mesh_ndim, tensor_ndim, 0.4, 0.6);
    const DistState goal = gen.State(mesh_ndim, tensor_ndim, 0.1, 0.7);
    const unsigned ops = state.PartialOps() | goal.PartialOps();
    std::vector<Step> native, split;
    AppendNativeTransitions(state, goal, tensor_ndim, ops, &native);
    AppendGoalFreeTransitions(state, tensor_ndim, ops, &split);
    const size_t goal_free = split.size();
    AppendGoalTransitions(state, goal, tensor_ndim, &split);
    EXPECT_EQ(Sorted(split), Sorted(native)) << state.ToString() << " -> " << goal.ToString();
    with_goal_edges += split.size() > goal_free;
  }
  EXPECT_GT(with_goal_edges, 100);  // the goal's part was not empty throughout
}

// A cost matrix builds one GoalTransitions per target and applies it to
// every state of its graph, with each state's orders read once: the same
// steps as AppendGoalTransitions state by state.
TEST(NativeOrdersTest, GoalTransitionsOfOneGoalEqualAppendGoalTransitionsOnEveryState) {
  Cases gen(5);
  int steps = 0;
  for (int i = 0; i < 60; ++i) {
    const int mesh_ndim = static_cast<int>(gen.Uniform(2, 5));
    const int tensor_ndim = static_cast<int>(gen.Uniform(1, 3));
    const DistState goal = gen.State(mesh_ndim, tensor_ndim, 0.1, 0.7);
    const GoalTransitions goal_transitions(goal, tensor_ndim);
    for (int j = 0; j < 20; ++j) {
      const DistState state = gen.State(mesh_ndim, tensor_ndim, 0.4, 0.6);
      std::vector<Step> reused, alone;
      goal_transitions.Append(state, ShardOrders::Of(state, tensor_ndim), &reused);
      AppendGoalTransitions(state, goal, tensor_ndim, &alone);
      EXPECT_EQ(reused, alone) << state.ToString() << " -> " << goal.ToString();
      steps += static_cast<int>(reused.size());
    }
  }
  EXPECT_GT(steps, 200);  // goal edges occurred
}

}  // namespace
}  // namespace reshard
