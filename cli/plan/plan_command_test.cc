// `reshard plan` end to end: text, JSON and Graphviz output, exit codes 2 and
// 3 naming the flag, modes, cost models, profiles and peak memory. Expected
// plans come from the oracle's golden data (tests/testdata/pytorch-tests.jsonl).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
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
using reshard::cli_test::Close;
using reshard::cli_test::GoldenCase;
using reshard::cli_test::kPytorchCost;
using reshard::cli_test::kPytorchDst;
using reshard::cli_test::kPytorchSrc;
using reshard::cli_test::kPytorchTrace;
using reshard::cli_test::PlanArgs;
using reshard::cli_test::PlanJson;
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;
using reshard::cli_test::WriteText;

TEST(PlanCommandTest, PlanTextShowsTraceStepsAndTotal) {
  json c = GoldenCase();
  Result r = RunReshard(PlanArgs(c));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, c["expected"]["trace"].get<std::string>())) << r.out;
  for (const json& step : c["expected"]["steps"]) {
    EXPECT_TRUE(absl::StrContains(r.out, step["collective"].get<std::string>())) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat(step["src"].get<std::string>(), " -> ",
                                                      step["dst"].get<std::string>())))
        << r.out;
  }
  EXPECT_TRUE(absl::StrContains(r.out, "total cost")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, c["expected"]["algorithm"].get<std::string>())) << r.out;
}

TEST(PlanCommandTest, PlanJsonParsesAndMatchesTheOracle) {
  json c = GoldenCase();
  std::vector<std::string> args = PlanArgs(c);
  args.push_back("--format=json");
  Result r = RunReshard(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json got = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(got.is_discarded()) << r.out;
  EXPECT_EQ(got["ok"], true);
  EXPECT_EQ(got["trace"], c["expected"]["trace"]);
  EXPECT_EQ(got["algorithm"], c["expected"]["algorithm"]);
  EXPECT_NEAR(got["cost"].get<double>(), c["expected"]["cost"].get<double>(), 1e-9);
  EXPECT_EQ(got["steps"].size(), c["expected"]["steps"].size());
}

TEST(PlanCommandTest, PlanDotIsADigraphWithOneEdgePerStep) {
  json c = GoldenCase();
  std::vector<std::string> args = PlanArgs(c);
  args.insert(args.end(), {"--format", "dot"});
  Result r = RunReshard(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "digraph")) << r.out;
  size_t steps = c["expected"]["steps"].size();
  for (size_t i = 0; i < steps; ++i) {
    EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("s", i, " -> s", i + 1, " "))) << r.out;
  }
  EXPECT_FALSE(absl::StrContains(r.out, absl::StrCat("s", steps, " -> "))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("\"", c["src"].get<std::string>(), "\"")));
}

