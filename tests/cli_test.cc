// End to end tests of the `reshard` binary (//cli:reshard, passed as argv[1]):
// exit codes 0/2/3, that errors name the bad flag or key, --help everywhere,
// and that --format json parses and --format dot is a digraph. Expected plans
// come from the oracle's golden data (tests/testdata/pytorch-tests.jsonl).

#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/utf8.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

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
  std::vector<std::string> args = {"plan",           "--mesh",       List(c["mesh"]), "--shape",
                                   List(c["shape"]), "--dtype",      c["dtype"],      "--src",
                                   c["src"],         "--dst",        c["dst"],        "--algorithm",
                                   c["algorithm"],   "--cost-model", c["cost_model"]};
  return args;
}

TEST(CliTest, HelpEverywhereExitsZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"help"},
                                             {"-h"},
                                             {"help", "plan"},
                                             {"plan", "--help"},
                                             {"batch", "--help"},
                                             {"help", "batch"},
                                             {"calibrate", "--help"}}) {
    Result r = RunReshard(args);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(args, " ") << "\n" << r.err;
    if (args[0] != "calibrate") {
      EXPECT_TRUE(absl::StrContains(r.out, "NOTATION")) << absl::StrJoin(args, " ");
    }
    EXPECT_TRUE(absl::StrContains(r.out, "EXIT CODES")) << absl::StrJoin(args, " ");
  }
  Result plan = RunReshard({"plan", "--help"});
  for (const char* flag :
       {"--mesh", "--shape", "--dtype", "--src", "--dst", "--algorithm", "--cost-model",
        "--devices-per-host", "--profile", "--coordinate", "--format", "--max-states"}) {
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
    EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat(step["src"].get<std::string>(), " -> ",
                                                      step["dst"].get<std::string>())))
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

