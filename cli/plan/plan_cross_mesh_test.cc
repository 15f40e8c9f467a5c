// `reshard plan` of cross-mesh moves (spec §14): --dst-mesh, --src-ranks,
// --dst-ranks in text and JSON, memory rounds and the flags' errors.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/utf8.h"
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::kTrainerToInference;
using reshard::cli_test::PlanJson;
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;
using reshard::cli_test::With;
using reshard::cli_test::WriteText;

TEST(PlanCrossMeshTest, CrossMeshTextShowsBothMeshesAndWhoSendsWhat) {
  Result r = RunReshard(kTrainerToInference);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"cross-mesh move: S(0)S(1) on mesh 4x2 (ranks 0-7) -> S(1) on mesh 2 (ranks 8,9)",
        "before, on the source mesh: no steps", "one exchange over 10 ranks (0-9)",
        "rank 0 -> rank 8: 96 bytes [0:4, 0:6]", "rank 7 -> rank 9: 96 bytes [12:16, 6:12]",
        "768 bytes sent, at most 96 by one rank; the most any rank must receive: 384 bytes",
        "after, on the destination mesh: no steps", "(cost model nccl)", "mode:       native"}) {
    EXPECT_TRUE(absl::StrContains(r.out, want)) << want << "\n" << r.out;
  }
}

TEST(PlanCrossMeshTest, CrossMeshJsonHasTheCrossingAndItsBytes) {
  json got = PlanJson(
      std::vector<std::string>(kTrainerToInference.begin() + 1, kTrainerToInference.end()));
  // The keys in the order printed (cross_mesh_json.h).
  auto keys = [](const nlohmann::ordered_json& object) {
    std::vector<std::string> out;
    for (const auto& [key, value] : object.items()) out.push_back(key);
    return absl::StrJoin(out, ",");
  };
  Result r = RunReshard(With(kTrainerToInference, {"--format", "json"}));
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(keys(ordered),
            "id,ok,cross_mesh,cost,peak_bytes,src_mesh,dst_mesh,src_ranks,dst_ranks,before,"
            "after,crossing,mode,cost_model");
  EXPECT_EQ(keys(ordered["crossing"]),
            "src,dst,cost,participants,slices,rounds,rounds_for,pairs,bytes_sent,"
            "max_bytes_sent,receive_lower_bound_max");
  EXPECT_EQ(got["cross_mesh"], true);
  EXPECT_EQ(got["src_ranks"], json::parse("[0,1,2,3,4,5,6,7]"));
  EXPECT_EQ(got["dst_mesh"], json::parse("[2]"));
  const json& c = got["crossing"];
  EXPECT_EQ(c["participants"].size(), 10u);
  EXPECT_EQ(c["pairs"].size(), 8u);
  EXPECT_EQ(c["pairs"][0], json::parse(R"j({"src":0,"dst":8,"bytes":96})j"));
  EXPECT_EQ(c["bytes_sent"], 768);
  EXPECT_EQ(c["max_bytes_sent"], 96);
  EXPECT_EQ(c["receive_lower_bound_max"], 384);
  EXPECT_TRUE(c["rounds_for"].is_null()) << c;  // one round
  // No steps before or after: the plan costs what its crossing does.
  ASSERT_TRUE(c["cost"].is_number()) << got;
  EXPECT_EQ(got["cost"], c["cost"]);
}

TEST(PlanCrossMeshTest, CrossMeshWithAPytorchModelIsNotPriced) {
  json got = PlanJson({"--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R", "--dst-ranks",
                       "2,3", "--cost-model", "pytorch"});
  EXPECT_TRUE(got["cost"].is_null()) << got;
  EXPECT_TRUE(got["crossing"]["cost"].is_null()) << got;
  EXPECT_EQ(got["mode"], "pytorch");
  Result r = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R",
                         "--dst-ranks", "2,3", "--cost-model", "pytorch"});
  EXPECT_TRUE(absl::StrContains(r.out, "total cost: not priced")) << r.out;
}

// S(0) on 8 ranks to R on 8 others: every source rank sends its block to
// every destination rank, 64 pairs; the text lists 32.
TEST(PlanCrossMeshTest, CrossMeshTextCapsThePairsItLists) {
  Result r = RunReshard({"plan", "--mesh", "8", "--shape", "64", "--src", "S(0)", "--dst", "R",
                         "--dst-ranks", "8,9,10,11,12,13,14,15"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    lines += absl::StartsWith(line, "  rank ");
  }
  EXPECT_EQ(lines, 32) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "  ... 32 more\n  64 pairs")) << r.out;
}