// Each bad input exits 2 and names the flag on stderr.
TEST(PlanCommandTest, BadInputExitsTwoNamingTheFlag) {
  const std::vector<std::string> base = {"--mesh", "2,2",   "--shape", "8,6",
                                         "--src",  "S(0)R", "--dst",   "RS(1)"};
  // {flag to replace or add, its value, text stderr must contain}
  struct BadFlag {
    std::string flag, value, names;
  };
  const std::vector<BadFlag> bad = {
      {"--mesh", "2,x", "--mesh: \"2,x\" is not a list of integers"},
      {"--mesh", "", "--mesh"},
      {"--mesh", "0,2", "--mesh"},
      {"--mesh", "-2,2", "--mesh"},
      {"--mesh", "1,1,1,1,1,1,1,1,1", "--mesh"},
      {"--mesh", "99999999999999999999,2", "--mesh"},
      {"--mesh", "4194304,4194304", "--mesh"},  // 2^44 ranks
      {"--shape", "8,0", "--shape"},
      {"--shape", "8,-1", "--shape"},
      {"--shape", "1,1,1,1,1,1,1,1,1", "--shape"},
      {"--shape", "9223372036854775807,2", "--shape"},
      {"--shape", "8,6,x", "--shape"},
      {"--src", "", "--src"},
      {"--src", "S(0)", "--src"},  // one token for two mesh dims
      {"--src", "S(0)RR", "--src"},
      {"--src", "S(2)R", "--src"},  // tensor has 2 dims
      {"--src", "P(foo)R", "--src"},
      {"--src", "X(0)R", "--src"},
      {"--src", "S(0)[0]S(0)", "--src"},     // [k] on some tokens only
      {"--src", "S(0)[0]S(0)[0]", "--src"},  // not a permutation
      {"--src", "P(max)P(sum)", "--src"},    // mixed ops other than sum+avg
      {"--src", "_S(0, 3)S(0)", "--src"},    // no position gives split factor 3
      {"--src", "S(99999999999999999999)R", "--src"},
      {"--dst", "RR,", "--dst"},
      {"--dtype", "f128", "--dtype"},
      {"--algorithm", "fast", "--algorithm"},
      {"--cost-model", "free", "--cost-model"},
      {"--devices-per-host", "0", "--devices-per-host"},
      {"--devices-per-host", "eight", "--devices-per-host"},
      {"--coordinate", "0,2", "--coordinate"},
      {"--coordinate", "0", "--coordinate"},
      {"--format", "png", "--format"},
      {"--max-states", "0", "--max-states"},
      {"--max-states", "lots", "--max-states"},
      {"--bogus", "1", "--bogus"},
  };
  for (const BadFlag& b : bad) {
    std::vector<std::string> args = {"plan"};
    bool replaced = false;
    for (size_t i = 0; i < base.size(); i += 2) {
      args.push_back(base[i]);
      args.push_back(base[i] == b.flag ? b.value : base[i + 1]);
      replaced = replaced || base[i] == b.flag;
    }
    if (!replaced) args.insert(args.end(), {b.flag, b.value});
    Result r = RunReshard(args);
    std::string shown = absl::StrJoin(args, " ");
    EXPECT_EQ(r.exit_code, 2) << shown << "\nstderr: " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, b.names)) << shown << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << shown << "\nstdout: " << r.out;
  }
  // Flag syntax errors.
  Result missing_value = RunReshard({"plan", "--mesh"});
  EXPECT_EQ(missing_value.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(missing_value.err, "--mesh")) << missing_value.err;
  Result missing_flag = RunReshard({"plan", "--mesh", "2", "--shape", "4", "--dst", "R"});
  EXPECT_EQ(missing_flag.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(missing_flag.err, "--src")) << missing_flag.err;
  Result positional = RunReshard({"plan", "extra"});
  EXPECT_EQ(positional.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(positional.err, "extra")) << positional.err;
  Result batch_flag = RunReshard({"batch", "--max-states", "-1"});
  EXPECT_EQ(batch_flag.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(batch_flag.err, "--max-states")) << batch_flag.err;
}

TEST(PlanCommandTest, NoPlanExitsThree) {
  // The greedy planner (pytorch mode's) cannot do S -> P (spec §8).
  Result no_path = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst",
                               "P(sum)", "--algorithm", "greedy", "--mode", "pytorch"});
  EXPECT_EQ(no_path.exit_code, 3) << no_path.err;
  EXPECT_TRUE(absl::StrContains(no_path.err, "no_path")) << no_path.err;
  // A search that must expand more than one state.
  Result bound = RunReshard({"plan", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)[1]S(0)[0]",
                             "--dst", "S(1)S(0)", "--max-states", "1", "--mode", "pytorch"});
  EXPECT_EQ(bound.exit_code, 3) << bound.err;
  EXPECT_TRUE(absl::StrContains(bound.err, "--max-states")) << bound.err;
}

// The bound's advice names the greedy planner only where it could be used
// (spec §9: shard orders force the graph planner).
TEST(PlanCommandTest, BoundAdviceFitsTheRequest) {
  Result forced =
      RunReshard({"plan", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)[1]S(0)[0]", "--dst",
                  "S(1)S(0)", "--max-states", "1", "--algorithm", "greedy", "--mode", "pytorch"});
  EXPECT_EQ(forced.exit_code, 3) << forced.err;
  EXPECT_FALSE(absl::StrContains(forced.err, "use the greedy planner")) << forced.err;
  EXPECT_TRUE(absl::StrContains(forced.err, "--max-states")) << forced.err;
  Result graph =
      RunReshard({"plan", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)S(1)", "--dst",
                  "S(1)S(0)", "--max-states", "1", "--algorithm", "graph", "--mode", "pytorch"});
  EXPECT_EQ(graph.exit_code, 3) << graph.err;
  EXPECT_TRUE(absl::StrContains(graph.err, "--algorithm greedy")) << graph.err;
}