TEST(CliTest, NoPlanExitsThree) {
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

// A malformed line's error quotes where the JSON parser stopped: a line
// that is one long broken key gets a short message (it was the whole 5 KB
// key), as valid JSON.
TEST(CliTest, BatchErrorsOnLongMalformedLinesStayShort) {
  Result r = RunReshard({"batch"}, reshard::test_util::JsonWithALongBrokenKey() + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(r.out);
  EXPECT_EQ(result["ok"], false);
  const std::string error = result["error"];
  EXPECT_TRUE(absl::StrContains(error, "malformed JSON")) << error;
  EXPECT_LE(error.size(), 400u) << error;
}

TEST(CliTest, BatchAnswersEveryLineInOrder) {
  json c = GoldenCase();
  json good = c;
  good.erase("expected");
  std::string input = absl::StrCat(
      good.dump(), "\n", "{\"id\": \"malformed\", \"mesh\": [2\n",
      "\n",  // blank lines are skipped
      "{\"id\": \"typo\", \"mesh\": [2], \"shape\": [8], \"src\": \"R\", \"dst\": \"R\", "
      "\"algoritm\": \"graph\"}\n",
      "{\"id\": \"type\", \"mesh\": \"2,2\", \"shape\": [8], \"src\": \"R\", \"dst\": \"R\"}\n",
      "{\"id\": \"notation\", \"mesh\": [2], \"shape\": [8], \"src\": \"S(3)\", \"dst\": \"R\"}\n",
      "{\"id\": \"no_path\", \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"P\", "
      "\"algorithm\": \"greedy\", \"mode\": \"pytorch\"}\n",
      "{\"id\": 7, \"mesh\": [2, 2], \"shape\": [8], \"src\": \"S(0)R\", \"dst\": \"RR\", "
      "\"dtype\": null}\n",
      "[1, 2]\n",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n");
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
  EXPECT_TRUE(absl::StartsWith(
      lines[0], absl::StrCat("{\"id\":", c["id"].dump(), ",\"ok\":true,\"algorithm\":")))
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

// Issue 9, item 1: a number beyond double's range ([1e400]) aborted the
// batch and lost the results not yet flushed; now it is one bad line.
// Issue 44: a batch whose later line crashed or was killed lost the results
// of the lines before it (they sat in stdout's buffer). Each result is now
// flushed before the next line is planned: with stdout a pipe, the first
// answer arrives while the second line has not even been sent.
TEST(CliTest, BatchFlushesEachResultBeforeTheNextLine) {
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    execl(g_binary.c_str(), g_binary.c_str(), "batch", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  const std::string line =
      "{\"id\": 1, \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}\n";
  ASSERT_EQ(write(to_child[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  pollfd ready{from_child[0], POLLIN, 0};
  const int n = poll(&ready, 1, 30000);  // stdin stays open: only a flush can answer
  EXPECT_EQ(n, 1) << "no answer to line 1 while line 2 was awaited";
  char buffer[4096];
  const ssize_t got = n == 1 ? read(from_child[0], buffer, sizeof(buffer)) : 0;
  EXPECT_TRUE(absl::StrContains(std::string(buffer, got > 0 ? got : 0), R"("id":1,"ok":true)"));
  close(to_child[1]);
  close(from_child[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(CliTest, BatchNumberOverflowIsOneBadLine) {
  const std::string good =
      "{\"id\": 1, \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}\n";
  std::string input;
  for (int i = 0; i < 1000; ++i) input += good;
  input += "[1e400]\n{\"id\": 1e400}\n" + good;
  Result r = RunReshard({"batch"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1003u);
  for (size_t i : {size_t{1000}, size_t{1001}}) {
    json bad = json::parse(lines[i]);
    EXPECT_EQ(bad["ok"], false) << lines[i];
    EXPECT_TRUE(absl::StrContains(bad["error"].get<std::string>(), "overflow")) << lines[i];
  }
  EXPECT_EQ(json::parse(lines[1002])["ok"], true) << lines[1002];
}

// Issue 44: under `ulimit -v` verify and bench aborted with an uncaught
// std::system_error, or exited 1 "a case failed" with a gloo message per
// rank. Now: exit 3 and one message naming the limit.
TEST(CliTest, RanksOutOfMemoryExitThreeWithOneMessage) {
  const std::string bin = reshard::test_util::ShellQuote(g_binary);
  for (const char* limit : {"50000", "100000"}) {
    for (const char* command : {"verify", "bench --repeat 1"}) {
      const std::string line = absl::StrCat("ulimit -v ", limit, "; exec ", bin, " ", command,
                                            " --mesh 2,2 --shape 64,64 --src 'S(0)S(1)' --dst RR");
      Result r = reshard::test_util::RunCommand({"/bin/sh", "-c", line});
      EXPECT_EQ(r.exit_code, 3) << line << "\n" << r.out << r.err;
      EXPECT_TRUE(absl::StrContains(r.err, "ulimit")) << line << "\n" << r.err;
      EXPECT_EQ(absl::StrContains(r.err, "rank 1"), false) << r.err;
      const size_t first = r.err.find("out of resources");
      EXPECT_NE(first, std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("out of resources", first + 1), std::string::npos) << "said once:\n"
                                                                              << r.err;
    }
  }
}

// Issue 44: verify took --seed -1 where bench refused it; an integer past
// int64 was "not an integer". One rule now (IntFlagIn, ParseInt).
TEST(CliTest, BoundedIntegerFlagsSayTheirRange) {
  for (const char* command : {"verify", "bench"}) {
    Result r = RunReshard(
        {command, "--seed", "-1", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R"});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_TRUE(absl::StrContains(r.err, "--seed: -1 is out of range; must be between 0 and"))
        << command << ": " << r.err;
  }
  Result huge = RunReshard({"bench", "--repeat", "99999999999999999999", "--mesh", "2", "--shape",
                            "8", "--src", "S(0)", "--dst", "R"});
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(huge.err, "is out of range for an integer")) << huge.err;
}

// Issue 9, item 2: every output line is valid UTF-8 JSON, whatever bytes the
// input holds, and quotes are shortened between characters.
TEST(CliTest, OutputIsValidUtf8WhateverTheInput) {
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xC3\xA9";
  const std::string input =
      absl::StrCat("\xFF\n", "{\"id\": \"\xC3\xA9\", \"mesh\": \"", accents,
                   "\", \"shape\": [8], \"src\": \"R\", \"dst\": \"R\"}\n",
                   "{\"id\": 2, \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)", accents,
                   "\", \"dst\": \"R\"}\n",
                   "{\"id\": 3, \"mesh\": [2], \"shape\": [8], \"src\": \"R\", \"dst\": \"R\", \"",
                   accents, "\": 1}\n");
  Result r = RunReshard({"batch"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;
  for (const std::string& line : lines) {
    EXPECT_TRUE(reshard::IsValidUtf8(line)) << line;
    json result = json::parse(line);  // throws on invalid JSON
    EXPECT_EQ(result["ok"], false) << line;
  }
  for (const std::string& bad_src : {absl::StrCat("S(0)", accents), std::string("S(0)\xFF\xFE")}) {
    Result plan =
        RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src", bad_src, "--dst", "R"});
    EXPECT_EQ(plan.exit_code, 2);
    EXPECT_TRUE(reshard::IsValidUtf8(plan.err)) << plan.err;
    EXPECT_TRUE(absl::StrContains(plan.err, "--src")) << plan.err;
  }
  // Quotes of valid input are cut between characters: no replacement character.
  Result accented = RunReshard({"plan", "--mesh", "2", "--shape", "8", "--src",
                                absl::StrCat("S(0)x", accents), "--dst", "R"});
  EXPECT_FALSE(absl::StrContains(accented.err, "\xEF\xBF\xBD")) << accented.err;
}

// Issue 9, item 4: output that cannot be written is an error, not exit 0.
TEST(CliTest, UnwritableOutputFails) {
  const std::string bin = reshard::test_util::ShellQuote(g_binary);
  const std::string line =
      "{\"id\": 1, \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}\n";
  for (const std::string& command :
       {"{ " + bin + " batch > /dev/full; }",
        "{ " + bin + " plan --mesh 2 --shape 8 --src 'S(0)' --dst R > /dev/full; }",
        "{ " + bin +
            " verify --mesh 2 --shape 8 --src 'S(0)' --dst R --timeout 10 > /dev/full; }"}) {
    Result r = reshard::test_util::RunShell(command, line);
    EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "cannot write")) << command << "\n" << r.err;
  }
}

// Issue 20: every command writing to a closed pipe fails the same way (exit
// 1, one message on stderr) instead of dying by SIGPIPE (exit 141, silent).
// The reader (`true`) is gone before reshard writes; fd 3 carries reshard's
// stderr and exit code past the pipe.
TEST(CliTest, ClosedPipeIsOneErrorForEveryCommand) {
  const std::string bin = reshard::test_util::ShellQuote(g_binary);
  const std::string line =
      "{\"id\": 1, \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}\n";
  for (const std::string& args :
       {std::string("--help"), std::string("plan --help"),
        std::string("plan --mesh 2 --shape 8 --src 'S(0)' --dst R"), std::string("batch"),
        std::string("costs --mesh 2 --shape 8 --layouts -"),
        std::string("bench --mesh 2 --shape 8 --src 'S(0)' --dst R --dry-run"),
        std::string("verify --mesh 2 --shape 8 --src 'S(0)' --dst R --timeout 10")}) {
    const std::string input = absl::StartsWith(args, "costs") ? "S(0)\nR\n" : line;
    const std::string command =
        "{ { sleep 0.3; " + bin + " " + args + " 2>&3; echo \"exit=$?\" >&3; } 3>&2 | true; }";
    Result r = reshard::test_util::RunShell(command, input);
    EXPECT_TRUE(absl::StrContains(r.err, "exit=1")) << args << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "cannot write the output to stdout")) << args << "\n"
                                                                               << r.err;
  }
}

// The table of commands (cli/commands.h): reshard --help lists every command
// and both modes; every command has --help and names an unknown flag.
TEST(CliTest, EveryCommandIsListedHasHelpAndNamesAnUnknownFlag) {
  Result main_help = RunReshard({"--help"});
  EXPECT_FALSE(absl::StrContains(main_help.out, "the same\nplans as PyTorch")) << main_help.out;
  for (const char* mode : {"native", "pytorch"}) {
    EXPECT_TRUE(absl::StrContains(main_help.out, mode)) << mode;
  }
  for (const char* command : {"plan", "batch", "verify", "costs", "calibrate", "bench"}) {
    EXPECT_TRUE(absl::StrContains(main_help.out, absl::StrCat("\n  ", command, " ")))
        << command << " is not listed in reshard --help";
    Result help = RunReshard({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_TRUE(absl::StartsWith(help.out, absl::StrCat("reshard ", command, ": "))) << help.out;
    EXPECT_TRUE(absl::StrContains(help.out, "EXIT CODES")) << command;
    Result bad = RunReshard({command, "--no-such-flag", "1"});
    EXPECT_EQ(bad.exit_code, 2) << command << ": " << bad.err;
    EXPECT_TRUE(absl::StrContains(
        bad.err, "unknown flag --no-such-flag for reshard " + std::string(command)))
        << bad.err;
  }
  Result unknown = RunReshard({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "bench")) << unknown.err;
}

// Issue 9, items 3 and 5: verify refuses up front what it cannot run or
// check, naming the flag, instead of crashing, running for minutes or
// reporting FAIL.
TEST(CliTest, VerifyRefusesUpFrontNamingTheFlag) {
  const std::vector<std::string> one = {"verify", "--mesh", "2",     "--shape", "8",
                                        "--src",  "S(0)",   "--dst", "R"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = one;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  struct Bad {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Bad> bad = {
      {{"verify", "--mesh", "2,2", "--shape", "1000000,1000", "--src", "S(0)S(1)", "--dst",
        "S(1)S(0)", "--max-memory", "1G"},
       "(the tensor is 3.73 GiB; every rank's shards and buffers come on top), more than the "
       "limit of 1 GiB (--max-memory)"},
      {{"verify", "--mesh", "64,64", "--shape", "8", "--src", "S(0)R", "--dst", "RR"},
       "4096 ranks, more than verify runs on one host (64, --max-ranks"},
      {{"verify", "--mesh", "2", "--shape", "8", "--dtype", "bool", "--src", "P(sum)", "--dst",
        "R"},
       "dtype bool: Partial"},
      {with({"--kill-rank", "5"}), "--kill-rank 5: the mesh 2 has ranks 0 to 1"},
      // S(0)->R is one collective call: call 1 never comes.
      {with({"--kill-rank", "1", "--kill-at", "1"}), "--kill-at 1: the plan S(0)->R makes 1 "},
      {with({"--kill-at", "0"}), "--kill-at needs --kill-rank"},
      {with({"--max-memory", "lots"}), "--max-memory: \"lots\" is not a positive size"},
      {with({"--ranks", "0-1"}), "--ranks needs --store"},
      {with({"--store", "redis://x", "--ranks", "0-1"}), "store \"redis://x\": expected"},
      {with({"--store", "/no/such/dir"}), "neither redis://HOST:PORT/PREFIX nor"},
      {{"verify", "--mesh", "2", "--shape", "8", "--src", "X", "--dst", "R"}, "--src: state"},
      {{"verify", "--mesh", "0", "--shape", "8", "--src", "R", "--dst", "R"}, "--mesh: "},
      {{"verify", "--mesh", "2", "--shape", "8", "--dtype", "f128", "--src", "R", "--dst", "R"},
       "--dtype: "},
  };
  for (const Bad& b : bad) {
    Result r = RunReshard(b.args);
    const std::string shown = absl::StrJoin(b.args, " ");
    EXPECT_EQ(r.exit_code, 2) << shown << "\n" << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, b.names)) << shown << "\n" << r.err;
    EXPECT_FALSE(absl::StrContains(r.out, "FAIL")) << shown << "\n" << r.out;
  }
}

// Issue 9, item 6.
TEST(CliTest, FlagWithoutValueIsNamed) {
  Result r = RunReshard(
      {"plan", "--mesh", "2", "--shape", "8", "--dst", "R", "--src", "--format", "text"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--src needs a value")) << r.err;
  Result inline_value = RunReshard({"plan", "--mesh=2", "--shape=8", "--src=S(0)", "--dst=R"});
  EXPECT_EQ(inline_value.exit_code, 0) << inline_value.err;
}

TEST(CliTest, ErrorsQuoteHugeInputShortly) {
  const std::string huge(100000, 'R');  // one argument may hold at most 128 KiB
  for (const std::string flag : {"--src", "--mesh", "--dtype"}) {
    std::vector<std::string> args = {"plan", "--mesh", "2", "--shape", "8",  "--src",
                                     "S(0)", "--dst",  "R", "--dtype", "f32"};
    for (size_t i = 1; i < args.size(); i += 2) {
      if (args[i] == flag) args[i + 1] = huge;
    }
    Result r = RunReshard(args);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_LT(r.err.size(), 1000u) << flag << ": " << r.err.substr(0, 200);
  }
  const std::string line = absl::StrCat("{\"mesh\": [2], \"shape\": [8], \"src\": \"",
                                        std::string(10 << 20, 'R'), "\", \"dst\": \"R\"}\n");
  Result batch = RunReshard({"batch"}, line);
  EXPECT_LT(batch.out.size(), 1000u) << batch.out.substr(0, 200);
}

TEST(CliTest, BigIdsAreNotEchoedWithOtherDigits) {
  const std::string tail = ", \"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}\n";
  Result r =
      RunReshard({"batch"}, absl::StrCat("{\"id\": 123456789012345678901234567890", tail,
                                         "{\"id\": 18446744073709551615", tail,
                                         "{\"id\": \"123456789012345678901234567890\"", tail));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // Not echoed as 1.2345678901234568e+29: refused, naming the key.
  json big = json::parse(lines[0]);
  EXPECT_TRUE(big["id"].is_null()) << lines[0];
  EXPECT_EQ(big["ok"], false) << lines[0];
  EXPECT_TRUE(absl::StartsWith(big["error"].get<std::string>(), "id: ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "{\"id\":18446744073709551615,\"ok\":true")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "{\"id\":\"123456789012345678901234567890\",\"ok\":true"))
      << lines[2];
}

// The bound's advice names the greedy planner only where it could be used
// (spec §9: shard orders force the graph planner).
TEST(CliTest, BoundAdviceFitsTheRequest) {
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
TEST(CliTest, GreedySizeOneShardToPartialRuns) {
  Result r = RunReshard({"verify", "--mesh", "1,4", "--shape", "8,8", "--src", "S(0)S(1)", "--dst",
                         "P(sum)R", "--algorithm", "greedy", "--timeout", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "1 passed, 0 failed")) << r.out;
}

// --- Cost profiles and reshard calibrate (spec §6.2) ---

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Two sizes far apart and few repeats: this checks the plumbing (a profile
// that parses and that plan reads), not the numbers. The fit needs the
// larger size to take longer, which 4K against 4M did not always on a
// loaded machine (tests run side by side); 32M does by milliseconds.
TEST(CliTest, CalibrateWritesAProfileThatPlanReads) {
  for (const bool processes : {false, true}) {
    const std::string out = TempPath(processes ? "p-proc.json" : "p-threads.json");
    std::vector<std::string> args = {"calibrate", "--mesh",    processes ? "2" : "2,2",
                                     "--sizes",   "4K,32M",    "--repeat",
                                     "3",         "--timeout", "30",
                                     "--out",     out};
    if (processes) args.push_back("--processes");
    Result r = RunReshard(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.out, "alpha-beta machine fit")) << r.out;
    json profile = json::parse(reshard::test_util::ReadFile(out));
    EXPECT_EQ(profile["version"], 2);
    for (const char* link : {"intra_host", "inter_host"}) {
      EXPECT_GE(profile[link]["alpha_us"].get<double>(), 0) << profile.dump();
      EXPECT_GT(profile[link]["beta_gbps"].get<double>(), 0) << profile.dump();
    }
    EXPECT_GT(profile["memory_gbps"].get<double>(), 0);
    EXPECT_EQ(profile["fit"]["ranks"], processes ? "processes" : "threads");
    Result plan = RunReshard({"plan", "--mesh", "2,2", "--shape", "64,64", "--src", "S(0)S(1)",
                              "--dst", "RR", "--cost-model", "alpha-beta", "--profile", out});
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_TRUE(absl::StrContains(plan.out, " us (cost model alpha-beta)")) << plan.out;
    Result measured = RunReshard({"plan", "--mesh", "2,2", "--shape", "64,64", "--src", "S(0)S(1)",
                                  "--dst", "RR", "--cost-model", "measured", "--profile", out});
    EXPECT_EQ(measured.exit_code, 0) << measured.err;
    EXPECT_TRUE(absl::StrContains(measured.out, "(cost model measured)")) << measured.out;
  }
}

// Issue 44: --out through a symlink replaced the link with a file; a FIFO
// became a file (and, as root, /dev/full). Now the link's target gets the
// profile, and what is not a regular file is refused before any timing.
TEST(CliTest, CalibrateOutWritesThroughASymlinkAndRefusesAFifo) {
  const std::string target = TempPath("out-target.json"), link = TempPath("out-link.json");
  const std::string fifo = TempPath("out-fifo");
  std::remove(link.c_str());
  std::remove(fifo.c_str());
  WriteText(target, "{}");
  ASSERT_EQ(symlink("out-target.json", link.c_str()), 0);
  Result r =
      RunReshard({"calibrate", "--mesh", "2", "--sizes", "4K,1M", "--repeat", "1", "--out", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(json::parse(reshard::test_util::ReadFile(target))["version"], 2);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& out : {fifo, std::string("/dev/full")}) {
    Result refused = RunReshard({"calibrate", "--mesh", "2", "--sizes", "4K", "--out", out});
    EXPECT_EQ(refused.exit_code, 2) << out;
    EXPECT_TRUE(absl::StrContains(refused.err, "not a regular file")) << refused.err;
    EXPECT_TRUE(refused.out.empty()) << "timed before refusing: " << refused.out;
  }
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(CliTest, CalibrateRefusesUpFront) {
  const std::string out = TempPath("refused.json");
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"calibrate"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunReshard(args);
  };
  Result big = run({"--mesh", "8,8", "--out", out});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(big.err, "--max-ranks")) << big.err;
  Result no_out = run({"--mesh", "2"});
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(no_out.err, "--out")) << no_out.err;
  // Issue 44: one size was timed before the fit failed on it.
  Result one_size = run({"--mesh", "2", "--sizes", "4K", "--out", out});
  EXPECT_EQ(one_size.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(one_size.err, "at least two different sizes")) << one_size.err;
  EXPECT_TRUE(one_size.out.empty()) << "timed before refusing: " << one_size.out;
  Result sizes = run({"--mesh", "2", "--sizes", "4K,x", "--out", out});
  EXPECT_EQ(sizes.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(sizes.err, "--sizes")) << sizes.err;
  Result unwritable = run({"--mesh", "2", "--out", "/nonexistent-dir/p.json"});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unwritable.err, "cannot be written")) << unwritable.err;
  EXPECT_TRUE(unwritable.out.empty()) << "timed before refusing: " << unwritable.out;
  // Issue 20: a name the JSON profile cannot hold is refused before timing,
  // and an existing file is left as it was.
  WriteText(out, "keep");
  Result bad_name = run({"--mesh", "2", "--name", "\xff", "--out", out});
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad_name.err, "--name")) << bad_name.err;
  EXPECT_TRUE(bad_name.out.empty()) << bad_name.out;
  EXPECT_EQ(reshard::test_util::ReadFile(out), "keep");
}

TEST(CliTest, ProfileErrorsNameTheFileTheKeyAndBothFlags) {
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

// The batch key: the profile's parameters change the cost; a bad file is one
// bad line.
TEST(CliTest, BatchReadsTheProfileKey) {
  const std::string slow = TempPath("slow.json");
  WriteText(slow, R"({"name": "slow", "intra_host": {"alpha_us": 1000, "beta_gbps": 1},
                     "inter_host": {"alpha_us": 1000, "beta_gbps": 1}, "memory_gbps": 1})");
  const std::string line =
      absl::StrCat(R"j({"id": 1, "mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", )j"
                   R"j("cost_model": "alpha-beta", "profile": ")j",
                   slow, "\"}\n");
  const std::string missing =
      R"j({"id": 2, "mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", )j"
      R"j("cost_model": "alpha-beta", "profile": "/nonexistent.json"})j"
      "\n";
  Result r = RunReshard({"batch"}, line + line + missing);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // all_gather of 32 B on 2 ranks: 1 * 1000 us + 1/2 * 32 B / (1e3 B/us).
  EXPECT_EQ(json::parse(lines[0])["cost"], 1000.016) << lines[0];
  EXPECT_EQ(json::parse(lines[1])["cost"], 1000.016) << lines[1];
  EXPECT_TRUE(absl::StrContains(json::parse(lines[2])["error"].get<std::string>(),
                                "profile: /nonexistent.json"))
      << lines[2];
}

// --- Modes, peak memory (issue 7) ---

json PlanJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"plan", "--format", "json"});
  Result r = RunReshard(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json got = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(got.is_discarded()) << r.out;
  return got;
}

TEST(CliTest, DefaultModeIsNative) {
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
TEST(CliTest, NcclProfilesByName) {
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
TEST(CliTest, PytorchCostModelWithoutModeIsPytorchMode) {
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

TEST(CliTest, NativeModeWithAPytorchCostModelIsRefusedNamingBoth) {
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
TEST(CliTest, MaxMemoryTooSmallIsNoPlanAndBadLimitsAreNamed) {
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
TEST(CliTest, EveryFormatReportsModeAndPeakBytes) {
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
TEST(CliTest, JsonNamesTheCostModelAndProfile) {
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
TEST(CliTest, StepsOverSeveralMeshDimsPrintThem) {
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

// --- Two programs (issue 17, start-up): `reshard` links plan, batch and costs
// and runs verify, calibrate and bench by executing reshard-backends beside
// it (cli/backend_exec.h) ---

std::string BackendsBinary() {
  return absl::StrCat(g_binary.substr(0, g_binary.rfind('/') + 1), "reshard-backends");
}

// The same arguments give the same stdout, stderr and exit code whether
// reshard forwards them or reshard-backends runs them: help, output, errors.
TEST(CliTest, BackendCommandsRunThroughReshardBackendsUnchanged) {
  const std::vector<std::vector<std::string>> cases = {
      {"--help"},
      {"verify", "--help"},
      {"help", "calibrate"},
      {"bench", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)R", "--dst", "RS(1)", "--dry-run",
       "--format", "json"},
      {"verify", "--mesh", "2", "--shape", "8", "--src", "X", "--dst", "R"},
      {"calibrate", "--mesh", "2"},
      {"bench", "--no-such-flag", "1"},
  };
  for (const std::vector<std::string>& args : cases) {
    std::vector<std::string> direct = {BackendsBinary()};
    direct.insert(direct.end(), args.begin(), args.end());
    Result expected = reshard::test_util::RunCommand(direct);
    Result got = RunReshard(args);
    const std::string shown = absl::StrJoin(args, " ");
    EXPECT_EQ(got.exit_code, expected.exit_code) << shown << "\n" << got.err;
    EXPECT_EQ(got.out, expected.out) << shown;
    EXPECT_EQ(got.err, expected.err) << shown;
    EXPECT_FALSE(expected.out.empty() && expected.err.empty()) << shown;
  }
  // One case run end to end, its report the same but for the times.
  Result verify = RunReshard({"verify", "--mesh", "2,2", "--shape", "8,8", "--src", "S(0)R",
                              "--dst", "RS(1)", "--timeout", "20"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_TRUE(absl::StrContains(verify.out, "1 passed, 0 failed")) << verify.out;
}

// What a program links shows in its file: the names of the shared objects it
// needs (libgloo, libhiredis), or, linked statically, the symbols of Gloo
// (namespace gloo), of hiredis (redisConnect*) and of reshard's own backend
// and harness code. reshard-backends shows each, so the check can see them.
TEST(CliTest, ReshardLinksNoExecutionBackend) {
  const std::string reshard = reshard::test_util::ReadFile(g_binary);
  const std::string backends = reshard::test_util::ReadFile(BackendsBinary());
  ASSERT_GT(reshard.size(), 0u);
  ASSERT_GT(backends.size(), 0u);
  for (const char* marker : {"_ZN4gloo", "redisConnect", "GlooCommunicator", "RedisStore",
                             "VerifyOnRanks", "RunRanks"}) {
    EXPECT_TRUE(absl::StrContains(backends, marker)) << "reshard-backends lacks " << marker;
    EXPECT_FALSE(absl::StrContains(reshard, marker)) << "reshard links " << marker;
  }
  for (const char* library : {"libgloo", "libhiredis"}) {
    EXPECT_FALSE(absl::StrContains(reshard, library)) << "reshard needs " << library;
  }
}

// reshard copied alone still plans; verify names where reshard-backends
// should be and how to build it, and fails like an internal error (exit 1).
TEST(CliTest, MissingReshardBackendsIsAClearError) {
  const std::string dir = TempPath("reshard-alone");
  const std::string alone = dir + "/reshard";
  Result copy = reshard::test_util::RunCommand(
      {"sh", "-c", "mkdir -p \"$1\" && cp \"$2\" \"$3\"", "sh", dir, g_binary, alone});
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  Result plan = reshard::test_util::RunCommand(
      {alone, "plan", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R"});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  Result verify = reshard::test_util::RunCommand(
      {alone, "verify", "--mesh", "2", "--shape", "8", "--src", "S(0)", "--dst", "R"});
  EXPECT_EQ(verify.exit_code, 1) << verify.err;
  EXPECT_TRUE(verify.out.empty()) << verify.out;
  // The directory as /proc/self/exe names it (no symbolic link).
  EXPECT_TRUE(absl::StartsWith(verify.err, "reshard verify: cannot run /")) << verify.err;
  EXPECT_TRUE(
      absl::StrContains(verify.err, "/reshard-alone/reshard-backends (No such file or directory)"))
      << verify.err;
  EXPECT_TRUE(absl::StrContains(verify.err, "bazel build //cli:reshard")) << verify.err;
}

// --- Cross-mesh moves (spec §14): --dst-mesh, --src-ranks, --dst-ranks ---

// Trainer FSDP x TP (4x2, ranks 0-7, f32 16 x 12) to inference TP 2 on
// ranks 8, 9: trainer rank (a, b) holds rows 4a.., columns 6b.. (96 bytes)
// and sends it to rank 8 + b, which must receive its whole 16 x 6 block.
const std::vector<std::string> kTrainerToInference = {
    "plan",  "--mesh", "4,2",        "--shape", "16,12",       "--src", "S(0)S(1)",
    "--dst", "S(1)",   "--dst-mesh", "2",       "--dst-ranks", "8,9"};

std::vector<std::string> With(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CliTest, CrossMeshTextShowsBothMeshesAndWhoSendsWhat) {
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

TEST(CliTest, CrossMeshJsonHasTheCrossingAndItsBytes) {
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
            "src,dst,cost,participants,slices,rounds,pairs,bytes_sent,max_bytes_sent,"
            "receive_lower_bound_max");
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
  // No steps before or after: the plan costs what its crossing does.
  ASSERT_TRUE(c["cost"].is_number()) << got;
  EXPECT_EQ(got["cost"], c["cost"]);
}

TEST(CliTest, CrossMeshWithAPytorchModelIsNotPriced) {
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
TEST(CliTest, CrossMeshTextCapsThePairsItLists) {
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
TEST(CliTest, CrossMeshMaxMemorySplitsTheCrossingIntoRounds) {
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

TEST(CliTest, CrossMeshRefusesDotAndBadRankLists) {
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
TEST(CliTest, SameMeshDefaultsGivenExplicitlyChangeNothing) {
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

TEST(CliTest, BatchPlansCrossMeshLinesAndNamesTheirKeys) {
  const std::string input =
      R"j({"id":"trainer","mesh":[4,2],"shape":[16,12],"src":"S(0)S(1)","dst":"S(1)","dst_mesh":[2],"dst_ranks":[8,9]}
{"id":"dup","mesh":[2],"shape":[8],"src":"S(0)","dst":"R","src_ranks":[0,0]}
{"id":"type","mesh":[2],"shape":[8],"src":"S(0)","dst":"R","dst_ranks":"8,9"}
{"id":"count","mesh":[2],"shape":[8],"src":"S(0)","dst":"R","dst_mesh":[3],"dst_ranks":[2,3]}
{"id":"pytorch","mesh":[2],"shape":[8],"src":"S(0)","dst":"R","dst_ranks":[2,3],"cost_model":"pytorch"}
)j";
  Result r = RunReshard({"batch"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> out;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    out.push_back(json::parse(line, nullptr, /*allow_exceptions=*/false));
    ASSERT_FALSE(out.back().is_discarded()) << line;
  }
  ASSERT_EQ(out.size(), 5u) << r.out;
  EXPECT_EQ(out[0]["cross_mesh"], true) << out[0];
  EXPECT_EQ(out[0]["crossing"]["receive_lower_bound_max"], 384) << out[0];
  EXPECT_EQ(out[1]["error"], "src_ranks: rank 0 appears twice");
  EXPECT_TRUE(absl::StartsWith(out[2]["error"].get<std::string>(), "dst_ranks: expected a list"))
      << out[2];
  EXPECT_EQ(out[3]["error"], "dst_ranks: 2 ranks for a mesh of 3 ranks");
  EXPECT_TRUE(out[4]["ok"].get<bool>() && out[4]["cost"].is_null()) << out[4];
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
