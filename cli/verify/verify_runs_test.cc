// `reshard verify` runs end to end: one case, random cases on threads and
// processes (native mode running permutes, exchanges and group steps),
// cross-mesh moves and memory rounds, a rank dying mid-plan, bad listen
// addresses, and greedy's mode.

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::RunReshard;

// The first integer captured by `pattern` in `text`, or -1 when it is absent.
int64_t Count(const std::string& text, const std::string& pattern) {
  std::smatch m;
  int64_t n = -1;
  if (std::regex_search(text, m, std::regex(pattern))) {
    EXPECT_TRUE(absl::SimpleAtoi(m.str(1), &n));
  }
  return n;
}

Result Verify(std::vector<std::string> args) {
  args.insert(args.begin(), "verify");
  return RunReshard(args);
}

TEST(VerifyRunsTest, OneCaseWithUnevenShardsAndAShardOrderPasses) {
  Result r = Verify({"--mesh", "2,2,2", "--shape", "13,8", "--dtype", "f32", "--src",
                     "S(0)[1]S(0)[0]S(1)", "--dst", "RS(1)S(0)"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Native mode (the default) must have run permutes, exchanges and group steps.
TEST(VerifyRunsTest, RandomCasesPassAndNativeRanEveryKindOfStep) {
  Result r = Verify({"--random", "300", "--seed", "7", "--max-ranks", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string tail = r.err.substr(r.err.size() > 400 ? r.err.size() - 400 : 0);
  for (const std::string kind : {"permute", "exchange"}) {
    EXPECT_GT(Count(r.err, kind + R"( (\d+))"), 0) << kind << ": " << tail;
  }
  std::smatch g;
  ASSERT_TRUE(std::regex_search(r.err, g, std::regex("over several mesh dims: (.*)"))) << tail;
  bool any = false;
  const std::string groups = g.str(1);
  const std::regex number(R"(\d+)");
  for (auto it = std::sregex_iterator(groups.begin(), groups.end(), number);
       it != std::sregex_iterator(); ++it) {
    any = any || std::stoll(it->str()) > 0;
  }
  EXPECT_TRUE(any) << tail;
}

TEST(VerifyRunsTest, RandomCasesPassInPytorchModeAndAsProcesses) {
  Result pytorch =
      Verify({"--mode", "pytorch", "--random", "200", "--seed", "9", "--max-ranks", "8"});
  EXPECT_EQ(pytorch.exit_code, 0) << pytorch.out << pytorch.err;
  Result processes = Verify({"--random", "30", "--seed", "11", "--max-ranks", "8", "--processes"});
  EXPECT_EQ(processes.exit_code, 0) << processes.out << processes.err;
}

// Cross-mesh moves (spec §14), every participant a thread: all three kinds of
// rank sets must have run; as processes too; under memory limits (each case's
// halfway between its crossing's least and its peak) the crossings run in
// rounds, checked against the ground truth with exact byte counts.
TEST(VerifyRunsTest, CrossMeshCasesCrossEveryKindOfRankSetAndRunInRounds) {
  Result threads = Verify({"--random", "40", "--seed", "5", "--cross-mesh"});
  ASSERT_EQ(threads.exit_code, 0) << threads.out << threads.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      threads.err, m,
      std::regex(
          R"(crossings in passed cases: (\d+) \((\d+) disjoint, (\d+) overlapping, (\d+) equal)")))
      << threads.err;
  for (size_t i = 1; i <= 4; ++i) EXPECT_GT(std::stoll(m.str(i)), 0) << threads.err;
  Result processes = Verify({"--random", "10", "--seed", "5", "--cross-mesh", "--processes"});
  EXPECT_EQ(processes.exit_code, 0) << processes.out << processes.err;
  Result rounds = Verify({"--random", "40", "--seed", "5", "--cross-mesh", "--memory-rounds"});
  ASSERT_EQ(rounds.exit_code, 0) << rounds.out << rounds.err;
  EXPECT_GT(Count(rounds.err, R"(crossings in rounds \(under a memory limit\): (\d+))"), 0)
      << rounds.err;
}

// Rank 3 dies just before its second collective: the case fails (exit 1)
// within the 5 s timeout, every surviving rank with an error that names the
// step and the mesh dim, rather than hang.
TEST(VerifyRunsTest, ARankDyingMidPlanFailsTheOthersInTime) {
  for (const bool processes : {false, true}) {
    std::vector<std::string> args = {"--mode",    "pytorch",   "--mesh",      "2,2,2",
                                     "--shape",   "13,8",      "--src",       "S(0)[1]S(0)[0]S(1)",
                                     "--dst",     "RS(1)S(0)", "--kill-rank", "3",
                                     "--kill-at", "1",         "--timeout",   "5"};
    if (processes) args.push_back("--processes");
    Result r = Verify(args);
    ASSERT_EQ(r.exit_code, 1) << processes << ": " << r.out << r.err;
    std::map<int, std::string> ranks;
    const std::regex rank_line(R"((?:^|\n) +rank (\d+): ([^\n]*))");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), rank_line);
         it != std::sregex_iterator(); ++it) {
      ranks[std::stoi((*it)[1].str())] = (*it)[2].str();
    }
    ASSERT_EQ(ranks.size(), 4u) << r.out;
    for (int rank = 0; rank < 4; ++rank) ASSERT_EQ(ranks.count(rank), 1u) << r.out;
    for (int rank : {0, 1, 2}) {
      EXPECT_TRUE(std::regex_search(ranks[rank], std::regex(R"(step \d+ \(.* on mesh dim \d+\))")))
          << ranks[rank];
    }
    EXPECT_TRUE(absl::EndsWith(absl::StripTrailingAsciiWhitespace(r.out), "0 passed, 1 failed"))
        << r.out;
    // No empty reason ("exited with 9: " with nothing after it, issue 20).
    for (const auto& [rank, reason] : ranks) {
      const absl::string_view v = absl::StripTrailingAsciiWhitespace(reason);
      EXPECT_FALSE(absl::StripAsciiWhitespace(reason).empty()) << rank;
      EXPECT_FALSE(absl::EndsWith(v, ":")) << rank << ": " << reason;
    }
    // Why it failed is an error: on stderr too, not only in the result on stdout.
    EXPECT_TRUE(absl::StrContains(r.err, "reshard verify: case failed: plan ")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "step ")) << r.err;
  }
}

// Where ranks listen is input: a typo is exit 2 naming the flag, before any
// rank starts (it was exit 1, "case failed", issue 20).
TEST(VerifyRunsTest, BadListenAddressIsBadInputNamingTheFlag) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--interface", "nosuch0"}, {"--hostname", "192.0.2.1"}}) {
    Result r = Verify(
        {"--mesh", "2", "--shape", "4", "--src", "S(0)", "--dst", "R", flag, value, "--processes"});
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, flag)) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// One rule for greedy: without --mode it means pytorch mode (plan's README
// example), with --mode native it is bad input.
TEST(VerifyRunsTest, GreedyMeansPytorchModeAndIsRefusedInNativeMode) {
  const std::vector<std::string> args = {"--mesh",   "1,4",   "--shape", "8,8",         "--src",
                                         "S(0)S(1)", "--dst", "P(sum)R", "--algorithm", "greedy"};
  Result pytorch = Verify(args);
  EXPECT_EQ(pytorch.exit_code, 0) << pytorch.out << pytorch.err;
  std::vector<std::string> native = args;
  native.insert(native.end(), {"--mode", "native"});
  Result refused = Verify(native);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "greedy")) << refused.err;
  EXPECT_EQ(refused.out, "");
}

}  // namespace