// Spec §14 "Memory": S(0) to S(0) on two other ranks, f32 8: every rank
// holds a 16-byte block, so 20 bytes (one f32 in flight) is the least limit;
// under it each block crosses one element per round.
TEST(PlanCrossMeshTest, CrossMeshMaxMemorySplitsTheCrossingIntoRounds) {
  const std::vector<std::string> base = {"plan", "--mesh", "2",    "--shape",     "8",  "--src",
                                         "S(0)", "--dst",  "S(0)", "--dst-ranks", "2,3"};
  Result r = RunReshard(With(base, {"--max-memory", "19"}));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--max-memory")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "needs at least 20")) << r.err;
  json got = PlanJson(
      With(std::vector<std::string>(base.begin() + 1, base.end()), {"--max-memory", "20"}));
  EXPECT_EQ(got["crossing"]["rounds"], 4) << got;
  EXPECT_EQ(got["crossing"]["slices"], 8) << got;
  EXPECT_EQ(got["peak_bytes"], 20) << got;
  EXPECT_EQ(got["crossing"]["bytes_sent"], 32) << got;
  r = RunReshard(With(base, {"--max-memory", "20"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "4 rounds over 4 ranks")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "[0:1] (round 0)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "peak bytes: 20 per rank")) << r.out;
  // Without a limit: one round, 32 bytes (a block and its buffer).
  got = PlanJson(std::vector<std::string>(base.begin() + 1, base.end()));
  EXPECT_EQ(got["crossing"]["rounds"], 1) << got;
  EXPECT_EQ(got["peak_bytes"], 32) << got;
}

TEST(PlanCrossMeshTest, CrossMeshRefusesDotAndBadRankLists) {
  const std::vector<std::string> base = {"plan",  "--mesh", "2",     "--shape", "8",
                                         "--src", "S(0)",   "--dst", "R"};
  struct Bad {
    std::vector<std::string> more;
    std::string names;
  };
  const std::vector<Bad> bad = {
      {{"--dst-ranks", "2,3", "--format", "dot"}, "--format dot: not available for cross-mesh"},
      {{"--src-ranks", "0,0"}, "--src-ranks: rank 0 appears twice"},
      {{"--dst-ranks", "2,-3"}, "--dst-ranks: rank -3 is negative"},
      {{"--dst-ranks", "2,x"}, "--dst-ranks: \"x\" in \"2,x\" is not an integer"},
      {{"--dst-ranks", "2,99999999999999999999"}, "\"99999999999999999999\" in"},
      {{"--dst-ranks", "2,3,4"}, "--dst-ranks: 3 ranks for a mesh of 2 ranks"},
      {{"--dst-mesh", "3", "--dst-ranks", "2,3"}, "--dst-ranks: 2 ranks for a mesh of 3"},
      {{"--dst-mesh", "0"}, "--dst-mesh: dim 0 has size 0"},
      {{"--dst-ranks", "2,3", "--coordinate", "0"}, "--coordinate: not supported for cross-mesh"},
  };
  for (const Bad& b : bad) {
    Result r = RunReshard(With(base, b.more));
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(b.more, " ") << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, b.names)) << b.names << "\n" << r.err;
  }
}

