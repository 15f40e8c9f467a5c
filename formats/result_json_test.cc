// AppendResultJson's not_optimal key (spec §5.2 item 9, issue 44): present,
// with the planner's reason, only when a limit stopped native mode's search.
#include "formats/result_json.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/costs/cost_model_registry.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

namespace reshard {
namespace {

std::string ResultOf(int64_t max_search_edges) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2, 2, 2, 2});
  const std::vector<int64_t> shape = {16, 16, 16, 16, 16};
  PlanOptions options{PlanMode::kNative};
  options.max_search_edges = max_search_edges;
  const absl::StatusOr<Plan> plan = PlanRedistribution(
      *DistSpec::Parse(mesh, "P(sum)P(sum)P(sum)P(sum)P(sum)", shape, DType::kF32),
      *DistSpec::Parse(mesh, "RRRRR", shape, DType::kF32), options);
  std::string out;
  AppendResultJson(nlohmann::json(7), plan, &out);
  return out;
}

TEST(ResultJsonTest, AStoppedSearchSaysSoLast) {
  const std::string text = ResultOf(10);
  const nlohmann::json stopped = nlohmann::json::parse(text);
  ASSERT_TRUE(stopped["ok"].get<bool>()) << text;
  EXPECT_NE(stopped["not_optimal"].get<std::string>().find("max_search_edges (10)"),
            std::string::npos)
      << text;
  // Added last, so readers of the older keys keep their prefix.
  EXPECT_GT(text.find("\"not_optimal\""), text.find("\"cost_model\"")) << text;
}

TEST(ResultJsonTest, ACompleteSearchHasNoNote) {
  // 2 mesh dims: the search completes at the default limits.
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2});
  const absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, "P(sum)S(0)", {8, 8}, DType::kF32),
                         *DistSpec::Parse(mesh, "RR", {8, 8}, DType::kF32), PlanOptions());
  std::string out;
  AppendResultJson(nlohmann::json(1), plan, &out);
  const nlohmann::json result = nlohmann::json::parse(out);
  ASSERT_TRUE(result["ok"].get<bool>()) << out;
  EXPECT_FALSE(result.contains("not_optimal")) << out;
}

// Issue 44: a permute printed "src":"R","dst":"R". Its src and dst are now
// the placements of its group's mesh dims before and after.
TEST(ResultJsonTest, APermuteSaysWhatMoves) {
  const DeviceMesh mesh = *DeviceMesh::Create({2, 2});
  PlanOptions options{PlanMode::kNative};
  options.cost_model = *MakeCostModel("alpha-beta");  // plans this swap as one permute
  const absl::StatusOr<Plan> plan =
      PlanRedistribution(*DistSpec::Parse(mesh, "S(0)S(1)", {8, 8}, DType::kF32),
                         *DistSpec::Parse(mesh, "S(1)S(0)", {8, 8}, DType::kF32), options);
  std::string out;
  AppendResultJson(nlohmann::json(1), plan, &out);
  const nlohmann::json result = nlohmann::json::parse(out);
  ASSERT_EQ(result["steps"].size(), 1u) << out;
  const nlohmann::json& step = result["steps"][0];
  EXPECT_EQ(step["collective"], "permute") << out;
  EXPECT_EQ(step["src"], "S(0)S(1)") << out;
  EXPECT_EQ(step["dst"], "S(1)S(0)") << out;
}

}  // namespace
}  // namespace reshard
