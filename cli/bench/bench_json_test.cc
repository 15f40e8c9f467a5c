// `reshard bench` end to end: both modes run on the same data and verified
// with the JSON keys promised, the cross-mesh move against the naive
// baseline, exit 3 for a plan that cannot run, and --dry-run allocating
// nothing.

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/bench/bench_json_keys.h"
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using reshard::cli_test::kBenchKeys;
using reshard::cli_test::kCrossMeshBenchKeys;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::JsonLines;
using reshard::cli_test::RunReshard;

// The keys of each line's object (and of its measured_us) in the order
// printed; json sorts them.
std::vector<std::vector<std::string>> KeysInOrder(const std::string& out, const char* inner = "") {
  std::vector<std::vector<std::string>> keys;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipWhitespace())) {
    nlohmann::ordered_json object = nlohmann::ordered_json::parse(line);
    if (*inner != '\0') object = object[inner];
    keys.emplace_back();
    for (const auto& item : object.items()) keys.back().push_back(item.key());
  }
  return keys;
}

// 64 x 64 f32 from S(0)S(1) to S(1)S(0) on 4x2: rank (2, 0) holds rows 32-47,
// columns 0-31 and wants rows 0-31, columns 32-47, none of which it holds: it
// must receive all 32 x 16 f32 (2048 bytes), the most of any rank, whatever
// the plan.
TEST(BenchJsonTest, BothModesVerifiedWithThePromisedKeys) {
  Result r = RunReshard({"bench", "--mesh", "4,2", "--shape", "64,64", "--src", "S(0)S(1)", "--dst",
                         "S(1)S(0)", "--repeat", "2", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["mode"], "native");
  EXPECT_EQ(lines[1]["mode"], "pytorch");
  for (const std::vector<std::string>& got : KeysInOrder(r.out)) {
    EXPECT_EQ(got, kBenchKeys) << r.out;
  }
  for (const std::vector<std::string>& got : KeysInOrder(r.out, "measured_us")) {
    EXPECT_EQ(got, (std::vector<std::string>{"median", "min", "max", "rounds"})) << r.out;
  }
  for (const json& l : lines) {
    EXPECT_EQ(l["verified"], true) << l;
    EXPECT_EQ(l["measured_us"]["rounds"].size(), 2u) << l;
    EXPECT_GT(l["predicted_us"].get<double>(), 0) << l;
    EXPECT_LE(std::abs(l["native_model_cost"].get<double>() - l["predicted_us"].get<double>()),
              0.05)
        << l;
    EXPECT_EQ(l["receive_lower_bound_max"], 2048) << l;
  }
  EXPECT_TRUE(lines[0]["cost_model"] == "measured" || lines[0]["cost_model"] == "alpha-beta")
      << lines[0];
  EXPECT_TRUE(lines[0]["profile"].is_string() && !lines[0]["profile"].get<std::string>().empty())
      << lines[0];
  EXPECT_EQ(lines[1]["cost_model"], "pytorch") << lines[1];
  EXPECT_TRUE(lines[1]["profile"].is_null()) << lines[1];
  EXPECT_LE(lines[0]["peak_bytes_max"].get<int64_t>(), lines[1]["peak_bytes_max"].get<int64_t>());
}

// 64 x 64 f32 from 4x2 ranks 0-7 to 2 ranks 8-9: each inference rank must
// receive its 64 x 32 half (8192 bytes); native's busiest sender sends its
// 16 x 32 block once (2048), naive's source root the whole tensor (16384).
TEST(BenchJsonTest, CrossMeshNativeAgainstNaiveBothVerified) {
  Result r = RunReshard({"bench", "--mesh", "4,2", "--dst-mesh", "2", "--dst-ranks", "8,9",
                         "--shape", "64,64", "--src", "S(0)S(1)", "--dst", "S(1)", "--repeat", "1",
                         "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["mode"], "native");
  EXPECT_EQ(lines[1]["mode"], "naive");
  for (const std::vector<std::string>& got : KeysInOrder(r.out)) {
    EXPECT_EQ(got, kCrossMeshBenchKeys) << r.out;
  }
  for (const json& l : lines) {
    EXPECT_EQ(l["verified"], true) << l;
    EXPECT_EQ(l["cross_mesh"], true) << l;
    EXPECT_EQ(l["participants"], 10) << l;
    EXPECT_EQ(l["measured_us"]["rounds"].size(), 1u) << l;
    EXPECT_EQ(l["receive_lower_bound_max"], 8192) << l;
  }
  EXPECT_EQ(lines[0]["bytes_sent_max"], 2048) << lines[0];
  EXPECT_EQ(lines[1]["bytes_sent_max"], 16384) << lines[1];
}

// One rule for a plan that cannot run (R->P(prod) has no exact split):
// verify skips it with 3, and bench exits 3 too (it was 1, issue 20).
// --dry-run allocates nothing: a shape far over --max-memory still plans.
TEST(BenchJsonTest, UnrunnablePlanIsThreeAndDryRunAllocatesNothing) {
  Result prod = RunReshard(
      {"bench", "--mesh", "2", "--shape", "4", "--src", "R", "--dst", "P(prod)", "--repeat", "1"});
  EXPECT_EQ(prod.exit_code, 3) << prod.err;
  EXPECT_TRUE(absl::StrContains(prod.err, "needs R->P(prod)")) << prod.err;
  EXPECT_EQ(prod.out, "");
  Result dry = RunReshard({"bench", "--mesh", "2", "--shape", "100000,100000,100", "--src", "R",
                           "--dst", "S(0)", "--max-memory", "1M", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(absl::StrContains(dry.out, "native trace: R->S(0)")) << dry.out;
}

}  // namespace
