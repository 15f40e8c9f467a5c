// `reshard costs` end to end: the N x N matrix equals planning each pair
// alone through `reshard batch`, entry for entry, bit for bit; bad layouts
// name their line; pairs over the search bound are null with a reason.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::Close;
using reshard::cli_test::JsonLines;
using reshard::cli_test::kPytorchCost;
using reshard::cli_test::kPytorchDst;
using reshard::cli_test::kPytorchSrc;
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;
using reshard::cli_test::WriteText;

// Every ordered pair of `layouts` as batch lines (graph planner), id [i, j],
// planned by `reshard batch`: its result lines.
std::vector<json> BatchPairs(const std::vector<std::string>& layouts, const json& mesh,
                             const json& shape, const std::string& mode) {
  std::string input;
  for (size_t i = 0; i < layouts.size(); ++i) {
    for (size_t j = 0; j < layouts.size(); ++j) {
      json line = {{"id", {i, j}},      {"mesh", mesh},      {"shape", shape},
                   {"src", layouts[i]}, {"dst", layouts[j]}, {"algorithm", "graph"}};
      if (!mode.empty()) line["mode"] = mode;
      absl::StrAppend(&input, line.dump(), "\n");
    }
  }
  return JsonLines(RunReshard({"batch"}, input).out);
}

std::string LayoutFile(const std::string& name, const std::vector<std::string>& layouts) {
  std::string text;
  for (const std::string& l : layouts) absl::StrAppend(&text, l, "\n");
  const std::string path = TempPath(name);
  WriteText(path, text);
  return path;
}

// Ops sum, avg and max: pytorch rows search the graph of all of them first
// (spec §5.1 item 6).
TEST(CostsCommandTest, MatrixEqualsBatchPairByPairInBothModes) {
  const std::vector<std::string> layouts = {
      kPytorchSrc, kPytorchDst, "RRR", "P(sum)S(1)R", "S(0)[1]S(0)[0]P(avg)", "RP(max)S(2)"};
  const std::string file = LayoutFile("layouts.txt", layouts);
  for (const std::string mode : {"pytorch", "native"}) {
    const std::vector<json> pairs = BatchPairs(layouts, {2, 2, 2}, {8, 8, 8}, mode);
    Result r = RunReshard({"costs", "--mesh", "2,2,2", "--shape", "8,8,8", "--layouts", file,
                           "--threads", "2", "--mode", mode});
    ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
    const std::vector<json> rows = JsonLines(r.out);
    ASSERT_EQ(rows.size(), 6u) << r.out;
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i]["src"], i) << rows[i];
    ASSERT_EQ(pairs.size(), 36u);
    for (const json& p : pairs) {
      const size_t i = p["id"][0], j = p["id"][1];
      EXPECT_EQ(rows[i]["costs"][j], p["ok"] == true ? p["cost"] : json()) << mode << " " << p;
    }
    if (mode == "pytorch") {
      EXPECT_TRUE(Close(rows[0]["costs"][1].get<double>(), kPytorchCost)) << rows[0];
    }
  }
}

// Native: targets with the same Partial ops share a graph but not their goal
// edges (spec §5.2 item 6); each entry still equals batch, bit for bit.
TEST(CostsCommandTest, NativeTargetsAlikeInShardOrdersEqualBatch) {
  const std::vector<std::string> layouts = {"S(1)RRR", "RP(sum)RR", "RRP(sum)R", "RRRP(sum)"};
  const std::string file = LayoutFile("layouts4.txt", layouts);
  const std::vector<json> pairs = BatchPairs(layouts, {2, 2, 2, 2}, {1024, 4096}, "");
  Result r = RunReshard({"costs", "--mesh", "2,2,2,2", "--shape", "1024,4096", "--layouts", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> rows = JsonLines(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  ASSERT_EQ(pairs.size(), 16u);
  for (const json& p : pairs) {
    const size_t i = p["id"][0], j = p["id"][1];
    EXPECT_EQ(p["ok"], true) << p;
    EXPECT_EQ(rows[i]["costs"][j], p["cost"]) << p;
  }
}

TEST(CostsCommandTest, BadLayoutsAndUnreadableFilesAreBadInput) {
  const std::string bad = LayoutFile("bad-layouts.txt", {"RRR", "S(0)Q"});
  Result line = RunReshard({"costs", "--mesh", "2,2,2", "--shape", "8,8,8", "--layouts", bad});
  EXPECT_EQ(line.exit_code, 2) << line.err;
  EXPECT_TRUE(absl::StrContains(line.err, "line 2")) << line.err;
  Result zero = RunReshard({"costs", "--mesh", "2", "--shape", "8", "--layouts", "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_TRUE(absl::StrContains(zero.err, "not a regular file")) << zero.err;
  Result help = RunReshard({"costs", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_TRUE(absl::StrContains(help.out, "--layouts")) << help.out;
  EXPECT_TRUE(absl::StrContains(help.out, "--threads")) << help.out;
}

// Issue 19: pairs over --max-edges are null with a reason, the rest printed
// (exit 3); more layouts than --max-pairs allows is refused before planning.
TEST(CostsCommandTest, PairsOverTheSearchBoundAreNullWithAReason) {
  const std::string file = LayoutFile("layouts3.txt", {"S(0)R", "RR", "PP"});
  Result r = RunReshard(
      {"costs", "--mesh", "2,2", "--shape", "8", "--layouts", file, "--max-edges", "10"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::vector<json> rows = JsonLines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  std::set<std::pair<size_t, size_t>> nulls, errors;
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i]["costs"].size(), 3u) << rows[i];
    for (size_t j = 0; j < 3; ++j) {
      if (rows[i]["costs"][j].is_null()) nulls.insert({i, j});
    }
    for (const json& e : rows[i].value("errors", json::array())) {
      errors.insert({i, e["dst"].get<size_t>()});
      EXPECT_EQ(e["limit"], "max_search_edges") << e;
    }
  }
  EXPECT_FALSE(nulls.empty()) << r.out;
  EXPECT_EQ(nulls, errors) << r.out;     // each null has its reason, and only nulls have one
  EXPECT_LT(nulls.size(), 6u) << r.out;  // the rest still printed
  EXPECT_TRUE(absl::StrContains(r.err, "pairs have no cost")) << r.err;
  Result pairs =
      RunReshard({"costs", "--mesh", "2,2", "--shape", "8", "--layouts", file, "--max-pairs", "4"});
  EXPECT_EQ(pairs.exit_code, 2) << pairs.err;
  EXPECT_TRUE(absl::StrContains(pairs.err, "more than 2 layouts")) << pairs.err;
  EXPECT_EQ(pairs.out, "");
}

}  // namespace