// Greedy S -> P on a size-1 mesh dim moves nothing (spec §8): planned, and
// it runs on real data.
TEST(PlanCommandTest, GreedySizeOneShardToPartialRuns) {
  Result r = RunReshard({"verify", "--mesh", "1,4", "--shape", "8,8", "--src", "S(0)S(1)", "--dst",
                         "P(sum)R", "--algorithm", "greedy", "--timeout", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "1 passed, 0 failed")) << r.out;
}

TEST(PlanCommandTest, ProfileErrorsNameTheFileTheKeyAndBothFlags) {
  const std::string bad = TempPath("bad-profile.json");
  WriteText(bad, R"({"name": "x", "intra_host": {"alpha_us": 1, "beta_gbps": 2},
                    "inter_host": {"alpha_us": 1}, "memory_gbps": 3})");
  const std::vector<std::string> plan = {"plan",  "--mesh", "2",     "--shape", "8",
                                         "--src", "S(0)",   "--dst", "R",       "--profile"};
  std::vector<std::string> args = plan;
  args.insert(args.end(), {bad, "--cost-model", "alpha-beta"});
  Result missing = RunReshard(args);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(missing.err, bad)) << missing.err;
  EXPECT_TRUE(absl::StrContains(missing.err, "inter_host.beta_gbps")) << missing.err;
  args = plan;
  args.insert(args.end(), {bad, "--cost-model", "pytorch"});
  Result pytorch = RunReshard(args);
  EXPECT_EQ(pytorch.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(pytorch.err, "--profile")) << pytorch.err;
  EXPECT_TRUE(absl::StrContains(pytorch.err, "--cost-model")) << pytorch.err;
}

TEST(PlanCommandTest, DefaultModeIsNative) {
  json got = PlanJson({"--mesh", "2,2", "--shape", "8,8", "--src", "S(0)R", "--dst", "RR"});
  EXPECT_EQ(got["mode"], "native") << got;
  Result text =
      RunReshard({"plan", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)R", "--dst", "RR"});
  EXPECT_TRUE(absl::StrContains(text.out, "mode:       native")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "(cost model nccl)")) << text.out;
}

