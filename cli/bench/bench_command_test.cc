// `reshard bench` end to end (//cli:reshard, passed as argv[1], with the
// alpha-beta Gloo profile as argv[2]): its JSON
// lines carry exactly the promised keys, both modes run and verify a simple
// case (ranks as threads and as processes), and bad input is refused up
// front naming the flag. No timing is asserted: the machine is shared.

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cli/bench/bench_json_keys.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using reshard::cli_test::kBenchKeys;
using reshard::cli_test::kCrossMeshBenchKeys;

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;

std::string g_binary;           // set by main
std::string g_formula_profile;  // bench/profiles/gloo-loopback.json, set by main

Result Bench(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {g_binary, "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  return reshard::test_util::RunCommand(argv, "");
}

std::vector<json> JsonLines(const Result& r) {
  std::vector<json> out;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << line;
    out.push_back(j);
  }
  return out;
}

std::set<std::string> Keys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

// One line per mode, in --modes order, with exactly the keys of the issue;
// S(0) -> R on 4 ranks is one all_gather in either mode.
void ExpectBothModesVerified(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--mesh",   "4",     "--shape",  "13,5",    "--src",
                                   "S(0)",     "--dst", "R",        "--modes", "pytorch,native",
                                   "--repeat", "2",     "--format", "json",    "--timeout",
                                   "60"};
  args.insert(args.end(), extra.begin(), extra.end());
  Result r = Bench(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const std::set<std::string> promised(kBenchKeys.begin(), kBenchKeys.end());
  const char* modes[] = {"pytorch", "native"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    EXPECT_EQ(Keys(l), promised) << l;
    EXPECT_EQ(Keys(l["measured_us"]), (std::set<std::string>{"median", "min", "max", "rounds"}))
        << l;
    EXPECT_EQ(l["mode"], modes[i]) << l;
    EXPECT_EQ(l["trace"], "S(0)->R") << l;
    EXPECT_EQ(l["verified"], true) << l;
    // Every mode is predicted by the machine's model, native mode's own.
    EXPECT_GT(l["predicted_us"].get<double>(), 0) << l;
    EXPECT_EQ(l["cost_model"], i == 0 ? "pytorch" : "measured") << l;
    if (i == 0) {
      EXPECT_TRUE(l["profile"].is_null()) << l;
    }
    // all_gather over 4 ranks: each sends its padded chunk of ceil(13/4) = 4
    // rows of 5 f32 to the 3 others (planner/steps/step_bytes.h, BytesOfStep).
    EXPECT_EQ(l["bytes_sent_max"], 3 * 4 * 5 * 4) << l;
    // Rank 3 holds 1 of the 13 rows (chunks 4, 4, 4, 1) and must receive 12.
    EXPECT_EQ(l["receive_lower_bound_max"], 12 * 5 * 4) << l;
    EXPECT_GT(l["peak_bytes_max"].get<int64_t>(), 0) << l;
    const json& us = l["measured_us"];
    EXPECT_LE(us["min"].get<double>(), us["median"].get<double>()) << l;
    EXPECT_LE(us["median"].get<double>(), us["max"].get<double>()) << l;
    // One time per timed round (--repeat), in round order, within min..max.
    ASSERT_EQ(us["rounds"].size(), 2u) << l;
    for (const json& t : us["rounds"]) {
      EXPECT_GE(t.get<double>(), us["min"].get<double>()) << l;
      EXPECT_LE(t.get<double>(), us["max"].get<double>()) << l;
    }
  }
}

TEST(BenchTest, BothModesRunAndVerifyOnThreads) { ExpectBothModesVerified({}); }

TEST(BenchTest, BothModesRunAndVerifyInProcesses) { ExpectBothModesVerified({"--processes"}); }

// A native plan of one step over both mesh dims, run and checked on data.
// Priced by the alpha-beta formula (a version 1 profile), S(0)S(0) ->
// S(1)S(1) is one permute whatever the size; the built-in measured tables
// may price three collectives lower on a tiny tensor (they measured so).
TEST(BenchTest, NativeGroupStepsRunAndVerify) {
  Result r = Bench({"--mesh", "2,2", "--shape", "8,8", "--src", "S(0)S(0)", "--dst", "S(1)S(1)",
                    "--repeat", "1", "--format", "json", "--profile", g_formula_profile});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const json& l : JsonLines(r)) {
    EXPECT_EQ(l["verified"], true) << l;
    if (l["mode"] == "native") {
      EXPECT_EQ(l["trace"], "S(0)[0]S(0)[1]->S(1)[0]S(1)[1]") << l;
    }
  }
}

