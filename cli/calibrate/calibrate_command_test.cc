// `reshard calibrate` end to end: the profile it writes is one plan reads,
// and it refuses bad input up front.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
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
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;
using reshard::cli_test::WriteText;

// Two sizes far apart and few repeats: this checks the plumbing (a profile
// that parses and that plan reads), not the numbers. The fit needs the
// larger size to take longer, which 4K against 4M did not always on a
// loaded machine (tests run side by side); 32M does by milliseconds.
TEST(CalibrateCommandTest, CalibrateWritesAProfileThatPlanReads) {
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
    // Issue 44: minutes of timing used to pass without a word on stderr. Six
    // kinds at two sizes on each group of more than one rank: 12 on mesh 2,
    // 36 on 2,2 (mesh dim 0, mesh dim 1, both).
    EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat("calibrate: timing ", processes ? "12" : "36",
                                                      " collectives, 3 times each, on ",
                                                      processes ? "2 processes" : "4 threads")))
        << r.err;
    if (!processes) {  // a child process's stderr goes to its log
      EXPECT_TRUE(absl::StrContains(r.err, "calibrate: 36/36 collectives timed")) << r.err;
    }
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
TEST(CalibrateCommandTest, CalibrateOutWritesThroughASymlinkAndRefusesAFifo) {
  const std::string target = TempPath("out-target.json"), link = TempPath("out-link.json");
  const std::string fifo = TempPath("out-fifo");
  std::remove(link.c_str());
  std::remove(fifo.c_str());
  WriteText(target, "{}");
  ASSERT_EQ(symlink("out-target.json", link.c_str()), 0);
  // Sizes as in the test above: 4K against 1M, timed once, did not always
  // grow under ASan on a loaded machine, and the fit refused them.
  Result r =
      RunReshard({"calibrate", "--mesh", "2", "--sizes", "4K,32M", "--repeat", "3", "--out", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(json::parse(reshard::test_util::ReadFile(target))["version"], 2);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& out : {fifo, std::string("/dev/full")}) {
    Result refused = RunReshard({"calibrate", "--mesh", "2", "--sizes", "4K,1M", "--out", out});
    EXPECT_EQ(refused.exit_code, 2) << out;
    EXPECT_TRUE(absl::StrContains(refused.err, "not a regular file")) << refused.err;
    EXPECT_TRUE(refused.out.empty()) << "timed before refusing: " << refused.out;
  }
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(CalibrateCommandTest, CalibrateRefusesUpFront) {
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

// A calibrated profile (32M the largest size, so that the fit sees times
// grow on a loaded machine) has every kind's table at both group sizes, and
// plan reads it with alpha-beta (spec §6.2) and measured (spec §6.3).
TEST(CalibrateCommandTest, VersionTwoProfileHasEveryTableAndBothModelsReadIt) {
  const std::string profile = TempPath("calibrated.json");
  Result r = RunReshard(
      {"calibrate", "--mesh", "2,2", "--sizes", "4K,64K,32M", "--repeat", "3", "--out", profile});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(reshard::test_util::ReadFile(profile));
  EXPECT_EQ(p["version"], 2) << p;
  EXPECT_GT(p["intra_host"]["beta_gbps"].get<double>(), 0) << p;
  std::set<std::pair<std::string, int>> kinds, want;
  for (const json& t : p["tables"]) {
    kinds.insert({t["kind"].get<std::string>(), t["n"].get<int>()});
    EXPECT_EQ(t["samples"].size(), 3u) << t;
  }
  for (const char* k :
       {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "permute", "exchange"}) {
    for (int n : {2, 4}) want.insert({k, n});
  }
  EXPECT_EQ(kinds, want);
  EXPECT_TRUE(absl::StrContains(r.out, "held-out error, interpolated sizes: median")) << r.out;
  for (const std::string model : {"alpha-beta", "measured"}) {
    Result plan = RunReshard({"plan", "--mesh", "2,2", "--shape", "64,64", "--src", "S(0)S(1)",
                              "--dst", "RR", "--cost-model", model, "--profile", profile});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_TRUE(absl::StrContains(plan.out, absl::StrCat("(cost model ", model, ")"))) << plan.out;
  }
}

// Issue 20: a bad --name is refused before timing, and the file is kept.
TEST(CalibrateCommandTest, InvalidUtf8NameIsRefusedFirstAndTheFileKept) {
  const std::string kept = TempPath("kept.json");
  WriteText(kept, "keep\n");
  Result r = RunReshard({"calibrate", "--mesh", "2,2", "--name", "\xff", "--out", kept});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--name")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "UTF-8")) << r.err;
  EXPECT_EQ(reshard::test_util::ReadFile(kept), "keep\n");
}

}  // namespace