// --profile names a built-in NCCL profile (spec §6.4); without --cost-model
// that means the nccl model. A100's LL cap in a host (87.7 GB/s against
// H100's 141) makes the same gather dearer. An unknown name is exit 2 naming
// the flag and the built-in names.
TEST(PlanCommandTest, NcclProfilesByName) {
  const std::vector<std::string> base = {"--mesh", "2,2",   "--shape", "64,64",
                                         "--src",  "S(0)R", "--dst",   "RR"};
  std::vector<std::string> a100 = base, h100 = base;
  a100.insert(a100.end(), {"--profile", "a100-8x200g"});
  h100.insert(h100.end(), {"--cost-model", "nccl", "--profile", "h100-8x400g"});
  const json a = PlanJson(a100), h = PlanJson(h100), d = PlanJson(base);
  EXPECT_EQ(a["mode"], "native") << a;
  EXPECT_GT(a["cost"].get<double>(), h["cost"].get<double>()) << a << h;
  EXPECT_EQ(h["cost"], d["cost"]) << h << d;  // h100-8x400g is the default
  std::vector<std::string> bad = {"plan", "--cost-model", "nccl", "--profile", "nope"};
  bad.insert(bad.end(), base.begin(), base.end());
  const Result r = RunReshard(bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--profile")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "h100-8x400g")) << r.err;
}

// Existing inputs name a pytorch cost model and keep their exact answers.
TEST(PlanCommandTest, PytorchCostModelWithoutModeIsPytorchMode) {
  json c = GoldenCase();
  std::vector<std::string> args = PlanArgs(c);
  args.erase(args.begin());  // "plan"
  json got = PlanJson(args);
  EXPECT_EQ(got["mode"], "pytorch") << got;
  EXPECT_EQ(got["trace"], c["expected"]["trace"]) << got;
  json line = c;
  line.erase("expected");
  Result batch = RunReshard({"batch"}, line.dump() + "\n");
  EXPECT_TRUE(absl::StrContains(batch.out, "\"mode\":\"pytorch\"")) << batch.out;
}

TEST(PlanCommandTest, NativeModeWithAPytorchCostModelIsRefusedNamingBoth) {
  Result r = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R",
                         "--mode", "native", "--cost-model", "pytorch-const"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.err, "reshard: --mode: ")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--cost-model \"pytorch-const\"")) << r.err;
  Result batch = RunReshard(
      {"batch"},
      R"j({"mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", "mode": "native", "cost_model": "pytorch"})j"
      "\n");
  json got = json::parse(batch.out);
  EXPECT_TRUE(absl::StartsWith(got.value("error", ""), "mode: ")) << batch.out;
  EXPECT_TRUE(absl::StrContains(got.value("error", ""), "cost_model \"pytorch\"")) << batch.out;
  Result unknown = RunReshard(
      {"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R", "--mode", "fast"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_TRUE(absl::StrContains(unknown.err, "--mode: unknown mode \"fast\"")) << unknown.err;
}

// A limit no plan fits is "no plan" (exit code 3, as for --max-states); a
// limit that is not a positive size is bad input naming the flag or key.
TEST(PlanCommandTest, MaxMemoryTooSmallIsNoPlanAndBadLimitsAreNamed) {
  const std::vector<std::string> base = {"plan",  "--mesh",   "2,2",   "--shape", "64,64",
                                         "--src", "S(0)S(1)", "--dst", "RR"};
  for (const char* mode : {"native", "pytorch"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--mode", mode, "--max-memory", "100"});
    Result r = RunReshard(args);
    EXPECT_EQ(r.exit_code, 3) << mode << ": " << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, "reshard: --max-memory: ")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "100")) << r.err;
  }
  for (const char* bad : {"0", "-5", "lots"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--max-memory", bad});
    Result r = RunReshard(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, "reshard: --max-memory: ")) << r.err;
  }
  Result batch = RunReshard(
      {"batch"},
      "{\"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\", \"max_memory\": 0}\n"
      "{\"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\", \"max_memory\": 8}\n");
  std::vector<std::string> lines = absl::StrSplit(batch.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << batch.out;
  EXPECT_TRUE(absl::StartsWith(json::parse(lines[0]).value("error", ""), "max_memory: "))
      << lines[0];
  EXPECT_TRUE(absl::StartsWith(json::parse(lines[1]).value("error", ""), "max_memory: "))
      << lines[1];
}

// S(0) -> R on 2 ranks, 8 f32 (step_memory.h): input 16 B + send chunk 16 +
// receive buffer 2 * 16 + output 32 = 96 bytes.
TEST(PlanCommandTest, EveryFormatReportsModeAndPeakBytes) {
  const std::vector<std::string> args = {"plan", "--mesh", "2", "--shape", "8",      "--src",
                                         "S(0)", "--dst",  "R", "--mode",  "pytorch"};
  json got = PlanJson({args.begin() + 1, args.end()});
  EXPECT_EQ(got["peak_bytes"], 96) << got;
  EXPECT_EQ(got["mode"], "pytorch") << got;
  Result text = RunReshard(args);
  EXPECT_TRUE(absl::StrContains(text.out, "peak bytes: 96 per rank")) << text.out;
  std::vector<std::string> dot = args;
  dot.insert(dot.end(), {"--format", "dot"});
  Result graph = RunReshard(dot);
  EXPECT_TRUE(absl::StrContains(graph.out, "pytorch mode")) << graph.out;
  EXPECT_TRUE(absl::StrContains(graph.out, "peak 96 bytes per rank")) << graph.out;
  EXPECT_TRUE(absl::StrContains(graph.out, "priced by pytorch devices_per_host=8")) << graph.out;
  Result batch = RunReshard(
      {"batch"},
      R"j({"mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", "cost_model": "pytorch"})j"
      "\n");
  EXPECT_TRUE(absl::StrContains(
      batch.out,
      ",\"mode\":\"pytorch\",\"peak_bytes\":96,\"cost_model\":\"pytorch devices_per_host=8\"}"))
      << batch.out;
}

