// The `reshard` program as a whole (//cli:reshard): --help everywhere, exit
// codes, errors naming the flag, output that is valid UTF-8 and fails loudly
// when it cannot be written, and the two programs (reshard forwarding
// verify, calibrate and bench to reshard-backends).

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
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::BackendsBinary;
using reshard::cli_test::ReshardBinary;
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;

TEST(ReshardTest, HelpEverywhereExitsZero) {
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

TEST(ReshardTest, NoArgumentsOrUnknownCommandIsBadInput) {
  Result none = RunReshard({});
  EXPECT_EQ(none.exit_code, 2);
  Result unknown = RunReshard({"plna"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "plna")) << unknown.err;
}

// Issue 9, item 2: every output line is valid UTF-8 JSON, whatever bytes the
// input holds, and quotes are shortened between characters.
TEST(ReshardTest, OutputIsValidUtf8WhateverTheInput) {
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
TEST(ReshardTest, UnwritableOutputFails) {
  const std::string bin = reshard::test_util::ShellQuote(ReshardBinary());
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
TEST(ReshardTest, ClosedPipeIsOneErrorForEveryCommand) {
  const std::string bin = reshard::test_util::ShellQuote(ReshardBinary());
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
    // With its reason (issue 44: --help into a closed pipe said none).
    EXPECT_TRUE(absl::StrContains(r.err, "cannot write the output to stdout: Broken pipe") ||
                absl::StrContains(r.err, "cannot write the output to stdout: the pipe's reader"))
        << args << "\n"
        << r.err;
  }
}

// The table of commands (cli/commands.h): reshard --help lists every command
// and both modes; every command has --help and names an unknown flag.
TEST(ReshardTest, EveryCommandIsListedHasHelpAndNamesAnUnknownFlag) {
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

// Issue 9, item 6.
TEST(ReshardTest, FlagWithoutValueIsNamed) {
  Result r = RunReshard(
      {"plan", "--mesh", "2", "--shape", "8", "--dst", "R", "--src", "--format", "text"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--src needs a value")) << r.err;
  Result inline_value = RunReshard({"plan", "--mesh=2", "--shape=8", "--src=S(0)", "--dst=R"});
  EXPECT_EQ(inline_value.exit_code, 0) << inline_value.err;
}

TEST(ReshardTest, ErrorsQuoteHugeInputShortly) {
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

// The same arguments give the same stdout, stderr and exit code whether
// reshard forwards them or reshard-backends runs them: help, output, errors.
TEST(ReshardTest, BackendCommandsRunThroughReshardBackendsUnchanged) {
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
TEST(ReshardTest, ReshardLinksNoExecutionBackend) {
  const std::string reshard = reshard::test_util::ReadFile(ReshardBinary());
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
TEST(ReshardTest, MissingReshardBackendsIsAClearError) {
  const std::string dir = TempPath("reshard-alone");
  const std::string alone = dir + "/reshard";
  Result copy = reshard::test_util::RunCommand(
      {"sh", "-c", "mkdir -p \"$1\" && cp \"$2\" \"$3\"", "sh", dir, ReshardBinary(), alone});
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

// The top-level and plan's --help name the commands and the request flags.
TEST(ReshardTest, HelpNamesTheCommandsAndPlanHelpTheRequestFlags) {
  Result top = RunReshard({"--help"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_TRUE(absl::StrContains(top.out + top.err, "plan")) << top.out;
  EXPECT_TRUE(absl::StrContains(top.out + top.err, "batch")) << top.out;
  Result plan = RunReshard({"plan", "--help"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(absl::StrContains(plan.out + plan.err, "--mesh")) << plan.out;
  EXPECT_TRUE(absl::StrContains(plan.out + plan.err, "--src")) << plan.out;
}

}  // namespace
