// `reshard verify`'s refusals: what it cannot run or check is refused up
// front, naming the flag (verify_command_test runs cases).

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
using reshard::cli_test::RunReshard;

// Issue 9, items 3 and 5: verify refuses up front what it cannot run or
// check, naming the flag, instead of crashing, running for minutes or
// reporting FAIL.
TEST(VerifyFlagsTest, VerifyRefusesUpFrontNamingTheFlag) {
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
      // Issue 44: an overflow is out of range, and a tiny limit is shown in bytes.
      {with({"--max-memory", "99999999999999999999"}), "\"99999999999999999999\" is out of range"},
      {with({"--max-memory", "9999999999T"}), "\"9999999999T\" is out of range"},
      {with({"--max-memory", "1"}), "more than the limit of 1 byte (--max-memory)"},
      {with({"--ranks", "0-1"}), "--ranks needs --store"},
      {with({"--store", "/tmp", "--ranks", "1-0"}),
       "--ranks: \"1-0\" is neither a rank A nor a range of ranks A-B"},
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

// Issue 44: verify took --seed -1 where bench refused it; an integer past
// int64 was "not an integer". One rule now (IntFlagIn, ParseInt).
TEST(VerifyFlagsTest, BoundedIntegerFlagsSayTheirRange) {
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

}  // namespace