// Issue 15: every output names the model a plan was priced with: its
// fingerprint (cost_model.h), name and profile, last in the JSON object.
TEST(PlanCommandTest, JsonNamesTheCostModelAndProfile) {
  json got = PlanJson({"--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R"});
  EXPECT_TRUE(absl::StartsWith(got["cost_model"].get<std::string>(), "nccl profile=h100-8x400g "))
      << got;
  got = PlanJson(
      {"--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R", "--cost-model", "alpha-beta"});
  EXPECT_TRUE(
      absl::StartsWith(got["cost_model"].get<std::string>(), "alpha-beta profile=nvlink-ib-8gpu "))
      << got;
  got = PlanJson({"--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R", "--dst-ranks",
                  "2,3", "--cost-model", "pytorch"});
  EXPECT_EQ(got["cost_model"], "pytorch devices_per_host=8") << got;
}

// Swapping a tensor dim's two splits for another dim's is one native step
// over both mesh dims: mesh_dims lists them, mesh_dim is the lowest.
TEST(PlanCommandTest, StepsOverSeveralMeshDimsPrintThem) {
  json got = PlanJson({"--mesh", "2,2", "--shape", "64,64", "--src", "S(0)S(0)", "--dst",
                       "S(1)S(1)", "--mode", "native"});
  int group_steps = 0;
  for (const json& step : got["steps"]) {
    if (!step.contains("mesh_dims")) continue;
    ++group_steps;
    EXPECT_EQ(step["mesh_dims"], json::parse("[0,1]")) << step;
    EXPECT_EQ(step["mesh_dim"], 0) << step;
    if (step["collective"] == "permute") {
      EXPECT_EQ(step["moves"].size(), 2u) << step;
    }
  }
  EXPECT_GT(group_steps, 0) << got;
}

// PyTorch's shard-order example (spec §5, §8), the oracle's answer.
TEST(PlanCommandTest, ShardOrderExampleAsJsonIsTheOracles) {
  Result r =
      RunReshard({"plan", "--mesh", "2,2,2", "--shape", "8,8,8", "--dtype", "f32", "--src",
                  kPytorchSrc, "--dst", kPytorchDst, "--format", "json", "--mode", "pytorch"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(r.out);
  EXPECT_EQ(p["ok"], true) << p;
  EXPECT_EQ(p["algorithm"], "graph") << p;
  EXPECT_EQ(p["trace"], kPytorchTrace) << p;
  EXPECT_TRUE(Close(p["cost"].get<double>(), kPytorchCost)) << p["cost"];
  const json want = json::parse(R"j([[2, "S(0)", "R", "all_gather", [2, 8, 8]],
                                    [0, "S(0)", "R", "all_gather", [4, 8, 8]],
                                    [2, "R", "S(0)", "chunk", [4, 8, 8]]])j");
  json got = json::array();
  for (const json& s : p["steps"]) {
    got.push_back({s["mesh_dim"], s["src"], s["dst"], s["collective"], s["logical_shape"]});
  }
  EXPECT_EQ(got, want);
}

TEST(PlanCommandTest, ShardOrderExampleAsTextAndDot) {
  const std::vector<std::string> args = {"plan",      "--mesh", "2,2,2",     "--shape",
                                         "8,8,8",     "--src",  kPytorchSrc, "--dst",
                                         kPytorchDst, "--mode", "pytorch"};
  Result text = RunReshard(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, kPytorchTrace)) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "all_gather")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "chunk")) << text.out;
  std::vector<std::string> dot_args = args;
  dot_args.insert(dot_args.end(), {"--format", "dot"});
  Result dot = RunReshard(dot_args);
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  const absl::string_view out = absl::StripAsciiWhitespace(dot.out);
  EXPECT_TRUE(absl::StartsWith(out, "digraph")) << dot.out.substr(0, 80);
  size_t arrows = 0;
  for (size_t i = dot.out.find("->"); i != std::string::npos; i = dot.out.find("->", i + 2)) {
    ++arrows;
  }
  EXPECT_GE(arrows, 3u) << dot.out;
  EXPECT_TRUE(absl::StrContains(dot.out, "all_gather")) << dot.out;
  EXPECT_TRUE(absl::EndsWith(out, "}")) << dot.out;
}

