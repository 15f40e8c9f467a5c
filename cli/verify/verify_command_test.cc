// `reshard verify` end to end (//cli:reshard, passed as argv[1]): a few
// hundred random cases with ranks as threads, a smaller set with one process
// per rank, a rank killed mid-plan (threads and processes), single cases and
// bad input; cross-mesh cases (spec §14) on threads, one and random, relayed
// ones planned with another cost model, a rank killed at the crossing, one case on two "hosts"
// (processes meeting through a directory store), and their bad input. The random cases cover every
// dtype, reduce op and transition; the summary on stderr shows that every
// collective was exercised.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/util/test_util.h"

namespace {

std::string g_binary;  // set by main

using Result = reshard::test_util::CommandResult;
using reshard::test_util::RunShell;
using reshard::test_util::ShellQuote;

Result Verify(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {g_binary, "verify"};
  argv.insert(argv.end(), args.begin(), args.end());
  return reshard::test_util::RunCommand(argv);
}

// A fresh directory under the test's temporary directory.
std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : lines.back();
}

// "N passed, M failed" -> {N, M}; {-1, -1} when the line has another form.
std::pair<int64_t, int64_t> Counts(const std::string& line) {
  std::vector<std::string> words = absl::StrSplit(line, ' ');
  int64_t passed = -1, failed = -1;
  if (words.size() != 4 || words[1] != "passed," || words[3] != "failed" ||
      !absl::SimpleAtoi(words[0], &passed) || !absl::SimpleAtoi(words[2], &failed)) {
    return {-1, -1};
  }
  return {passed, failed};
}

// The count after "<kind> " on the coverage line of stderr that starts with
// `line` (-1 when missing).
int64_t Covered(const std::string& err, absl::string_view line, absl::string_view kind) {
  const size_t start = err.find(std::string(line));
  if (start == std::string::npos) return -1;
  const size_t end = err.find('\n', start);
  const size_t at = err.find(absl::StrCat(" ", kind, " "), start);
  if (at == std::string::npos || at > end) return -1;
  std::string rest = err.substr(at + kind.size() + 2);
  int64_t n = -1;
  if (!absl::SimpleAtoi(rest.substr(0, rest.find_first_of(",\n")), &n)) return -1;
  return n;
}

constexpr absl::string_view kSteps = "verify: steps in passed cases:";
constexpr absl::string_view kGroupSteps = "verify: of those, over several mesh dims:";

// Every collective appears in the coverage line on stderr with a count > 0.
void ExpectEveryCollective(const std::string& err) {
  for (const char* c :
       {"all_to_all", "all_gather", "all_reduce", "reduce_scatter", "chunk", "partition"}) {
    EXPECT_GT(Covered(err, kSteps, c), 0) << c << "\n" << err;
  }
}

// Native mode (the default): every compat kind, permutes, exchanges, and
// collectives over several mesh dims.
TEST(VerifyTest, RandomNativeCasesOnThreads) {
  Result r = Verify({"--random", "300", "--seed", "11", "--max-ranks", "8"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto [passed, failed] = Counts(LastLine(r.out));
  EXPECT_EQ(failed, 0) << r.out;
  // Some cases need R->P(prod); most must run.
  EXPECT_GE(passed, 250) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "verify: 300/300 cases")) << r.err;  // progress
  ExpectEveryCollective(r.err);
  EXPECT_GT(Covered(r.err, kSteps, "permute"), 0) << r.err;
  EXPECT_GT(Covered(r.err, kSteps, "exchange"), 0) << r.err;
  EXPECT_GT(Covered(r.err, kGroupSteps, "all_gather") + Covered(r.err, kGroupSteps, "all_to_all"),
            0)
      << r.err;
  EXPECT_GT(
      Covered(r.err, kGroupSteps, "reduce_scatter") + Covered(r.err, kGroupSteps, "all_reduce"), 0)
      << r.err;
}

