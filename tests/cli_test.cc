// End to end tests of the `reshard` binary (//cli:reshard, passed as argv[1]):
// exit codes 0/2/3, that errors name the bad flag or key, --help everywhere,
// and that --format json parses and --format dot is a digraph. Expected plans
// come from the oracle's golden data (tests/testdata/pytorch-tests.jsonl).

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "nlohmann/json.hpp"

namespace {

using json = nlohmann::json;

std::string g_binary;  // set by main

using reshard::test_util::CommandResult;
using reshard::test_util::TestDataPath;
using Result = CommandResult;

// Runs the binary with `args` and `input` on stdin.
Result RunReshard(const std::vector<std::string>& args, const std::string& input = "") {
  std::vector<std::string> argv = {g_binary};
  argv.insert(argv.end(), args.begin(), args.end());
  return reshard::test_util::RunCommand(argv, input);
}

// The first case of pytorch-tests.jsonl with a non-trivial plan.
json GoldenCase() {
  std::ifstream in(TestDataPath("pytorch-tests.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    json c = json::parse(line);
    if (c["expected"]["ok"] && c["expected"]["steps"].size() >= 2) return c;
  }
  ADD_FAILURE() << "no usable case in pytorch-tests.jsonl";
  return json();
}

std::string List(const json& ints) {
  std::vector<int64_t> v = ints.get<std::vector<int64_t>>();
  return absl::StrJoin(v, ",");
}

std::vector<std::string> PlanArgs(const json& c) {
  std::vector<std::string> args = {"plan",        "--mesh",       List(c["mesh"]),
                                   "--shape",     List(c["shape"]), "--dtype",
                                   c["dtype"],    "--src",        c["src"],
                                   "--dst",       c["dst"],       "--algorithm",
                                   c["algorithm"], "--cost-model", c["cost_model"]};
  return args;
}

TEST(CliTest, HelpEverywhereExitsZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"help"}, {"-h"}, {"help", "plan"},
                                             {"plan", "--help"}, {"batch", "--help"},
                                             {"help", "batch"}}) {
    Result r = RunReshard(args);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(args, " ") << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.out, "NOTATION")) << absl::StrJoin(args, " ");
    EXPECT_TRUE(absl::StrContains(r.out, "EXIT CODES")) << absl::StrJoin(args, " ");
  }
  Result plan = RunReshard({"plan", "--help"});
  for (const char* flag : {"--mesh", "--shape", "--dtype", "--src", "--dst", "--algorithm",
                           "--cost-model", "--devices-per-host", "--coordinate", "--format",
                           "--max-states"}) {
    EXPECT_TRUE(absl::StrContains(plan.out, flag)) << "plan --help does not mention " << flag;
  }
}

TEST(CliTest, NoArgumentsOrUnknownCommandIsBadInput) {
  Result none = RunReshard({});
  EXPECT_EQ(none.exit_code, 2);
  Result unknown = RunReshard({"plna"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "plna")) << unknown.err;
}

TEST(CliTest, PlanTextShowsTraceStepsAndTotal) {
  json c = GoldenCase();
  Result r = RunReshard(PlanArgs(c));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, c["expected"]["trace"].get<std::string>())) << r.out;
  for (const json& step : c["expected"]["steps"]) {
    EXPECT_TRUE(absl::StrContains(r.out, step["collective"].get<std::string>())) << r.out;
    EXPECT_TRUE(absl::StrContains(
        r.out, absl::StrCat(step["src"].get<std::string>(), " -> ", step["dst"].get<std::string>())))
        << r.out;
  }
  EXPECT_TRUE(absl::StrContains(r.out, "total cost")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, c["expected"]["algorithm"].get<std::string>())) << r.out;
}