TEST(PlanCommandTest, BadTokenAndZeroMeshSizeAreBadInputAndNoGreedyPlanIsThree) {
  Result token = RunReshard(
      {"plan", "--mesh", "2,2,2", "--shape", "8,8,8", "--src", "S(0)RX(1)", "--dst", "RRR"});
  EXPECT_EQ(token.exit_code, 2) << token.err;
  EXPECT_TRUE(absl::StrContains(token.err, "X")) << token.err;
  Result zero =
      RunReshard({"plan", "--mesh", "2,0", "--shape", "8", "--src", "S(0)R", "--dst", "RR"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_TRUE(absl::StrContains(zero.err, "mesh")) << zero.err;
  Result greedy = RunReshard({"plan", "--algorithm", "greedy", "--mesh", "4", "--shape", "8",
                              "--src", "S(0)", "--dst", "P(sum)", "--mode", "pytorch"});
  EXPECT_EQ(greedy.exit_code, 3) << greedy.err;
  EXPECT_FALSE(absl::StripAsciiWhitespace(greedy.err).empty());
}

// Issue 19/20: an 8-D search that ran for minutes and grew past 2.5 GB ends at
// its edge budget with exit 3 and the limit named.
TEST(PlanCommandTest, EightDimSearchEndsAtItsEdgeBudget) {
  Result r = RunReshard({"plan", "--mesh", "2,2,2,2,2,2,2,2", "--shape", "256,256,256,256,2,2,2,2",
                         "--src", "PPPPPPPP", "--dst", "S(0)S(1)S(2)S(3)S(4)S(5)S(6)S(7)"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "max_search_edges")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--max-edges")) << r.err;
}

// Hostile profile files are refused (exit 2) instead of crashing or hanging;
// a profile whose costs overflow is refused naming the field.
TEST(PlanCommandTest, HostileProfilesAreBadInput) {
  const std::vector<std::string> plan = {"plan",  "--mesh", "2",     "--shape", "8",
                                         "--src", "S(0)",   "--dst", "R",       "--profile"};
  const std::string deep = TempPath("deep.json");
  WriteText(deep, std::string(200000, '['));
  std::vector<std::string> args = plan;
  args.push_back(deep);
  Result nested = RunReshard(args);
  EXPECT_EQ(nested.exit_code, 2) << nested.err;
  EXPECT_TRUE(absl::StrContains(nested.err, "nested deeper")) << nested.err;
  args = plan;
  args.push_back("/dev/zero");
  Result zero = RunReshard(args);
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_TRUE(absl::StrContains(zero.err, "not a regular file or a pipe")) << zero.err;
  const std::string huge = TempPath("huge.json");
  WriteText(huge, R"j({"name": "x", "intra_host": {"alpha_us": 1e308, "beta_gbps": 1}, )j"
                  R"j("inter_host": {"alpha_us": 1, "beta_gbps": 1}, "memory_gbps": 1})j");
  Result overflow = RunReshard({"plan", "--mesh", "2,2", "--shape", "8", "--src", "S(0)S(0)",
                                "--dst", "RR", "--profile", huge, "--format", "json"});
  EXPECT_EQ(overflow.exit_code, 2) << overflow.err;
  EXPECT_TRUE(absl::StrContains(overflow.err, "intra_host.alpha_us")) << overflow.err;
  EXPECT_EQ(overflow.out, "");
}

// The default native model is nccl (spec §6.4): on 8 hosts x 8 GPUs a 1 GiB
// S(0)S(0) -> RR is one flat all_gather over both mesh dims; its profiles
// by name.
TEST(PlanCommandTest, NcclByDefaultGathersFlatAtOneGib) {
  Result r = RunReshard({"plan", "--mesh", "8,8", "--shape", "268435456", "--src", "S(0)S(0)",
                         "--dst", "RR", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(r.out);
  EXPECT_EQ(p["mode"], "native") << p;
  ASSERT_EQ(p["steps"].size(), 1u) << p;
  const json& step = p["steps"][0];
  EXPECT_TRUE(step["mesh_dim"] == "0,1" || step.value("mesh_dims", json()) == json({0, 1})) << p;
  Result a100 = RunReshard({"plan", "--mesh", "2,2", "--shape", "64,64", "--src", "S(0)R", "--dst",
                            "RR", "--profile", "a100-8x200g"});
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_TRUE(absl::StrContains(a100.out, "(cost model nccl)")) << a100.out;
}

// One rule for greedy: with --mode native it is bad input.
TEST(PlanCommandTest, GreedyInNativeModeIsBadInput) {
  Result r = RunReshard({"plan", "--mesh", "1,4", "--shape", "8,8", "--src", "S(0)S(1)", "--dst",
                         "P(sum)R", "--algorithm", "greedy", "--mode", "native"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "greedy")) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