TEST(VerifyTest, RandomPytorchCasesOnThreads) {
  Result r = Verify({"--random", "200", "--seed", "11", "--max-ranks", "8", "--mode", "pytorch"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto [passed, failed] = Counts(LastLine(r.out));
  EXPECT_EQ(failed, 0) << r.out;
  // Some cases have no plan (e.g. greedy S->P); most must run.
  EXPECT_GE(passed, 130) << r.out;
  ExpectEveryCollective(r.err);
  EXPECT_EQ(Covered(r.err, kSteps, "permute"), 0) << r.err;
  EXPECT_EQ(Covered(r.err, kGroupSteps, "all_gather"), 0) << r.err;
}

TEST(VerifyTest, RandomCasesInProcesses) {
  for (const char* mode : {"native", "pytorch"}) {
    Result r = Verify(
        {"--random", "20", "--seed", "5", "--max-ranks", "8", "--processes", "--mode", mode});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto [passed, failed] = Counts(LastLine(r.out));
    EXPECT_EQ(failed, 0) << r.out;
    EXPECT_GE(passed, 12) << mode << "\n" << r.out;
  }
}

TEST(VerifyTest, OneCase) {
  Result r = Verify({"--mesh", "2,2,2", "--shape", "13,8", "--dtype", "bf16", "--src",
                     "S(0)[1]S(0)[0]P(avg)", "--dst", "RS(1)[0]S(1)[1]"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
  r = Verify({"--mesh", "3,2", "--shape", "7,5", "--src", "P(max)S(1)", "--dst", "S(1)[1]S(1)[0]",
              "--processes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
}

TEST(VerifyTest, OneCaseWithoutPlanIsSkipped) {
  // Native mode plans it (through a Replicate); pytorch mode has no S -> P.
  Result r = Verify(
      {"--mesh", "2", "--shape", "4", "--src", "S(0)", "--dst", "P(sum)", "--mode", "pytorch"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "skipped")) << r.out;
  EXPECT_EQ(LastLine(r.out), "0 passed, 0 failed");
}

// Native mode plans R->P(prod) on the size-1 mesh dim 0 here (then a group
// reduce_scatter over mesh dims 0, 1): it moves nothing and runs
// (RunsOnData, planner/steps/step.h). Over two ranks it has no exact split
// and the case is skipped.
TEST(VerifyTest, RToPProdRunsOnlyOnASizeOneMeshDim) {
  Result r = Verify({"--mesh", "1,2,4", "--shape", "7", "--src", "RP(prod)S(0)", "--dst",
                     "S(0)[0]S(0)[1]R", "--mode", "native"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
  r = Verify({"--mesh", "2", "--shape", "4", "--src", "R", "--dst", "P(prod)"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "needs R->P(prod), which has no exact split")) << r.out;
  EXPECT_EQ(LastLine(r.out), "0 passed, 0 failed");
}

// A killed rank fails the case; the survivors in its group name the step and
// mesh dim, and the printed line reruns the case with the same fault.
void ExpectKilledRankReported(bool processes) {
  std::vector<std::string> args = {
      "--mesh",      "2,2", "--shape",     "8,8",   "--src",     "S(0)S(1)",
      "--dst",       "RR",  "--algorithm", "graph", "--mode",    "pytorch",
      "--kill-rank", "3",   "--kill-at",   "1",     "--timeout", "5"};
  if (processes) args.push_back("--processes");
  Result r = Verify(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "0 passed, 1 failed");
  EXPECT_TRUE(absl::StrContains(r.out, "rank 2: ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "step 2 (S(1)->R all_gather on mesh dim 1)")) << r.out;
  // Rerun the FAIL line as printed (with this binary for "reshard").
  std::string fail_line;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::ConsumePrefix(&line, "FAIL reshard ")) fail_line = std::string(line);
  }
  ASSERT_FALSE(fail_line.empty()) << r.out;
  EXPECT_TRUE(absl::StrContains(fail_line, "--kill-rank 3 --kill-at 1")) << fail_line;
  Result again = RunShell(absl::StrCat(ShellQuote(g_binary), " ", fail_line));
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_TRUE(absl::StrContains(again.out, "mesh dim 1")) << again.out;
}

TEST(VerifyTest, KilledRankOnThreads) { ExpectKilledRankReported(false); }

// A rank dying in a permute's exchange (all_to_all_v over the flattened
// group) fails every other member, each naming the permute.
TEST(VerifyTest, KilledRankInPermute) {
  // A transpose, which native mode's default model (nccl) plans as a permute.
  Result r = Verify({"--mesh", "2,2", "--shape", "5,3", "--src", "S(0)S(1)", "--dst", "S(1)S(0)",
                     "--kill-rank", "1", "--kill-at", "0", "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (int rank : {0, 2, 3}) {
    EXPECT_TRUE(absl::StrContains(
        r.out,
        absl::StrCat("rank ", rank, ": ", "DEADLINE_EXCEEDED: step 1 (permute on mesh dims {0,1}")))
        << r.out;
  }
}
TEST(VerifyTest, KilledRankProcess) { ExpectKilledRankReported(true); }

TEST(VerifyTest, BadInputAndHelp) {
  Result r = Verify({"--random", "3", "--mesh", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--mesh")) << r.err;
  r = Verify({"--mesh", "2", "--shape", "4", "--src", "S(0)", "--dst", "R", "--dtype", "f13"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--dtype")) << r.err;
  r = Verify({"--mesh", "2", "--shape", "4", "--src", "S(3)", "--dst", "R"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  r = Verify({"--mesh", "2", "--shape", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--src")) << r.err;
  r = Verify({"--mesh", "2", "--shape", "4", "--src", "P(sum)", "--dst", "R", "--dtype", "bool"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "not defined on bool data")) << r.err;
  r = Verify({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "--processes")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "N passed, M failed")) << r.out;
}

// Cross-mesh moves (spec §14), every participant a thread: the trainer to
// inference case on disjoint ranks, and a Partial source reduced before an
// overlapping crossing.
TEST(VerifyTest, CrossMeshOneCase) {
  Result r = Verify({"--mesh", "4,2", "--shape", "16,12", "--src", "S(0)S(1)", "--dst-mesh", "2",
                     "--dst-ranks", "8,9", "--dst", "S(1)"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
  r = Verify({"--mesh", "2,2", "--shape", "7,5", "--dtype", "bf16", "--src", "P(sum)S(1)",
              "--dst-mesh", "3", "--src-ranks", "0,1,2,3", "--dst-ranks", "3,4,1", "--dst",
              "S(0)"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
}

// Every participant a process: RunRanks connects the union communicator,
// each child its meshes' on the same file store and hands back its block.
TEST(VerifyTest, CrossMeshCasesInProcesses) {
  Result r = Verify({"--mesh", "2,2", "--shape", "7,5", "--dtype", "i32", "--src", "P(sum)S(1)",
                     "--dst-mesh", "3", "--src-ranks", "0,1,2,3", "--dst-ranks", "3,4,1", "--dst",
                     "P(max)", "--processes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
  r = Verify({"--random", "10", "--seed", "4", "--cross-mesh", "--processes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto [passed, failed] = Counts(LastLine(r.out));
  EXPECT_EQ(failed, 0) << r.out;
  EXPECT_GE(passed, 8) << r.out;
}

TEST(VerifyTest, RandomCrossMeshCasesOnThreads) {
  Result r = Verify({"--random", "25", "--seed", "3", "--cross-mesh"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto [passed, failed] = Counts(LastLine(r.out));
  EXPECT_EQ(failed, 0) << r.out;
  EXPECT_GE(passed, 20) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "verify: 25/25 cases")) << r.err;
  EXPECT_TRUE(
      absl::StrContains(r.err, absl::StrCat("verify: crossings in passed cases: ", passed, " (")))
      << r.err;
}

// Spec §14 "Relaying": planned with a model of bandwidth alone (an
// alpha-beta profile of next to no latency), fan-outs relay through the
// destination ranks; random cases and one fan-out in processes (which `reshard
// plan` shows relayed with the same flags) run and pass.
TEST(VerifyTest, CrossMeshRelayedCases) {
  const std::string profile = Scratch("relay") + "/bandwidth-only.json";
  std::FILE* f = std::fopen(profile.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"name": "bandwidth-only", "intra_host": {"alpha_us": 0.001, "beta_gbps": 1},)"
             R"( "inter_host": {"alpha_us": 0.001, "beta_gbps": 1}, "memory_gbps": 50})",
             f);
  std::fclose(f);
  const std::vector<std::string> model = {"--cost-model", "alpha-beta", "--profile", profile};
  std::vector<std::string> args = {"--random", "30", "--seed", "1", "--cross-mesh"};
  args.insert(args.end(), model.begin(), model.end());
  Result r = Verify(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Counts(LastLine(r.out)).second, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "verify: crossings relayed by destination ranks")) << r.err;
  std::vector<std::string> fanout = {"--mesh",  "1",     "--dst-mesh", "8",    "--src-ranks", "8",
                                     "--shape", "16,16", "--src",      "S(0)", "--dst",       "R"};
  fanout.insert(fanout.end(), model.begin(), model.end());
  std::vector<std::string> plan = {g_binary, "plan"};
  plan.insert(plan.end(), fanout.begin(), fanout.end());
  Result planned = reshard::test_util::RunCommand(plan);
  EXPECT_TRUE(absl::StrContains(planned.out, "destination ranks pass on what an earlier round"))
      << planned.out << planned.err;
  fanout.push_back("--processes");
  r = Verify(fanout);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed");
}

// Spec §14 "Rails": S(0) over two hosts of 2 ranks to S(0) over the first
// (8 MiB bf16, the nccl model) enters host 0 through rank 1's NIC alone
// when direct, so `reshard plan` spreads it over both; verify runs that plan
// on threads and in processes and every rank gets its block.
TEST(VerifyTest, CrossMeshSpreadOverRails) {
  const std::vector<std::string> move = {
      "--mesh", "4",     "--dst-mesh", "2",     "--shape", "2048,2048",          "--dtype",
      "bf16",   "--src", "S(0)",       "--dst", "S(0)",    "--devices-per-host", "2"};
  std::vector<std::string> plan = {g_binary, "plan"};
  plan.insert(plan.end(), move.begin(), move.end());
  Result planned = reshard::test_util::RunCommand(plan);
  EXPECT_TRUE(absl::StrContains(planned.out, "pass on, over NVLink, what an earlier round"))
      << planned.out << planned.err;
  for (const bool processes : {false, true}) {
    std::vector<std::string> args = move;
    if (processes) args.push_back("--processes");
    Result r = Verify(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(LastLine(r.out), "1 passed, 0 failed") << processes;
  }
}

// A destination rank killed at the crossing fails the case (exit 1); the
// others name the crossing's all_to_all_v, and the FAIL line reruns it.
TEST(VerifyTest, CrossMeshKilledRank) {
  Result r = Verify({"--mesh", "4,2", "--shape", "16,12", "--src", "S(0)S(1)", "--dst-mesh", "2",
                     "--dst-ranks", "8,9", "--dst", "S(1)", "--kill-rank", "8", "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out), "0 passed, 1 failed");
  EXPECT_TRUE(absl::StrContains(r.out, "rank 8: UNAVAILABLE: all_to_all_v")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "rank 0: UNAVAILABLE: all_to_all_v")) << r.out;
  std::string fail_line;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::ConsumePrefix(&line, "FAIL reshard ")) fail_line = std::string(line);
  }
  ASSERT_FALSE(fail_line.empty()) << r.out;
  EXPECT_TRUE(absl::StrContains(fail_line, "--dst-mesh 2 --dst-ranks 8,9")) << fail_line;
  EXPECT_TRUE(absl::StrContains(fail_line, "--kill-rank 8 --kill-at 0")) << fail_line;
  Result again = RunShell(absl::StrCat(ShellQuote(g_binary), " ", fail_line));
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
}

// Two "hosts" of one cross-mesh case (spec §14), each a `reshard verify
// --store DIR --ranks RANKS` of its own meeting the other through a shared
// directory store (scripts/multihost_test does the same through Redis across
// network namespaces).
struct TwoHosts {
  Result a, b;
};

TwoHosts RunTwoHosts(const std::vector<std::string>& args, const std::string& ranks_a,
                     const std::string& ranks_b, const std::vector<std::string>& args_b = {}) {
  static int runs = 0;
  const std::string dir = Scratch(absl::StrCat("hosts", ++runs));
  const std::string store = Scratch(absl::StrCat("hosts", runs, "/store"));
  auto host = [&](const std::vector<std::string>& host_args, const std::string& ranks) {
    std::vector<std::string> words = {ShellQuote(g_binary), "verify"};
    for (const std::string& a : host_args) words.push_back(ShellQuote(a));
    words.insert(words.end(), {"--store", ShellQuote(store), "--ranks", ranks, "--timeout", "20"});
    return absl::StrJoin(words, " ");
  };
  const std::string d = ShellQuote(dir);
  // In a subshell: RunShell redirects the whole line's output.
  RunShell(absl::StrCat("(", host(args, ranks_a), " >", d, "/a.out 2>", d, "/a.err & a=$!; ",
                        host(args_b.empty() ? args : args_b, ranks_b), " >", d, "/b.out 2>", d,
                        "/b.err; echo $? >", d, "/b.rc; wait $a; echo $? >", d, "/a.rc)"));
  auto read = [&](const char* host) {
    Result r;
    using reshard::test_util::ReadFile;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(absl::StrCat(dir, "/", host, ".rc"))),
                          &r.exit_code)) {
      r.exit_code = -1;
    }
    r.out = ReadFile(absl::StrCat(dir, "/", host, ".out"));
    r.err = ReadFile(absl::StrCat(dir, "/", host, ".err"));
    return r;
  };
  return {read("a"), read("b")};
}

// Each host exits 0 and prints the one case passed.
void ExpectBothHostsPassTheCase(const TwoHosts& h) {
  EXPECT_EQ(h.a.exit_code, 0) << h.a.out << h.a.err;
  EXPECT_EQ(h.b.exit_code, 0) << h.b.out << h.b.err;
  EXPECT_EQ(LastLine(h.a.out), "1 passed, 0 failed");
  EXPECT_EQ(LastLine(h.b.out), "1 passed, 0 failed");
}

// Issue 44: --ranks A is the one rank A (it was "not a range A-B").
TEST(VerifyTest, OneRankPerHostIsGivenAsA) {
  ExpectBothHostsPassTheCase(
      RunTwoHosts({"--mesh", "2", "--shape", "6", "--src", "S(0)", "--dst", "R"}, "0", "1"));
}

// Sources on one host, destinations on the other: ranks that only send and
// ranks that only receive, each host checking every destination block.
TEST(VerifyTest, CrossMeshOnTwoHostsSourcesOnOneDestinationsOnTheOther) {
  const TwoHosts h = RunTwoHosts({"--mesh", "2,2", "--shape", "9,6", "--src", "S(0)S(1)",
                                  "--dst-mesh", "4", "--dst-ranks", "4,5,6,7", "--dst", "S(1)"},
                                 "0-3", "4-7");
  ExpectBothHostsPassTheCase(h);
}

// Overlapping sets split across the hosts: ranks 1 and 3 are sources and
// destinations, 0 and 2 only sources, 4 only a destination; a Partial source
// reduced before the crossing.
TEST(VerifyTest, CrossMeshOnTwoHostsOverlappingRankSets) {
  const TwoHosts h = RunTwoHosts(
      {"--mesh", "2,2", "--shape", "7,5", "--dtype", "i32", "--src", "P(sum)S(1)", "--dst-mesh",
       "3", "--src-ranks", "0,1,2,3", "--dst-ranks", "3,4,1", "--dst", "S(0)"},
      "0-2", "3-4");
  ExpectBothHostsPassTheCase(h);
}

// Hosts that disagree on the move's rank lists: both refuse (exit 2), naming
// --dst-ranks, long before the timeout.
TEST(VerifyTest, CrossMeshHostsDisagreeingOnTheMoveAreRefused) {
  const std::vector<std::string> move = {"--mesh", "2",          "--shape", "6",     "--src",
                                         "S(0)",   "--dst-mesh", "2",       "--dst", "R"};
  std::vector<std::string> a = move, b = move;
  a.insert(a.end(), {"--dst-ranks", "2,3"});
  b.insert(b.end(), {"--dst-ranks", "3,2"});
  const TwoHosts h = RunTwoHosts(a, "0-1", "2-3", b);
  EXPECT_EQ(h.a.exit_code, 2) << h.a.out << h.a.err;
  EXPECT_EQ(h.b.exit_code, 2) << h.b.out << h.b.err;
  for (const Result* r : {&h.a, &h.b}) {
    EXPECT_TRUE(absl::StrContains(r->err, "the hosts disagree on the job: --dst-ranks is '"))
        << r->err;
  }
}

// Bad input (exit 2) naming the flag, and what cross-mesh cases cannot do.
TEST(VerifyTest, CrossMeshBadInput) {
  const std::vector<std::string> one = {"--mesh", "2",     "--shape", "4",          "--src",
                                        "S(0)",   "--dst", "R",       "--dst-mesh", "2"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--dst-ranks", "2,2"}, "--dst-ranks: rank 2 appears twice"},
      {{"--src-ranks", "0"}, "--src-ranks"},
      {{"--store", Scratch("bad-input-store"), "--ranks", "0-5"},
       "--ranks 0-5: a cross-mesh case's --ranks are global ranks, and this move's are 0 to 1"},
      {{"--algorithm", "graph"}, "--algorithm"},
      {{"--kill-rank", "7"}, "--kill-rank: rank 7 takes no part in the move"},
      {{"--kill-rank", "0", "--kill-at", "1"}, "--kill-at"},
      {{"--max-ranks", "3", "--dst-ranks", "2,3"}, "--max-ranks: the case has 4 participants"},
      {{"--cost-model", "pytorch"}, "--cost-model \"pytorch\" prices compat steps only"},
      {{"--cost-model", "alpha-beta", "--profile", "/nonexistent.json"}, "--profile"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = one;
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = Verify(args);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(extra, " ") << "\n" << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, message)) << r.err;
  }
  Result r = Verify({"--cross-mesh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--cross-mesh goes with --random N")) << r.err;
  r = Verify({"--random", "2", "--cross-mesh", "--store", Scratch("random-store")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--store: random cross-mesh cases run on this host only"))
      << r.err;
  r = Verify({"--random", "2", "--cross-mesh", "--cost-model", "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--cost-model: unknown cost model")) << r.err;
  r = Verify({"--mesh", "2", "--shape", "4", "--src", "S(0)", "--dst", "R", "--profile", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--profile: chooses the model cross-mesh cases")) << r.err;
  r = Verify({"--random", "2", "--cross-mesh", "--dst-mesh", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--dst-mesh describes one case")) << r.err;
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: verify_command_test <path to reshard>\n");
    return 2;
  }
  g_binary = argv[1];
  return RUN_ALL_TESTS();
}