// Without --profile (and no default file in the test's HOME), native mode
// plans with the built-in measured Gloo profile and says so; a version 1
// file gives alpha-beta and names the path.
TEST(BenchTest, OutputNamesTheModelAndProfileEachModePlannedWith) {
  const std::vector<std::string> base = {"--mesh", "2",     "--shape", "8,8",      "--src",
                                         "S(0)",   "--dst", "R",       "--repeat", "1"};
  Result text = Bench(base);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, "native planned with: measured (profile: built-in "))
      << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "pytorch planned with: pytorch\n")) << text.out;
  std::vector<std::string> v1 = base;
  for (const char* a : {"--profile", "/nonexistent/p.json"}) v1.push_back(a);
  Result missing = Bench(v1);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(missing.err, "--profile: /nonexistent/p.json: cannot open"))
      << missing.err;
}

TEST(BenchTest, TextNamesTheLowerBoundAndEveryMode) {
  Result r = Bench(
      {"--mesh", "2,2", "--shape", "8,8", "--src", "S(0)R", "--dst", "RS(1)", "--repeat", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Each rank holds 4x8 and wants 8x4, sharing a 4x4 block: 16 f32 to receive.
  EXPECT_TRUE(absl::StrContains(r.out, "receive lower bound: 64 bytes per rank (max)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "native trace: ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "pytorch trace: ")) << r.out;
}

TEST(BenchTest, BadInputIsRefusedUpFrontNamingTheFlag) {
  const std::vector<std::string> base = {"--mesh", "2,2",   "--shape", "8,8",
                                         "--src",  "S(0)R", "--dst",   "RS(1)"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--repeat", "0"}, "--repeat"},
      {{"--modes", "native,fast"}, "--modes"},
      {{"--modes", "native,native"}, "--modes"},
      {{"--format", "yaml"}, "--format"},
      {{"--max-ranks", "2"}, "--max-ranks"},
      {{"--max-memory", "1K"}, "--max-memory"},
      {{"--cost-model", "nope"}, "--cost-model"},
      {{"--timeout", "0"}, "--timeout"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, flag)) << extra[0] << ": " << r.err;
  }
  Result missing = Bench({"--mesh", "2"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(missing.err, "--shape is required")) << missing.err;
}

// Trainer 4x2 (ranks 0-7) to inference 2 (ranks 8, 9), f32 16 x 12: each
// trainer rank holds a 4 x 6 block (96 bytes), each inference rank wants 16
// x 6 (384 bytes). Native sends each block once; naive's source root sends
// the whole tensor (768 bytes) to rank 8.
const std::vector<std::string> kCrossMesh = {
    "--mesh", "4,2",   "--dst-mesh", "2",     "--dst-ranks", "8,9",      "--shape",
    "16,12",  "--src", "S(0)S(1)",   "--dst", "S(1)",        "--format", "json"};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(BenchTest, CrossMeshNativeAndNaiveRunAndVerifyWithThePromisedKeys) {
  Result r = Bench(With(kCrossMesh, {"--repeat", "2"}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const std::set<std::string> promised(kCrossMeshBenchKeys.begin(), kCrossMeshBenchKeys.end());
  for (const json& l : lines) {
    EXPECT_EQ(Keys(l), promised) << l;
    EXPECT_EQ(l["verified"], true) << l;
    EXPECT_EQ(l["participants"], 10) << l;
    EXPECT_EQ(l["receive_lower_bound_max"], 16 * 6 * 4) << l;
    EXPECT_EQ(l["measured_us"]["median"].is_number(), true) << l;
    // The built-in measured model prices the crossing as an exchange (§6.3, §14).
    EXPECT_GT(l["predicted_us"].get<double>(), 0) << l;
  }
  EXPECT_EQ(lines[0]["mode"], "native");
  EXPECT_EQ(lines[1]["mode"], "naive");
  EXPECT_EQ(lines[0]["bytes_sent_max"], 4 * 6 * 4) << lines[0];
  EXPECT_EQ(lines[1]["bytes_sent_max"], 16 * 12 * 4) << lines[1];
}

// --dry-run --format json counts each mode's busiest sender from its plan:
// what the run's counters measure.
TEST(BenchTest, CrossMeshDryRunCountsWhatTheRunSends) {
  Result dry = Bench(With(kCrossMesh, {"--dry-run"}));
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  std::vector<json> planned = JsonLines(dry);
  ASSERT_EQ(planned.size(), 1u) << dry.out;
  EXPECT_EQ(planned[0]["receive_bound_max"], 16 * 6 * 4) << planned[0];
  Result run = Bench(With(kCrossMesh, {"--repeat", "1"}));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const json& l : JsonLines(run)) {
    EXPECT_EQ(planned[0]["bytes_sent_max"][l["mode"].get<std::string>()], l["bytes_sent_max"])
        << planned[0] << l;
  }
}

// Issue 43's fan-out, S(0) on 2 ranks to S(1)R on 2x4 (32 MiB bf16), priced
// by bench's built-in Gloo model: with the sources among the destination
// ranks (8 participants) or apart (10), native's busiest sender, over the
// whole move, is within 1.25x the larger of the most a rank must receive
// and all that is received over the participants (spec §14 "Relaying").
TEST(BenchTest, FanOutsBusiestSenderIsWithinTheReceiveBound) {
  const std::vector<std::string> fanout = {
      "--mesh",    "2",       "--dst-mesh", "2,4",      "--shape", "4096,4096",
      "--dtype",   "bf16",    "--src",      "S(0)",     "--dst",   "S(1)R",
      "--profile", "builtin", "--dry-run",  "--format", "json"};
  const std::vector<std::pair<std::vector<std::string>, int64_t>> sets = {
      {{}, 8}, {{"--src-ranks", "8,9", "--dst-ranks", "0,1,2,3,4,5,6,7"}, 10}};
  for (const auto& [ranks, participants] : sets) {
    Result r = Bench(With(fanout, ranks));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<json> lines = JsonLines(r);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    const int64_t most = lines[0]["receive_bound_max"].get<int64_t>();
    const int64_t total = lines[0]["receive_bound_total"].get<int64_t>();
    const int64_t bound = std::max(most, (total + participants - 1) / participants);
    EXPECT_LE(lines[0]["bytes_sent_max"]["native"].get<int64_t>() * 4, bound * 5) << lines[0];
  }
}

// With an alpha-beta profile every mode is priced, and the baseline, which
// sends the whole tensor through two ranks, is predicted slower.
TEST(BenchTest, CrossMeshModesArePricedByAnAlphaBetaProfile) {
  Result r = Bench(With(kCrossMesh, {"--repeat", "1", "--profile", g_formula_profile}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const json& l : lines) EXPECT_EQ(l["cost_model"], "alpha-beta") << l;
  EXPECT_LT(lines[0]["predicted_us"].get<double>(), lines[1]["predicted_us"].get<double>());
}

TEST(BenchTest, CrossMeshBadInputIsRefusedNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--modes", "native,pytorch"}, "--modes: pytorch mode plans on one mesh only"},
      {{"--processes"}, "--processes"},
      {{"--cost-model", "pytorch"}, "--cost-model"},
      {{"--max-ranks", "9"}, "--max-ranks"},
      {{"--dst-ranks", "8,8"}, "--dst-ranks"},
      {{"--src-ranks", "0,1"}, "--src-ranks"},
  };
  for (const auto& [extra, message] : cases) {
    Result r = Bench(With(kCrossMesh, extra));
    EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, message)) << extra[0] << ": " << r.err;
  }
  Result naive = Bench(
      {"--mesh", "2", "--shape", "4", "--src", "S(0)", "--dst", "R", "--modes", "native,naive"});
  EXPECT_EQ(naive.exit_code, 2) << naive.err;
  EXPECT_TRUE(absl::StrContains(naive.err, "--modes: naive is the cross-mesh baseline"))
      << naive.err;
}

// One mesh: --dry-run --format json counts each mode's busiest sender too.
TEST(BenchTest, DryRunJsonCountsEachModesBusiestSender) {
  Result r = Bench({"--mesh", "4", "--shape", "13,5", "--src", "S(0)", "--dst", "R", "--dry-run",
                    "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  // all_gather of padded 4 x 5 f32 chunks to 3 others (ExpectBothModesVerified).
  EXPECT_EQ(lines[0]["bytes_sent_max"]["native"], 3 * 4 * 5 * 4) << lines[0];
  EXPECT_EQ(lines[0]["bytes_sent_max"]["pytorch"], 3 * 4 * 5 * 4) << lines[0];
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_command_test <path to reshard> <alpha-beta profile>\n");
    return 2;
  }
  g_binary = argv[1];
  g_formula_profile = argv[2];
  return RUN_ALL_TESTS();
}