// Given but equal to their defaults (the same mesh, ranks 0 .. size - 1),
// the flags and keys change nothing: the same request, byte for byte.
TEST(PlanCrossMeshTest, SameMeshDefaultsGivenExplicitlyChangeNothing) {
  const std::vector<std::string> base = {"plan",  "--mesh", "2,2",   "--shape", "8,8",
                                         "--src", "S(0)R",  "--dst", "RS(1)"};
  for (const char* format : {"text", "json", "dot"}) {
    Result plain = RunReshard(With(base, {"--format", format}));
    Result given = RunReshard(With(base, {"--format", format, "--dst-mesh", "2,2", "--src-ranks",
                                          "0,1,2,3", "--dst-ranks", "0,1,2,3"}));
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(given.out, plain.out) << format;
  }
  const std::string line = R"j({"id":1,"mesh":[2,2],"shape":[8,8],"src":"S(0)R","dst":"RS(1)")j";
  Result batch = RunReshard(
      {"batch"},
      absl::StrCat(line, "}\n", line,
                   R"j(,"dst_mesh":[2,2],"src_ranks":[0,1,2,3],"dst_ranks":null})j", "\n"));
  std::vector<std::string> lines = absl::StrSplit(batch.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << batch.out;
  EXPECT_EQ(lines[0], lines[1]);
}

// Trainer 4x2 S(0)S(1) on ranks 0-7 to inference S(1) on ranks 8, 9, bf16
// 1024 x 512: each trainer rank sends its 256 x 256 block (131072 bytes) to
// one inference rank, which must receive 512 x 256 x 2 bytes.
TEST(PlanCrossMeshTest, TrainerToInferenceJsonCountsEveryPairsBytes) {
  Result r = RunReshard({"plan", "--mesh", "4,2", "--shape", "1024,512", "--dtype", "bf16", "--src",
                         "S(0)S(1)", "--dst-mesh", "2", "--dst", "S(1)", "--dst-ranks", "8,9",
                         "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(r.out);
  EXPECT_EQ(p["ok"], true) << p;
  EXPECT_EQ(p["cross_mesh"], true) << p;
  const json& c = p["crossing"];
  EXPECT_EQ(c["participants"], json({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << c;
  ASSERT_EQ(c["pairs"].size(), 8u) << c;
  for (const json& pair : c["pairs"]) EXPECT_EQ(pair["bytes"], 131072) << pair;
  EXPECT_EQ(c["max_bytes_sent"], 131072) << c;
  EXPECT_EQ(c["receive_lower_bound_max"], 524288) << c;
  EXPECT_EQ(p["cost"], c["cost"]) << p;
  EXPECT_GT(p["cost"].get<double>(), 0) << p;
}

// Under --max-memory the crossing runs in rounds (spec §14 "Memory"): S(0)
// to S(0) on two other ranks, f32 8: every rank holds a 16-byte block, so 20
// bytes (one f32 in flight) is the least limit, and under it each block
// crosses one element per round; below it there is no plan. Dot is refused.
TEST(PlanCrossMeshTest, LeastMaxMemoryRunsInRoundsAndLessIsNoPlan) {
  const std::vector<std::string> args = {"plan", "--mesh", "2",    "--shape",     "8",  "--src",
                                         "S(0)", "--dst",  "S(0)", "--dst-ranks", "2,3"};
  Result rounds = RunReshard(With(args, {"--max-memory", "20", "--format", "json"}));
  ASSERT_EQ(rounds.exit_code, 0) << rounds.err;
  const json p = json::parse(rounds.out);
  EXPECT_EQ(p["crossing"]["rounds"], 4) << p;
  EXPECT_EQ(p["crossing"]["rounds_for"], "memory") << p;
  EXPECT_EQ(p["peak_bytes"], 20) << p;
  Result less = RunReshard(With(args, {"--max-memory", "19"}));
  EXPECT_EQ(less.exit_code, 3) << less.err;
  EXPECT_TRUE(absl::StrContains(less.err, "--max-memory")) << less.err;
  EXPECT_TRUE(absl::StrContains(less.err, "at least 20")) << less.err;
  Result dot = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R",
                           "--dst-ranks", "2,3", "--format", "dot"});
  EXPECT_EQ(dot.exit_code, 2) << dot.err;
  EXPECT_TRUE(absl::StrContains(dot.err, "--format dot")) << dot.err;
}

// Why a crossing takes rounds, in JSON (CrossMeshPlan::RoundsFor): relayed
// where a model of bandwidth alone fans one block out to 8 ranks (spec §14
// "Relaying"), spread over rails where S(0) over two hosts of 2 ranks goes
// to the first host under nccl (spec §14 "Rails").
TEST(PlanCrossMeshTest, JsonSaysWhyTheCrossingTakesRounds) {
  const std::string profile = TempPath("bandwidth-only.json");
  WriteText(
      profile,
      R"({"name": "bw", "memory_gbps": 50, "intra_host": {"alpha_us": 0.001, "beta_gbps": 1},)"
      R"( "inter_host": {"alpha_us": 0.001, "beta_gbps": 1}})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--mesh", "1", "--dst-mesh", "8", "--src-ranks", "8", "--shape", "16,16", "--src", "S(0)",
        "--dst", "R", "--cost-model", "alpha-beta", "--profile", profile},
       "relaying"},
      {{"--mesh", "4", "--dst-mesh", "2", "--devices-per-host", "2", "--shape", "2048,2048",
        "--dtype", "bf16", "--src", "S(0)", "--dst", "S(0)"},
       "rails"},
  };
  for (const auto& [args, why] : cases) {
    std::vector<std::string> command = {"plan", "--format", "json"};
    command.insert(command.end(), args.begin(), args.end());
    Result r = RunReshard(command);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json c = json::parse(r.out)["crossing"];
    EXPECT_GT(c["rounds"].get<int64_t>(), 1) << c;
    EXPECT_EQ(c["rounds_for"], why) << c;
  }
}

}  // namespace