TEST(CliTest, PlanJsonParsesAndMatchesTheOracle) {
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

TEST(CliTest, PlanDotIsADigraphWithOneEdgePerStep) {
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
TEST(CliTest, BadInputExitsTwoNamingTheFlag) {
  const std::vector<std::string> base = {"--mesh", "2,2", "--shape", "8,6",
                                         "--src",  "S(0)R", "--dst", "RS(1)"};
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
      {"--src", "S(0)", "--src"},             // one token for two mesh dims
      {"--src", "S(0)RR", "--src"},
      {"--src", "S(2)R", "--src"},            // tensor has 2 dims
      {"--src", "P(foo)R", "--src"},
      {"--src", "X(0)R", "--src"},
      {"--src", "S(0)[0]S(0)", "--src"},      // [k] on some tokens only
      {"--src", "S(0)[0]S(0)[0]", "--src"},   // not a permutation
      {"--src", "P(max)P(sum)", "--src"},     // mixed ops other than sum+avg
      {"--src", "_S(0, 3)S(0)", "--src"},     // no position gives split factor 3
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

TEST(CliTest, NoPlanExitsThree) {
  // The greedy planner cannot do S -> P (spec §8).
  Result no_path = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "P(sum)",
                        "--algorithm", "greedy"});
  EXPECT_EQ(no_path.exit_code, 3) << no_path.err;
  EXPECT_TRUE(absl::StrContains(no_path.err, "no_path")) << no_path.err;
  // A search that must expand more than one state.
  Result bound = RunReshard({"plan", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)[1]S(0)[0]",
                      "--dst", "S(1)S(0)", "--max-states", "1"});
  EXPECT_EQ(bound.exit_code, 3) << bound.err;
  EXPECT_TRUE(absl::StrContains(bound.err, "--max-states")) << bound.err;
}

TEST(CliTest, BatchAnswersEveryLineInOrder) {
  json c = GoldenCase();
  json good = c;
  good.erase("expected");
  std::string input = absl::StrCat(
      good.dump(), "\n",
      "{\"id\": \"malformed\", \"mesh\": [2\n",
      "\n",  // blank lines are skipped
      "{\"id\": \"typo\", \"mesh\": [2], \"shape\": [8], \"src\": \"R\", \"dst\": \"R\", "
      "\"algoritm\": \"graph\"}\n",
      "{\"id\": \"type\", \"mesh\": \"2,2\", \"shape\": [8], \"src\": \"R\", \"dst\": \"R\"}\n",
      "{\"id\": \"notation\", \"mesh\": [2], \"shape\": [8], \"src\": \"S(3)\", \"dst\": \"R\"}\n",
      "{\"id\": \"no_path\", \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"P\", "
      "\"algorithm\": \"greedy\"}\n",
      "{\"id\": 7, \"mesh\": [2, 2], \"shape\": [8], \"src\": \"S(0)R\", \"dst\": \"RR\", "
      "\"dtype\": null}\n",
      "[1, 2]\n", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n");
  Result r = RunReshard({"batch", "--timings"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 9u) << r.out;
  std::vector<json> out;
  for (const std::string& l : lines) out.push_back(json::parse(l));

  EXPECT_EQ(out[0]["id"], c["id"]);
  EXPECT_EQ(out[0]["ok"], true);
  EXPECT_EQ(out[0]["trace"], c["expected"]["trace"]);
  // Key order as documented.
  EXPECT_TRUE(absl::StartsWith(lines[0], absl::StrCat("{\"id\":", c["id"].dump(),
                                                      ",\"ok\":true,\"algorithm\":")))
      << lines[0];

  auto expect_error = [&](size_t i, const json& id, const std::string& names) {
    EXPECT_EQ(out[i]["id"], id) << lines[i];
    EXPECT_EQ(out[i]["ok"], false) << lines[i];
    EXPECT_TRUE(absl::StrContains(out[i].value("error", ""), names)) << lines[i];
  };
  expect_error(1, nullptr, "JSON");
  expect_error(2, "typo", "algoritm");
  expect_error(3, "type", "mesh");
  expect_error(4, "notation", "src");
  expect_error(5, "no_path", "no_path");
  EXPECT_TRUE(absl::StartsWith(out[5].value("error", ""), "no_path")) << lines[5];
  EXPECT_EQ(out[6]["id"], 7);
  EXPECT_EQ(out[6]["ok"], true) << lines[6];
  expect_error(7, nullptr, "object");
  expect_error(8, nullptr, "JSON");
  EXPECT_TRUE(absl::StrContains(r.err, "9 lines")) << r.err;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: cli_test <path to reshard>\n");
    return 2;
  }
  g_binary = argv[1];
  return RUN_ALL_TESTS();
}
