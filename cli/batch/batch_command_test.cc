// `reshard batch` end to end: one JSON result line per request line, in
// order, bad lines answered as errors without stopping the batch.

#include <poll.h>
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
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace {

using json = nlohmann::json;
using Result = reshard::test_util::CommandResult;
using reshard::cli_test::Close;
using reshard::cli_test::GoldenCase;
using reshard::cli_test::JsonLines;
using reshard::cli_test::kPytorchCost;
using reshard::cli_test::kPytorchDst;
using reshard::cli_test::kPytorchSrc;
using reshard::cli_test::kPytorchTrace;
using reshard::cli_test::RunReshard;
using reshard::cli_test::TempPath;
using reshard::cli_test::WriteText;

// A malformed line's error quotes where the JSON parser stopped: a line
// that is one long broken key gets a short message (it was the whole 5 KB
// key), as valid JSON.
TEST(BatchCommandTest, BatchErrorsOnLongMalformedLinesStayShort) {
  Result r = RunReshard({"batch"}, reshard::test_util::JsonWithALongBrokenKey() + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(r.out);
  EXPECT_EQ(result["ok"], false);
  const std::string error = result["error"];
  EXPECT_TRUE(absl::StrContains(error, "malformed JSON")) << error;
  EXPECT_LE(error.size(), 400u) << error;
}

TEST(BatchCommandTest, BatchAnswersEveryLineInOrder) {
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
TEST(BatchCommandTest, BatchNumberOverflowIsOneBadLine) {
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

TEST(BatchCommandTest, BigIdsAreNotEchoedWithOtherDigits) {
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

// Issue 44: an empty mode is not "auto", a NUL byte ends no line early, and a
// huge float id is refused saying what ids may be; each is one bad line.
TEST(BatchCommandTest, EmptyModeNulAndHugeFloatIdAreBadLines) {
  const std::string tail = "\"mesh\": [2], \"shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\"}";
  std::string input = absl::StrCat("{\"mode\": \"\", ", tail, "\n{", tail, std::string(1, '\0'),
                                   "x\n{\"id\": 1.79e308, ", tail, "\n{", tail, "\n");
  Result r = RunReshard({"batch"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;
  const char* expected[] = {"mode: empty", "malformed JSON: a NUL byte", "id: "};
  for (int i = 0; i < 3; ++i) {
    json bad = json::parse(lines[i]);
    EXPECT_EQ(bad["ok"], false) << lines[i];
    EXPECT_TRUE(absl::StartsWith(bad["error"].get<std::string>(), expected[i])) << lines[i];
  }
  EXPECT_TRUE(absl::StrContains(lines[2], "at most 64 bits")) << lines[2];
  EXPECT_FALSE(absl::StrContains(lines[2], "integer too large")) << lines[2];
  EXPECT_EQ(json::parse(lines[3])["ok"], true) << lines[3];
}

// The batch key: the profile's parameters change the cost; a bad file is one
// bad line.
TEST(BatchCommandTest, BatchReadsTheProfileKey) {
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

TEST(BatchCommandTest, BatchPlansCrossMeshLinesAndNamesTheirKeys) {
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

// Results in input order; a malformed line and a request the greedy planner
// cannot do (S -> P) give ok: false and the batch goes on; the graph planner
// does S -> P through R. Costs are the oracle's (spec §5, §6, §8).
TEST(BatchCommandTest, SixLinesAnsweredInOrderWithTheOraclesCosts) {
  const std::string input = absl::StrCat(
      R"j({"id": "a", "mesh": [2, 2, 2], "shape": [8, 8, 8], "dtype": "f32", "src": ")j",
      kPytorchSrc, R"j(", "dst": ")j", kPytorchDst, R"j(", "mode": "pytorch"})j", "\n",
      R"j({"id": "b", "mesh": [4], "shape": [13, 8], "src": "S(0)", "dst": "R", "mode": "pytorch"})j"
      "\n"
      R"j({"id": "c", "mesh": [4], "shape": [8], "src": "S(0)", "dst":)j"
      "\n"
      R"j({"id": "d", "mesh": [4], "shape": [8], "src": "S(0)", "dst": "P(sum)", "algorithm": "greedy", "mode": "pytorch"})j"
      "\n"
      R"j({"id": "e", "mesh": [2, 2], "shape": [8, 8], "src": "P(sum)R", "dst": "S(0)S(1)", "cost_model": "pytorch"})j"
      "\n"
      R"j({"id": "f", "mesh": [4], "shape": [8], "src": "S(0)", "dst": "P(sum)", "algorithm": "graph", "mode": "pytorch"})j"
      "\n");
  Result r = RunReshard({"batch"}, input);
  const std::vector<json> rs = JsonLines(r.out);
  ASSERT_EQ(rs.size(), 6u) << r.out;
  std::vector<json> ids;
  for (const json& x : rs) ids.push_back(x.value("id", json()));
  EXPECT_EQ(ids[0], "a");
  EXPECT_EQ(ids[1], "b");
  EXPECT_EQ(ids[3], "d");
  EXPECT_EQ(ids[4], "e");
  EXPECT_EQ(ids[5], "f");
  const std::vector<bool> want_ok = {true, true, false, false, true, true};
  for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(rs[i]["ok"], want_ok[i]) << rs[i];
  EXPECT_EQ(rs[0]["trace"], kPytorchTrace) << rs[0];
  EXPECT_TRUE(Close(rs[0]["cost"].get<double>(), kPytorchCost)) << rs[0];
  EXPECT_EQ(rs[1]["trace"], "S(0)->R") << rs[1];
  EXPECT_EQ(rs[1]["algorithm"], "greedy") << rs[1];
  EXPECT_TRUE(Close(rs[1]["cost"].get<double>(), 8.403313257049941)) << rs[1];
  EXPECT_FALSE(rs[2].value("error", std::string()).empty()) << rs[2];
  EXPECT_FALSE(rs[3].value("error", std::string()).empty()) << rs[3];
  EXPECT_EQ(rs[4]["trace"], "P(sum)R->S(0)R->S(0)S(1)") << rs[4];
  EXPECT_TRUE(Close(rs[4]["cost"].get<double>(), 7.201359284943566)) << rs[4];
  std::vector<std::string> collectives;
  for (const json& s : rs[4]["steps"]) collectives.push_back(s["collective"]);
  EXPECT_EQ(collectives, (std::vector<std::string>{"reduce_scatter", "chunk"})) << rs[4];
  EXPECT_EQ(rs[5]["trace"], "S(0)->R->P(sum)") << rs[5];
  EXPECT_EQ(rs[5]["algorithm"], "graph") << rs[5];
  EXPECT_TRUE(Close(rs[5]["cost"].get<double>(), 8.400254865926918)) << rs[5];
}

// Issue 19: a 3 MB line is an error result (read no further than the limit)
// and the next line is planned.
TEST(BatchCommandTest, ThreeMegabyteLineIsAnErrorAndTheNextIsPlanned) {
  const std::string input =
      absl::StrCat(R"j({"id": 1, "src": ")j", std::string(3000000, 'R'), "\"}\n",
                   R"j({"id": 2, "mesh": [2], "shape": [8], "src": "S(0)", "dst": "R"})j", "\n");
  Result r = RunReshard({"batch"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out.substr(0, 300);
  EXPECT_TRUE(absl::StrContains(lines[0]["error"].get<std::string>(), "longer than")) << lines[0];
  EXPECT_EQ(lines[1]["ok"], true) << lines[1];
}

// Issue 9, item 1: a number beyond double's range ([1e400]) aborted the
// batch and lost the results not yet flushed; now it is one bad line.
// Issue 44: a batch whose later line crashed or was killed lost the results
// of the lines before it (they sat in stdout's buffer). Each result is now
// flushed before the next line is planned: with stdout a pipe, the first
// answer arrives while the second line has not even been sent.
TEST(BatchCommandTest, BatchFlushesEachResultBeforeTheNextLine) {
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    execl(reshard::cli_test::ReshardBinary().c_str(), reshard::cli_test::ReshardBinary().c_str(),
          "batch", static_cast<char*>(nullptr));
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

}  // namespace
